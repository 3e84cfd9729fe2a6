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


class Predicting:
    """A stand-in with ``Scorer.predict``'s interface (rows ``text_id, text, rank, word, logprob, prob, n_tokens,
    tokens``), for the R side of pll_predict where pllscore has no ``predict``."""

    kind = "causal"
    name = "stand-in"

    def predict(self, texts, k=10, word_tokens=3, candidates=None, level="word"):
        import math

        import pandas as pd

        rows = [
            {"text_id": i, "text": t, "rank": r + 1, "word": f"w{r}", "logprob": -1.5 * (r + 1),
             "prob": math.exp(-1.5 * (r + 1)), "n_tokens": 1 + r % word_tokens, "tokens": [f"t{r}"] * (1 + r % word_tokens)}
            for i, t in enumerate(texts)
            for r in range(k)
        ]  # fmt: skip
        return pd.DataFrame(rows)
