"""Minimal pairs: score each distinct sentence once per metric; a pair is right when good > bad.

A sentence with no scored token has no score (NaN); a pair with a NaN on either side is
counted wrong and counted as unscored (``n_unscored`` in the accuracy tables).

In: (good, bad) sentence columns of a table and one or more scorers.
Out: one row per (pair, model, metric) with both scores and ``correct``; accuracies by group.
With normalised scores (``norms``, :data:`pllscore.results.norms.NORMS`), each norm other than
``sum`` adds ``good_<norm>``, ``bad_<norm>`` and ``correct_<norm>`` (good's normalised score
higher, strictly), and the accuracy tables an ``accuracy_<norm>`` column.
Nothing here knows about BLiMP.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pllscore.errors import NonFiniteError

__all__ = ["accuracy", "norm_columns", "score_pairs"]


def score_pairs(
    scorer: Any,
    pairs: Any,
    *,
    good: str = "sentence_good",
    bad: str = "sentence_bad",
    metrics: str | Sequence[str] | None = None,
    progress: bool | None = None,
    norms: str | Sequence[str] | None = None,
    unigram: Any = None,
    convention: str = "paper",
) -> Any:
    """Score a table of minimal pairs with one model.

    Args:
        scorer: a loaded :class:`~pllscore.MaskedScorer` or :class:`~pllscore.CausalScorer`.
        pairs: a DataFrame with a good and a bad sentence per row (other columns are kept).
        good, bad: the names of those two columns.
        metrics: masked-LM metric(s) or ``"all"`` (default: the scorer's); ignored for causal LMs.
        progress: progress bar (None: only on a terminal).
        norms: normalisations (``sum`` is always there); ``slor`` and ``norm-lp`` need ``unigram``
            (a :mod:`pllscore.results.unigram` model for this scorer's tokens).
        convention: ``"paper"`` (default: each sentence as given) or ``"lm-eval"`` (as
            lm-evaluation-harness scores it: the continuation ``" " + sentence`` of an empty context).

    Returns:
        A DataFrame: the pair columns, then ``model``, ``metric``, ``good_score``, ``bad_score``
        (summed log-probabilities, nats; NaN when a sentence had no scored token) and ``correct``
        (good > bad strictly; a tie, or a NaN on either side, is wrong); then per norm other than
        ``sum``: ``good_<norm>``, ``bad_<norm>``, ``correct_<norm>``.
    """
    import pandas as pd

    from pllscore.results.norms import check_norms, norm_values

    extra = [n for n in check_norms(norms, unigram) if n != "sum"]
    sentences = list(dict.fromkeys([*pairs[good].tolist(), *pairs[bad].tolist()]))
    where = {s: i for i, s in enumerate(sentences)}
    try:
        # the default is left unsaid, so that a scorer-like object without the option still works
        given = {} if convention == "paper" else {"convention": convention}
        if scorer.kind == "causal":
            results = scorer.score(sentences, progress=progress, **given)
        else:
            results = scorer.score(sentences, metric=metrics, progress=progress, **given)
    except NonFiniteError as e:  # its index is into the distinct sentences: name the sentence instead
        where = f"{scorer.name}: sentence {sentences[e.index]!r:.80}"
        raise NonFiniteError(e.index, e.value, e.dtype, where=where) from None
    gi = np.array([where[s] for s in pairs[good]], dtype=np.int64)
    bi = np.array([where[s] for s in pairs[bad]], dtype=np.int64)
    frames = []
    for metric in results.metrics:
        totals = results.for_metric(metric).totals
        block = pairs.reset_index(drop=True).copy()
        block["model"] = scorer.name
        block["metric"] = metric
        block["good_score"] = totals[gi]
        block["bad_score"] = totals[bi]
        unscored = np.isnan(block["good_score"].to_numpy()) | np.isnan(block["bad_score"].to_numpy())
        block["correct"] = (block["good_score"] > block["bad_score"]) & ~unscored
        if extra:
            values = [norm_values(r, extra, unigram) for r in results.for_metric(metric)]
            for n in extra:
                per_sentence = np.array([v[n] for v in values], dtype=np.float64)
                g, b = per_sentence[gi], per_sentence[bi]
                block[f"good_{n}"], block[f"bad_{n}"] = g, b
                block[f"correct_{n}"] = (g > b) & ~(np.isnan(g) | np.isnan(b))
        frames.append(block)
    return pd.concat(frames, ignore_index=True)


def accuracy(scored: Any, by: Sequence[str]) -> Any:
    """Share of correct pairs per group of ``by`` columns (plus model and metric), with counts.

    Columns: the keys (``model``, ``model_id`` when present, ``metric``, ``by``), ``accuracy``,
    ``n`` (pairs) and ``n_unscored`` (pairs with a NaN score on either side, counted wrong), then
    ``accuracy_<norm>`` for each ``correct_<norm>`` column of ``scored``.
    """
    keys = ["model", *(["model_id"] if "model_id" in scored.columns else []), "metric", *by]
    frame = scored.assign(_unscored=scored["good_score"].isna() | scored["bad_score"].isna())
    grouped = frame.groupby(keys, sort=False)
    out = grouped["correct"].agg(accuracy="mean", n="size")
    out["n_unscored"] = grouped["_unscored"].sum().astype("int64")
    for col in norm_columns(scored):
        out[f"accuracy_{col}"] = grouped[f"correct_{col}"].mean()
    return out.reset_index()


def norm_columns(frame: Any) -> list[str]:
    """The norms (other than ``sum``) whose ``correct_<norm>``/``accuracy_<norm>`` columns ``frame`` has, in order."""
    from pllscore.results.norms import NORMS

    cols = set(frame.columns)
    return [n for n in NORMS if f"correct_{n}" in cols or f"accuracy_{n}" in cols]
