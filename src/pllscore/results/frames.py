"""Results as pandas DataFrames: tidy (:func:`to_frame`, one row per sentence, word or token and metric)
and wide (:func:`to_wide_frame`, one column per metric: what file scoring writes)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np

from pllscore.results.columns import column_part, entropy_column, score_column_name, value_name
from pllscore.results.norms import norm_columns, norm_values
from pllscore.results.scores import Level, Results, SentenceScore, register_frame_builder

__all__ = ["score_column", "to_frame", "to_wide_frame"]

#: a tidy frame before pandas: its rows (dicts) and its columns, in order
Rows = tuple[list[dict[str, Any]], list[str]]


@register_frame_builder
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

    Columns (the names of ``docs/reference/columns.md``, shared with the CLI's files): ``text_id`` (the text's
    0-based place in ``results``), ``metric``, and per level: sentence ``text, model, <score>, <score>_mean``,
    ``<score>_<norm>`` for each other norm asked (``logprob_per_char``), ``n_tokens, n_words``; word
    ``word_id, word, start, end, <score>, n_tokens``; token ``token_id, token, start, end, word_id, <score>,
    scored`` (and ``special`` for results with a scored special token); then ``unit`` (nats, bits, ...).
    ``<score>`` is ``logprob`` or ``surprisal``, with ``_bits`` (or ``_log10``) in another base:
    ``logprob`` alone is in nats. Results scored with ``outputs=("entropy", "rank")`` add ``entropy``
    (``entropy_bits`` in bits) and ``rank`` columns at token level, and at word level those of the
    word's first token (the distribution the word begins from). Word scores include
    ``word_prob="bow"``'s correction when the results have it.
    """
    import pandas as pd

    items, extra, unigram = _views(results, level, base=base, surprisal=surprisal, norm=norm, unigram=unigram)
    value = value_name(items[0].surprisal, items[0].unit) if items else "logprob"
    if level == "sentence":
        rows, columns = _sentence_rows(items, extra, unigram, value)
    elif level in ("word", "token"):
        rows, columns = _part_rows(items, level, value)
    else:
        raise _level_error(level)
    return pd.DataFrame(rows, columns=columns)


def _sentence_rows(items: Sequence[SentenceScore], extra: Sequence[str], unigram: Any, value: str) -> Rows:
    """One row per text and metric: totals, means and the asked norms (``value``: the score's name)."""
    norms = {n: f"{value}_{column_part(n)}" for n in extra}
    rows = [
        {
            "text_id": r.index,
            "text": r.text,
            "metric": r.metric,
            "model": r.model,
            value: r.total,
            f"{value}_mean": r.mean,
            **{norms[n]: v for n, v in norm_values(r, extra, unigram).items()},
            "n_tokens": r.n_tokens,
            "n_words": r.n_words,
            "unit": r.unit,
        }
        for r in items
    ]
    columns = ["text_id", "text", "metric", "model", value, f"{value}_mean", *norms.values(), "n_tokens", "n_words"]
    return rows, [*columns, "unit"]


def _part_rows(items: Sequence[SentenceScore], level: str, value: str) -> Rows:
    """One row per word or token (``level``) of each item, with the entropy and rank columns when scored."""
    if level == "word":
        own, parts = ["word", "start", "end", value, "n_tokens"], _word_values
    else:
        own, parts = ["token", "start", "end", "word_id", value, "scored"], _token_values
        if any(r.special is not None for r in items):
            own, parts = [*own, "special"], _token_values_special
    columns = ["text_id", "metric", f"{level}_id", *own, "unit"]
    rows = [dict(zip(columns, (r.index, r.metric, i, *p, r.unit))) for r in items for i, p in enumerate(parts(r))]
    _add_outputs(rows, columns, items, level)
    return rows, columns


def _word_values(r: SentenceScore) -> list[tuple[Any, ...]]:
    """Per word: text, start, end, score, n_tokens (the word level's own columns)."""
    return [(w.text, w.span[0], w.span[1], w.score, w.n_tokens) for w in r.words]


def _token_values(r: SentenceScore) -> list[tuple[Any, ...]]:
    """Per token: piece, start, end, word, score, scored (the token level's own columns)."""
    return [(t.piece, t.span[0], t.span[1], t.word, t.score, t.scored) for t in r.tokens]


def _token_values_special(r: SentenceScore) -> list[tuple[Any, ...]]:
    """:func:`_token_values` and whether the token is a scored special token (an encoder-decoder's EOS)."""
    return [(t.piece, t.span[0], t.span[1], t.word, t.score, t.scored, t.special) for t in r.tokens]


def to_wide_frame(results: Results | Sequence[SentenceScore], level: Level = "sentence", **options: Any) -> Any:
    """A DataFrame with one column of scores per metric, one row per text (or word, or token).

    ``options`` are those of :func:`to_frame`: ``base``, ``surprisal``, ``norm`` and ``unigram``.

    A metric's score column is named for what it holds (:func:`score_column`): the metric, then ``logprob``
    or ``surprisal``, then the unit in a base other than nats (``word_l2r_logprob``, ``causal_logprob_bits``,
    ``causal_surprisal_bits``); below, ``<score>`` stands for that name. The other columns are those of
    :func:`to_frame`, with the same names and meanings. Sentence level has ``text_id, n_tokens, n_words`` and
    per metric ``<score>`` (total) and ``<score>_mean``, then ``<score>_<norm>`` for each other norm asked
    (``word_l2r_logprob_slor``, ``causal_surprisal_bits_per_char``; see :func:`to_frame` for ``norm`` and
    ``unigram``); word level ``text_id, word_id, word, start, end, n_tokens, <score>...``; token level
    ``text_id, token_id, token, start, end, word_id, <score>...``; results with entropy or rank add
    ``<metric>_entropy`` (``<metric>_entropy_bits`` in bits) and ``<metric>_rank`` at word (the first
    token's) and token level. Every metric of the results must cover the same texts.
    """
    import pandas as pd

    items, extra, unigram = _views(results, level, **options)
    by_metric: dict[str, list[SentenceScore]] = {}
    for r in items:
        by_metric.setdefault(r.metric, []).append(r)
    if not by_metric:
        return pd.DataFrame()
    groups = list(by_metric.values())
    first = groups[0]
    if any([r.index for r in g] != [r.index for r in first] for g in groups):
        raise ValueError("every metric must score the same texts")
    if level == "sentence":
        cols = _wide_sentences(by_metric, extra, unigram)
    elif level == "word":
        cols = _wide_words(by_metric)
    elif level == "token":
        cols = _wide_tokens(by_metric)
    else:
        raise _level_error(level)
    return pd.DataFrame(cols)


def score_column(metric: str, r: SentenceScore) -> str:
    """The wide frame's column of ``metric``'s scores in ``r``'s view: ``causal_logprob`` (nats),
    ``causal_surprisal``, ``causal_logprob_bits``, ``causal_surprisal_bits``, ``word_l2r_logprob_log10``, ..."""
    return score_column_name(metric, r.surprisal, r.unit)


def _wide_sentences(by_metric: dict[str, list[SentenceScore]], extra: Sequence[str], unigram: Any) -> dict[str, Any]:
    """Sentence-level columns: the texts' counts, then per metric its total, mean and asked norms."""
    first = next(iter(by_metric.values()))
    cols: dict[str, Any] = {"text_id": np.array([r.index for r in first], dtype=np.int64)}
    cols["n_tokens"] = np.array([r.n_tokens for r in first], dtype=np.int64)
    cols["n_words"] = np.array([r.n_words for r in first], dtype=np.int64)
    for metric, g in by_metric.items():
        name = score_column(metric, g[0])
        cols[name] = np.array([r.total for r in g])
        cols[f"{name}_mean"] = np.array([r.mean for r in g])
        values = [norm_values(r, extra, unigram) for r in g]
        for n in extra:
            cols[f"{name}_{column_part(n)}"] = np.array([v[n] for v in values], dtype=np.float64)
    return cols


def _wide_words(by_metric: dict[str, list[SentenceScore]]) -> dict[str, Any]:
    """Word-level columns: each word's place and text, then per metric its score (and outputs)."""
    first = next(iter(by_metric.values()))
    counts = np.array([r.n_words for r in first], dtype=np.int64)
    cols: dict[str, Any] = {"text_id": np.repeat(np.array([r.index for r in first], dtype=np.int64), counts)}
    cols["word_id"] = np.concatenate([np.arange(n) for n in counts]) if len(counts) else np.zeros(0, np.int64)
    spans = [s for r in first for s in r.word_spans]
    cols["word"] = [r.text[a:b] for r in first for a, b in r.word_spans]
    cols["start"] = np.array([a for a, _ in spans], dtype=np.int64)
    cols["end"] = np.array([b for _, b in spans], dtype=np.int64)
    cols["n_tokens"] = np.concatenate([r.word_token_counts for r in first])
    for metric, g in by_metric.items():
        cols[score_column(metric, g[0])] = np.concatenate([r.word_scores for r in g])
        _wide_outputs(cols, metric, g, "word")
    return cols


def _wide_tokens(by_metric: dict[str, list[SentenceScore]]) -> dict[str, Any]:
    """Token-level columns: each token's place and piece, then per metric its score (and outputs)."""
    first = next(iter(by_metric.values()))
    counts = np.array([r.n_tokens for r in first], dtype=np.int64)
    cols: dict[str, Any] = {"text_id": np.repeat(np.array([r.index for r in first], dtype=np.int64), counts)}
    cols["token_id"] = np.concatenate([np.arange(n) for n in counts])
    cols["token"] = [p for r in first for p in r.pieces]
    cols["start"] = np.array([a for r in first for a, _ in r.offsets], dtype=np.int64)
    cols["end"] = np.array([b for r in first for _, b in r.offsets], dtype=np.int64)
    cols["word_id"] = np.concatenate([r.word_index for r in first])
    if any(r.special is not None for r in first):
        cols["special"] = np.concatenate([r.is_special for r in first])
    for metric, g in by_metric.items():
        cols[score_column(metric, g[0])] = np.concatenate([r.token_scores for r in g])
        _wide_outputs(cols, metric, g, "token")
    return cols


def _views(
    results: Iterable[SentenceScore],
    level: str,
    *,
    base: Any = None,
    surprisal: Any = None,
    norm: Any = None,
    unigram: Any = None,
) -> tuple[list[SentenceScore], tuple[str, ...], Any]:
    """The results in the asked unit, the norm columns to add and the loaded unigram model: the one reading of
    the options of :func:`to_frame` and :func:`to_wide_frame`.

    The unigram model is loaded and the norms checked first, so their errors come before a bad base's.
    """
    from pllscore.results.unigram import load_unigram

    unigram = load_unigram(unigram) if unigram is not None else None
    extra = norm_columns(norm, unigram, level)
    return [r.view(base=base, surprisal=surprisal) for r in results], extra, unigram


def _level_error(level: object) -> Exception:
    from pllscore.errors import InputError

    return InputError(f"unknown level {level!r}; choose sentence, word or token")


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
        key = entropy_column(items[0].unit) if name == "entropy" else name
        for row, v in zip(rows, column):
            row[key] = v
        columns.insert(columns.index("unit"), key)


def _wide_outputs(cols: dict[str, Any], metric: str, group: Sequence[SentenceScore], level: str) -> None:
    for name in ("entropy", "rank"):
        if _asked(group, name):
            values = np.concatenate([_outputs_at(r, name, level) for r in group])
            rank = f"{column_part(metric)}_rank"
            column = rank if name == "rank" else entropy_column(group[0].unit, metric)
            cols[column] = values if name == "entropy" else _nullable_int(values)


def _nullable_int(values: np.ndarray) -> Any:
    import pandas as pd

    return pd.array([pd.NA if np.isnan(v) else int(v) for v in values], dtype="Int64")
