"""Minimal pairs: score each distinct sentence once per metric; a pair is right when good > bad.

A sentence with no scored token has no score (NaN); a pair with a NaN on either side is
counted wrong and counted as unscored (``n_unscored`` in the accuracy tables).

In: (good, bad) sentence columns of a table and one or more scorers.
Out: one row per (pair, model, metric) with both scores and ``correct``; accuracies by group.
With normalised scores (``norms``, :data:`pllscore.results.norms.NORMS`), each norm other than
``sum`` adds ``good_<norm>``, ``bad_<norm>`` and ``correct_<norm>`` (good's normalised score
higher, strictly), and the accuracy tables an ``accuracy_<norm>`` column.
Each model scores its distinct sentences through the table job of ``pllscore score``
(:class:`pllscore.jobs.table.TableJob`): the same metrics, unigram model, norms and convention.
Nothing here knows about BLiMP.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pllscore.errors import NonFiniteError
from pllscore.results.columns import column_part

__all__ = ["accuracy", "norm_columns", "pair_norms", "pairs_tables", "score_pairs"]


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
    prepared: Any = None,
) -> Any:
    """Score a table of minimal pairs with one model.

    Args:
        scorer: a loaded :class:`~pllscore.MaskedScorer` or :class:`~pllscore.CausalScorer`.
        pairs: a DataFrame with a good and a bad sentence per row (other columns are kept).
        good, bad: the names of those two columns.
        metrics: masked-LM metric(s) or ``"all"`` (default: the scorer's); ignored for causal LMs.
        progress: a progress bar on stderr (None: only when stderr is a terminal).
        norms: normalisations (``sum`` is always there); ``slor`` and ``norm-lp`` need ``unigram``
            (a :mod:`pllscore.results.unigram` model for this scorer's tokens).
        convention: ``"paper"`` (default: each sentence as given) or ``"lm-eval"`` (as
            lm-evaluation-harness scores it: the continuation ``" " + sentence`` of an empty context).
        prepared: the :class:`~pllscore.jobs.table.Prepared` options of ``scorer`` instead of ``metrics``,
            ``norms``, ``unigram`` and ``convention`` (what :func:`pllscore.eval.runs.run_blimp` passes).

    Returns:
        A DataFrame: the pair columns, then ``model``, ``metric``, ``good_logprob``, ``bad_logprob``
        (summed log-probabilities, nats; NaN when a sentence had no scored token) and ``correct``
        (good > bad strictly; a tie, or a NaN on either side, is wrong); then per norm other than
        ``sum`` (written ``per_char``, ``norm_lp`` in names): ``good_logprob_<norm>``, ``bad_logprob_<norm>``,
        ``correct_<norm>``.
    """
    import pandas as pd

    from pllscore.results.norms import norm_values

    if prepared is None:
        from pllscore.eval.settings import EvalSettings

        given = EvalSettings.merge(
            metrics=metrics, norm=norms, unigram=unigram, convention=convention, what="score_pairs"
        )
        prepared = given.prepare(scorer)
    extra = pair_norms(prepared)
    sentences = list(dict.fromkeys([*pairs[good].tolist(), *pairs[bad].tolist()]))
    results = _score(prepared, sentences, progress)
    where = {s: i for i, s in enumerate(sentences)}
    gi = np.array([where[s] for s in pairs[good]], dtype=np.int64)
    bi = np.array([where[s] for s in pairs[bad]], dtype=np.int64)
    frames = []
    for metric in results.metrics:
        totals = results.for_metric(metric).totals
        block = pairs.reset_index(drop=True).copy()
        block["model"] = scorer.name
        block["metric"] = metric
        block["good_logprob"] = totals[gi]
        block["bad_logprob"] = totals[bi]
        unscored = np.isnan(block["good_logprob"].to_numpy()) | np.isnan(block["bad_logprob"].to_numpy())
        block["correct"] = (block["good_logprob"] > block["bad_logprob"]) & ~unscored
        if extra:
            values = [norm_values(r, extra, prepared.unigram) for r in results.for_metric(metric)]
            for n in extra:
                per_sentence = np.array([v[n] for v in values], dtype=np.float64)
                g, b = per_sentence[gi], per_sentence[bi]
                name = column_part(n)
                block[f"good_logprob_{name}"], block[f"bad_logprob_{name}"] = g, b
                block[f"correct_{name}"] = (g > b) & ~(np.isnan(g) | np.isnan(b))
        frames.append(block)
    return pd.concat(frames, ignore_index=True)


def pair_norms(prepared: Any) -> tuple[str, ...]:
    """The norms other than ``sum`` that pairs are also counted by (``mean`` too: a table always writes it,
    a pair table only when asked), as :meth:`~pllscore.jobs.table.ScoreOptions.prepare` checked them."""
    from pllscore.results.norms import check_norms

    return tuple(n for n in check_norms(prepared.options.table.norm, prepared.unigram) if n != "sum")


def _score(prepared: Any, sentences: list[str], progress: bool | None) -> Any:
    """The results of the distinct sentences through the table job: every sentence checked, then scored."""
    from pllscore.io.readers import read_input

    try:
        return prepared.table(read_input(sentences)).score(0, len(sentences), progress=progress)
    except NonFiniteError as e:  # its index is into the distinct sentences: name the sentence instead
        where = f"{prepared.scorer.name}: sentence {sentences[e.index]!r:.80}"
        raise NonFiniteError(e.index, e.value, e.dtype, where=where) from None


def accuracy(scored: Any, by: Sequence[str]) -> Any:
    """Share of correct pairs per group of ``by`` columns (plus model and metric), with counts.

    Columns: the keys (``model``, ``model_id`` when present, ``metric``, ``by``), ``accuracy``,
    ``n`` (pairs) and ``n_unscored`` (pairs with a NaN score on either side, counted wrong), then
    ``accuracy_<norm>`` for each ``correct_<norm>`` column of ``scored``.
    """
    keys = ["model", *(["model_id"] if "model_id" in scored.columns else []), "metric", *by]
    frame = scored.assign(_unscored=scored["good_logprob"].isna() | scored["bad_logprob"].isna())
    grouped = frame.groupby(keys, sort=False)
    out = grouped["correct"].agg(accuracy="mean", n="size")
    out["n_unscored"] = grouped["_unscored"].sum().astype("int64")
    for col in norm_columns(scored):
        out[f"accuracy_{col}"] = grouped[f"correct_{col}"].mean()
    return out.reset_index()


def norm_columns(frame: Any) -> list[str]:
    """The norms (other than ``sum``, as column names: ``per_char``) whose ``correct_<norm>``/``accuracy_<norm>``
    columns ``frame`` has, in order."""
    from pllscore.results.norms import NORMS

    cols = set(frame.columns)
    names = [column_part(n) for n in NORMS]
    return [n for n in names if f"correct_{n}" in cols or f"accuracy_{n}" in cols]


def pairs_tables(scored: Any, group: str | None) -> tuple[Any, Any]:
    """The accuracy per model, metric and ``group`` (overall without it) and the summary table: rows model x
    metric, columns ``Overall``, ``Overall_<norm>`` and each group, accuracy x 100 with one decimal."""
    overall = accuracy(scored, [])
    summary = overall.rename(columns={"accuracy": "Overall"}).drop(columns=["n", "n_unscored"])
    summary = summary.drop(columns=[c for c in ("model_id",) if c in summary.columns])
    summary = summary.rename(columns={f"accuracy_{n}": f"Overall_{n}" for n in norm_columns(overall)})
    for col in ["Overall", *(f"Overall_{n}" for n in norm_columns(overall))]:
        summary[col] *= 100
    if group is None:
        return overall, summary.round(1)
    groups = accuracy(scored, [group])
    wide = groups.pivot_table(index=["model", "metric"], columns=group, values="accuracy", sort=False) * 100
    return groups, summary.merge(wide.reset_index(), on=["model", "metric"]).round(1)
