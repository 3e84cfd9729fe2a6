"""Results as pandas DataFrames: tidy (:func:`to_frame`, one row per sentence, word or token and metric)
and wide (:func:`to_wide_frame`, one column per metric: what file scoring writes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from pllscore.results.norms import norm_columns, norm_values
from pllscore.results.scores import Level, Results, SentenceScore, _level_error

__all__ = ["to_frame", "to_wide_frame"]


def to_frame(
    results: Results | Sequence[SentenceScore],
    level: Level = "sentence",
    *,
    base: float | Literal["e"] | None = None,
    surprisal: bool | None = None,
    norm: str | Sequence[str] | None = None,
    unigram: Any = None,
) -> Any:
    """A tidy pandas DataFrame of results.

    Args:
        results: what ``Scorer.score`` returned.
        level: ``"sentence"`` (one row per text and metric), ``"word"`` or ``"token"``.
        base: log base of the scores (``2`` for bits); defaults to the results' own view.
        surprisal: negate the scores; defaults to the results' own view.
        norm: normalisation(s) of :data:`NORMS` (sentence level): ``total`` (sum) and ``mean`` are
            always columns, and ``per-char``, ``slor`` and ``norm-lp`` add a column of that name.
        unigram: the unigram model ``slor`` and ``norm-lp`` need (:func:`pllscore.results.unigram.load_unigram`
            builds one from a counts table, a corpus or ``"wordfreq"``).

    The score column is named ``logprob`` (or ``surprisal``) and the ``unit`` column says
    nats or bits. Results scored with ``outputs=("entropy", "rank")`` add ``entropy`` (in the
    unit's base) and ``rank`` columns at token level, and at word level those of the word's first
    token (the distribution the word begins from). Word scores include ``word_prob="bow"``'s
    correction when the results have it.
    """
    import pandas as pd

    from pllscore.results.unigram import load_unigram

    unigram = load_unigram(unigram) if unigram is not None else None
    extra = norm_columns(norm, unigram, level)
    items = [r.view(base=base, surprisal=surprisal) for r in results]
    value = "surprisal" if items and items[0].surprisal else "logprob"
    if level == "sentence":
        rows = [
            {
                "index": r.index,
                "text": r.text,
                "metric": r.metric,
                "model": r.model,
                "total": r.total,
                "mean": r.mean,
                **norm_values(r, extra, unigram),
                "n_tokens": r.n_tokens,
                "n_words": r.n_words,
                "unit": r.unit,
            }
            for r in items
        ]
        columns = ["index", "text", "metric", "model", "total", "mean", *extra, "n_tokens", "n_words", "unit"]
    elif level == "word":
        rows = [
            {
                "index": r.index,
                "metric": r.metric,
                "word": i,
                "text": w.text,
                "start": w.span[0],
                "end": w.span[1],
                value: w.score,
                "n_tokens": w.n_tokens,
                "unit": r.unit,
            }
            for r in items
            for i, w in enumerate(r.words)
        ]
        columns = ["index", "metric", "word", "text", "start", "end", value, "n_tokens", "unit"]
        _add_outputs(rows, columns, items, "word")
    elif level == "token":
        rows = [
            {
                "index": r.index,
                "metric": r.metric,
                "token": i,
                "piece": t.piece,
                "start": t.span[0],
                "end": t.span[1],
                "word": t.word,
                value: t.score,
                "scored": t.scored,
                "unit": r.unit,
            }
            for r in items
            for i, t in enumerate(r.tokens)
        ]
        columns = ["index", "metric", "token", "piece", "start", "end", "word", value, "scored", "unit"]
        _add_outputs(rows, columns, items, "token")
    else:
        raise _level_error(level)
    return pd.DataFrame(rows, columns=columns)


def to_wide_frame(
    results: Results | Sequence[SentenceScore],
    level: Level = "sentence",
    *,
    base: float | Literal["e"] | None = None,
    surprisal: bool | None = None,
    norm: str | Sequence[str] | None = None,
    unigram: Any = None,
) -> Any:
    """A DataFrame with one column of scores per metric, one row per text (or word, or token).

    Sentence level has ``index, n_tokens, n_words`` and per metric ``<metric>`` (total) and
    ``<metric>_mean``, then ``<metric>_<norm>`` for each other norm asked (``word-l2r_slor``,
    ``causal_per-char``; see :func:`to_frame` for ``norm`` and ``unigram``); word level
    ``index, word, word_text, start, end, n_tokens, <metric>...``; token level
    ``index, token, piece, start, end, word, <metric>...``; results with entropy or rank add
    ``<metric>_entropy`` and ``<metric>_rank`` at word (the first token's) and token level. Every metric
    of the results must cover the same texts.
    """
    import pandas as pd

    from pllscore.results.unigram import load_unigram

    unigram = load_unigram(unigram) if unigram is not None else None
    extra = norm_columns(norm, unigram, level)

    by_metric: dict[str, list[SentenceScore]] = {}
    for r in results:
        by_metric.setdefault(r.metric, []).append(r.view(base=base, surprisal=surprisal))
    if not by_metric:
        return pd.DataFrame()
    groups = list(by_metric.values())
    first = groups[0]
    if any([r.index for r in g] != [r.index for r in first] for g in groups):
        raise ValueError("every metric must score the same texts")
    idx = np.array([r.index for r in first], dtype=np.int64)
    cols: dict[str, Any] = {}
    if level == "sentence":
        cols["index"] = idx
        cols["n_tokens"] = np.array([r.n_tokens for r in first], dtype=np.int64)
        cols["n_words"] = np.array([r.n_words for r in first], dtype=np.int64)
        for metric, g in by_metric.items():
            cols[metric] = np.array([r.total for r in g])
            cols[f"{metric}_mean"] = np.array([r.mean for r in g])
            values = [norm_values(r, extra, unigram) for r in g]
            for n in extra:
                cols[f"{metric}_{n}"] = np.array([v[n] for v in values], dtype=np.float64)
    elif level == "word":
        counts = np.array([r.n_words for r in first], dtype=np.int64)
        cols["index"] = np.repeat(idx, counts)
        cols["word"] = np.concatenate([np.arange(n) for n in counts]) if len(counts) else np.zeros(0, np.int64)
        spans = [s for r in first for s in r.word_spans]
        cols["word_text"] = [r.text[a:b] for r in first for a, b in r.word_spans]
        cols["start"] = np.array([a for a, _ in spans], dtype=np.int64)
        cols["end"] = np.array([b for _, b in spans], dtype=np.int64)
        cols["n_tokens"] = np.concatenate([np.bincount(r.word_index, minlength=r.n_words) for r in first])
        for metric, g in by_metric.items():
            cols[metric] = np.concatenate([r.word_scores for r in g])
            _wide_outputs(cols, metric, g, "word")
    elif level == "token":
        counts = np.array([r.n_tokens for r in first], dtype=np.int64)
        cols["index"] = np.repeat(idx, counts)
        cols["token"] = np.concatenate([np.arange(n) for n in counts])
        cols["piece"] = [p for r in first for p in r.pieces]
        cols["start"] = np.array([a for r in first for a, _ in r.offsets], dtype=np.int64)
        cols["end"] = np.array([b for r in first for _, b in r.offsets], dtype=np.int64)
        cols["word"] = np.concatenate([r.word_index for r in first])
        for metric, g in by_metric.items():
            cols[metric] = np.concatenate([r.token_scores for r in g])
            _wide_outputs(cols, metric, g, "token")
    else:
        raise _level_error(level)
    return pd.DataFrame(cols)


def _outputs_at(r: SentenceScore, name: str, level: str) -> np.ndarray:
    """Per row of ``level`` (word: the word's first token), output ``name`` of ``r``; NaN when not asked."""
    values = r.token_entropy if name == "entropy" else r.rank
    if level == "word":
        return np.full(r.n_words, np.nan) if values is None else r.word_first(values)  # type: ignore[return-value]
    return np.full(r.n_tokens, np.nan) if values is None else np.asarray(values, dtype=np.float64)


def _asked(items: Sequence[SentenceScore], name: str) -> bool:
    return any((r.entropy if name == "entropy" else r.rank) is not None for r in items)


def _add_outputs(rows: list[dict[str, Any]], columns: list[str], items: Sequence[SentenceScore], level: str) -> None:
    """Add the entropy/rank columns that any item has (rows are in item order, then word or token order)."""
    for name in ("entropy", "rank"):
        if not _asked(items, name):
            continue
        values = np.concatenate([_outputs_at(r, name, level) for r in items])
        column = values if name == "entropy" else _nullable_int(values)
        for row, v in zip(rows, column):
            row[name] = v
        columns.insert(columns.index("unit"), name)


def _wide_outputs(cols: dict[str, Any], metric: str, group: Sequence[SentenceScore], level: str) -> None:
    for name in ("entropy", "rank"):
        if _asked(group, name):
            values = np.concatenate([_outputs_at(r, name, level) for r in group])
            cols[f"{metric}_{name}"] = values if name == "entropy" else _nullable_int(values)


def _nullable_int(values: np.ndarray) -> Any:
    import pandas as pd

    return pd.array([pd.NA if np.isnan(v) else int(v) for v in values], dtype="Int64")
