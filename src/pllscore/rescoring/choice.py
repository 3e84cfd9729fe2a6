"""The combined score and the choice per utterance: pure numpy on a scored table, no model.

In: a table with the first-pass score, ``lm_logprob`` and ``n_tokens``. Out: a copy with ``combined``
(:func:`combine`) and ``chosen``, one True per utterance (:func:`choose`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["best_per_group", "choose", "combine", "combined_score", "utterance_codes"]


def combine(
    frame: Any,
    lam: float,
    beta: float,
    *,
    score_column: str = "score",
    lm_column: str = "lm_logprob",
    n_tokens_column: str = "n_tokens",
    out: str = "combined",
) -> Any:
    """A copy of ``frame`` with ``out = first_pass + lam * lm_logprob + beta * n_tokens``."""
    frame = frame.copy()
    frame[out] = combined_score(
        frame[score_column].to_numpy(np.float64),
        frame[lm_column].to_numpy(np.float64),
        frame[n_tokens_column].to_numpy(np.float64),
        lam,
        beta,
    )
    return frame


def combined_score(score: Any, lm: Any, n: Any, lam: float, beta: float) -> Any:
    """``score + lam * lm + beta * n`` on arrays: the one formula of :func:`combine` and the tuning grid."""
    return score + lam * lm + beta * n  # one formula for combine and tune, so both choose alike


def best_per_group(codes: Any, values: Any) -> Any:
    """Per group code (0..k-1), the position of its highest value; ties go to the earliest, NaN is lowest."""
    v = np.where(np.isnan(values), -np.inf, values)
    order = np.lexsort((np.arange(len(v)), -v, codes))
    first = np.ones(len(order), dtype=bool)
    first[1:] = codes[order][1:] != codes[order][:-1]
    return order[first]  # in code order: utterances in order of first appearance


def utterance_codes(frame: Any, utt_column: str) -> Any:
    """Per row, its utterance as a code 0..k-1, in order of first appearance."""
    import pandas as pd

    codes, _ = pd.factorize(frame[utt_column], sort=False)
    return codes


def choose(frame: Any, *, by: str = "combined", utt_column: str = "utt_id", out: str = "chosen") -> Any:
    """A copy of ``frame`` with ``out``: True for the row with the highest ``by`` of each utterance.

    Ties go to the first row in input order; a NaN score is lower than any number (an utterance
    whose scores are all NaN gets its first row).
    """
    frame = frame.copy()
    chosen = np.zeros(len(frame), dtype=bool)
    chosen[best_per_group(utterance_codes(frame, utt_column), frame[by].to_numpy(np.float64))] = True
    frame[out] = chosen
    return frame
