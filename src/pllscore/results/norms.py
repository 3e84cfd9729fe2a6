"""Sentence-score normalisations: (:data:`NORMS`, :meth:`SentenceScore.normalised`, ``norm=`` of
:func:`to_frame` and :func:`to_wide_frame`):

* ``sum``: the total (the (pseudo-)log-likelihood itself).
* ``mean``: total / number of scored tokens; corrects for length.
* ``per-char``: total / number of characters of the text, ``len(text)``: every character
  (code point) counts, spaces and punctuation included; corrects for length independently of
  the tokenizer.
* ``slor``: (total − log P_unigram) / number of scored tokens, the syntactic log-odds ratio of
  Lau, Clark & Lappin (2017): SLOR = (log P_m(s) − log P_u(s)) / |s|, with |s| the number of
  scored tokens (also with the word-level wordfreq unigram); corrects for length and for the
  frequency of the words used.
* ``norm-lp``: total / (−log P_unigram), Lau, Clark & Lappin's NormLP (Div),
  −log P_m(s) / log P_u(s) = log P_m(s) / (−log P_u(s)): negative like a log-probability,
  higher (nearer 0) is more acceptable; a ratio of two logarithms, so the same in nats and bits.

log P_unigram (nats) comes from a unigram model (:mod:`pllscore.results.unigram`) over the same scored
tokens. Like every number of a view, normalised scores follow its unit (``slor``, ``mean`` and
``per-char`` are in nats or bits per unit) and are negated under ``surprisal=True``. A norm over
nothing (no scored token) is NaN.

This module sits below :mod:`pllscore.results.scores` (whose :meth:`SentenceScore.normalised` uses it), so it
reads a score through the :class:`Scored` protocol instead of importing the class.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

__all__ = [
    "NORMS",
    "UNIGRAM_NORMS",
    "Scored",
    "check_norms",
    "norm_columns",
    "norm_values",
    "sum_scored",
    "unigram_norm",
]

#: the sentence-score normalisations; ``slor`` and ``norm-lp`` need a unigram model
NORMS = ("sum", "mean", "per-char", "slor", "norm-lp")
#: the norms that need unigram log-probabilities
UNIGRAM_NORMS = ("slor", "norm-lp")


class Scored(Protocol):
    """What a norm reads of a score: the parts of a :class:`~pllscore.results.scores.SentenceScore` it uses."""

    @property
    def logprobs(self) -> np.ndarray: ...
    @property
    def base(self) -> float: ...
    @property
    def surprisal(self) -> bool: ...
    @property
    def n_scored(self) -> int: ...
    def normalised(self, norm: str, unigram: Any = None) -> float: ...


def check_norms(norms: str | Sequence[str] | None, unigram: Any = None) -> tuple[str, ...]:
    """The norms asked for, checked and without repeats (None: ``("sum",)``).

    Raises :class:`~pllscore.InputError` for an unknown norm, or for ``slor``/``norm-lp`` without a unigram model.
    """
    from pllscore.errors import InputError

    if norms is None:
        return ("sum",)
    asked = [norms] if isinstance(norms, str) else list(norms)
    out = []
    for n in asked:
        name = str(n).strip().lower().replace("_", "-")
        name = {"per-character": "per-char", "normlp": "norm-lp", "total": "sum"}.get(name, name)
        if name not in NORMS:
            raise InputError(f"unknown norm {n!r}; choose from {', '.join(NORMS)}")
        if name in UNIGRAM_NORMS and unigram is None:
            raise InputError(
                f"norm {name} needs unigram log-probabilities: give a table of token counts (--unigram FILE), "
                "a corpus to count (--unigram-corpus FILE) or --unigram wordfreq"
            )
        out.append(name)
    return tuple(dict.fromkeys(out)) or ("sum",)


def norm_values(r: Scored, norms: Sequence[str], unigram: Any = None) -> dict[str, float]:
    """norm -> normalised total of ``r`` (the unigram log-probability is computed once)."""
    out: dict[str, float] = {}
    u: float | None = None
    for norm in norms:
        if norm in UNIGRAM_NORMS:
            if u is None:
                u = unigram.logprob(r)
            out[norm] = unigram_norm(r, norm, u)
        else:
            out[norm] = r.normalised(norm)
    return out


def unigram_norm(r: Scored, norm: str, u: float) -> float:
    """SLOR or NormLP of ``r`` from its unigram log-probability ``u`` (nats), in the view's unit and sign."""
    total = sum_scored(r.logprobs)  # nats
    sign = -1.0 if r.surprisal else 1.0
    if math.isnan(total) or math.isnan(u):
        return math.nan
    if norm == "slor":
        return sign * (total - u) / math.log(r.base) / r.n_scored
    return sign * total / -u if u != 0 else math.nan  # norm-lp: a ratio of logs, the same in any base


def norm_columns(norms: Sequence[str] | None, unigram: Any, level: str) -> tuple[str, ...]:
    """The norms that add columns (``sum`` and ``mean`` are always there); only at sentence level."""
    from pllscore.errors import InputError

    chosen = check_norms(norms, unigram)
    extra = tuple(n for n in chosen if n not in ("sum", "mean"))
    if extra and level != "sentence":
        raise InputError(f"norms ({', '.join(extra)}) are sentence scores; use level sentence")
    return extra


def sum_scored(values: np.ndarray) -> float:
    """Sum of the non-NaN values; NaN (not 0) when there are none.

    ``np.nansum`` written out (NaN replaced by 0, then the same ``np.sum``), the same number to the bit, with
    one NaN test instead of three and no copy when nothing is NaN.
    """
    nan = np.isnan(values)
    if nan.all():
        return math.nan
    return float(np.sum(np.where(nan, 0.0, values) if nan.any() else values, dtype=np.float64))
