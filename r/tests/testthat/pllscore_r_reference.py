"""The Python API's own numbers for the R tests, read in plain lists (reticulate converts neither pandas nor numpy)."""

import math


def totals(results):
    return [float(r.total) for r in results]


def words(results):
    return [[float(w.score) for w in r.words] for r in results]


def column(frame, name):
    return [None if isinstance(v, float) and math.isnan(v) else v for v in frame[name].tolist()]


def names(frame):
    return [str(c) for c in frame.columns]


def dtypes(frame):
    return [str(t) for t in frame.dtypes]


def same(a, b):
    return a is b
