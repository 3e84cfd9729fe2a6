"""Result types: one :class:`SentenceScore` per (text, metric), collected in :class:`Results`.

Scores are stored once, as natural-log probabilities (nats) in float64, with NaN for a
token that was not scored (the first token of a causal LM run with ``bos=False``, tokens
outside ``spans``). A sum or mean over no scored token is NaN, never 0: a text with nothing
scored has no score, and must not win a comparison by totalling 0.
``view(base=2, surprisal=True)`` gives the same results in bits and/or negated; every
number a view shows (token, word, total, mean) is then in that unit.

Normalised sentence scores (:data:`NORMS`, :meth:`SentenceScore.normalised`, ``norm=`` of
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

log P_unigram (nats) comes from a unigram model (:mod:`pllscore.unigram`) over the same scored
tokens. Like every number of a view, normalised scores follow its unit (``slor``, ``mean`` and
``per-char`` are in nats or bits per unit) and are negated under ``surprisal=True``. A norm over
nothing (no scored token) is NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, overload

import numpy as np

Span = tuple[int, int]
Level = Literal["sentence", "word", "token"]

__all__ = ["NORMS", "Results", "SentenceScore", "TokenScore", "WordScore", "check_norms", "to_frame", "to_wide_frame"]

#: the sentence-score normalisations; ``slor`` and ``norm-lp`` need a unigram model
NORMS = ("sum", "mean", "per-char", "slor", "norm-lp")
#: the norms that need unigram log-probabilities
UNIGRAM_NORMS = ("slor", "norm-lp")


@dataclass(frozen=True)
class TokenScore:
    """One token: its piece, character span in the text, word index and score."""

    piece: str
    span: Span
    word: int
    score: float
    scored: bool
    entropy: float | None = None
    rank: int | None = None


@dataclass(frozen=True)
class WordScore:
    """One word (a ``word_ids()`` group, or a word of the user's ``words=``): its text, character span, summed
    score and token count (0, with a NaN score, for a user's word no token starts in)."""

    text: str
    span: Span
    score: float
    n_tokens: int


@dataclass(frozen=True, eq=False)
class SentenceScore:
    """The scores of one text under one metric.

    Attributes:
        index: position of the text in the input.
        text: the text as given.
        metric: the masked-LM metric, or ``"causal"`` for a causal LM's log-likelihood.
        model: the model's name or path.
        pieces: the text's tokens, special tokens left out.
        offsets: per token, its character span in ``text``.
        word_index: per token, the index of its word.
        word_spans: per word, its character span in ``text``.
        logprobs: per token, log-probability in nats (NaN when not scored). Unaffected by views.
        base: logarithm base of the view (``math.e`` for nats, 2 for bits).
        surprisal: whether the view negates scores (surprisal = -log p).
        entropy: per token, the entropy (nats) of the distribution that scores it (``outputs=("entropy",)``),
            else None; NaN when not scored.
        rank: per token, its rank in that distribution (1: the top choice; ``outputs=("rank",)``), else
            None; NaN when not scored.
        word_correction: per token, what ``word_prob="bow"`` adds to its word's score (nats; see
            :mod:`pllscore.scoring.bow`), else None. Token scores and totals never include it.
    """

    index: int
    text: str
    metric: str
    model: str
    pieces: tuple[str, ...]
    offsets: tuple[Span, ...]
    word_index: np.ndarray
    word_spans: tuple[Span, ...]
    logprobs: np.ndarray
    base: float = math.e
    surprisal: bool = False
    entropy: np.ndarray | None = None
    rank: np.ndarray | None = None
    word_correction: np.ndarray | None = None

    # --- views -----------------------------------------------------------------
    def view(self, *, base: float | Literal["e"] | None = None, surprisal: bool | None = None) -> SentenceScore:
        """The same scores in another unit: ``base`` 2 for bits, ``surprisal=True`` to negate."""
        return replace(
            self,
            base=_check_base(base) if base is not None else self.base,
            surprisal=self.surprisal if surprisal is None else bool(surprisal),
        )

    @property
    def unit(self) -> str:
        """The view's unit, e.g. ``"nats"`` or ``"bits"``."""
        return "nats" if self.base == math.e else "bits" if self.base == 2 else f"log{self.base:g}"

    @property
    def token_scores(self) -> np.ndarray:
        """Per token, its score in the view's unit (NaN when not scored)."""
        scale = (-1.0 if self.surprisal else 1.0) / math.log(self.base)
        return self.logprobs * scale

    @property
    def token_entropy(self) -> np.ndarray | None:
        """Per token, the entropy in the view's base (never negated: it is an expected surprisal); None if not asked."""
        return None if self.entropy is None else self.entropy / math.log(self.base)

    @property
    def word_prob(self) -> str:
        """How word scores are computed: ``"bow"`` (corrected, :mod:`pllscore.scoring.bow`) or ``"sum"``."""
        return "sum" if self.word_correction is None else "bow"

    # --- sentence level ----------------------------------------------------------
    @property
    def scored(self) -> np.ndarray:
        """Per token, whether it was scored."""
        return ~np.isnan(self.logprobs)

    @property
    def n_tokens(self) -> int:
        """Number of tokens of the text (special tokens not counted)."""
        return len(self.pieces)

    @property
    def n_scored(self) -> int:
        """Number of tokens that carry a score."""
        return int(self.scored.sum())

    @property
    def n_words(self) -> int:
        """Number of words (``word_ids()`` groups, or the user's ``words=``)."""
        return len(self.word_spans)

    @property
    def total(self) -> float:
        """Sum of the scored tokens' scores (the (pseudo-)log-likelihood); NaN when no token was scored."""
        return _sum_scored(self.token_scores)

    @property
    def mean(self) -> float:
        """Mean score per scored token; NaN when no token was scored."""
        n = self.n_scored
        return self.total / n if n else math.nan

    @property
    def per_char(self) -> float:
        """Total per character of the text (``len(text)``, spaces and punctuation included); NaN if nothing scored."""
        return self.total / len(self.text) if self.text else math.nan

    def normalised(self, norm: str, unigram: Any = None) -> float:
        """The total under a normalisation of :data:`NORMS`, in the view's unit (see the module's docstring).

        ``unigram`` (a :mod:`pllscore.unigram` model, with ``logprob(score)`` in nats) is needed by
        ``slor`` and ``norm-lp``.
        """
        norm = check_norms([norm], unigram)[0]
        if norm == "sum":
            return self.total
        if norm == "mean":
            return self.mean
        if norm == "per-char":
            return self.per_char
        return _unigram_norm(self, norm, unigram.logprob(self))

    # --- tokens and words ----------------------------------------------------------
    @property
    def tokens(self) -> list[TokenScore]:
        """Per-token scores, in text order."""
        values, scored = self.token_scores, self.scored
        ent = self.token_entropy
        ents = [None] * self.n_tokens if ent is None else [float(x) for x in ent]
        ranks = [None] * self.n_tokens if self.rank is None else [None if np.isnan(x) else int(x) for x in self.rank]
        return [
            TokenScore(piece=p, span=o, word=int(w), score=float(v), scored=bool(s), entropy=e, rank=k)
            for p, o, w, v, s, e, k in zip(self.pieces, self.offsets, self.word_index, values, scored, ents, ranks)
        ]

    @property
    def word_scores(self) -> np.ndarray:
        """Per word, the sum of its tokens' scores (NaN if none of them was scored), with ``word_prob="bow"``'s
        correction when present."""
        values = self.token_scores
        if self.word_correction is not None:
            scale = (-1.0 if self.surprisal else 1.0) / math.log(self.base)
            values = values + np.nan_to_num(self.word_correction, nan=0.0) * scale
        sums = np.zeros(self.n_words, dtype=np.float64)
        np.add.at(sums, self.word_index, np.nan_to_num(values, nan=0.0))
        any_scored = np.zeros(self.n_words, dtype=bool)
        np.logical_or.at(any_scored, self.word_index, self.scored)
        return np.where(any_scored, sums, np.nan)

    @property
    def words(self) -> list[WordScore]:
        """Per-word scores, in text order."""
        counts = np.bincount(self.word_index, minlength=self.n_words)
        return [
            WordScore(text=self.text[a:b], span=(a, b), score=float(v), n_tokens=int(n))
            for (a, b), v, n in zip(self.word_spans, self.word_scores, counts)
        ]

    def word_first(self, values: np.ndarray | None) -> np.ndarray | None:
        """Per word, ``values`` at its first token (how word level reports entropy and rank); None for None."""
        if values is None:
            return None
        first = np.full(self.n_words, -1, dtype=np.int64)
        for t in range(self.n_tokens - 1, -1, -1):
            first[self.word_index[t]] = t
        return np.where(first >= 0, np.asarray(values, dtype=np.float64)[np.maximum(first, 0)], np.nan)

    def word(self, i: int) -> WordScore:
        """The score of word ``i``."""
        return self.words[i]

    def span(self, start: int, stop: int) -> float:
        """Sum of the scores of the tokens that overlap characters ``start:stop``; NaN if none of them was scored."""
        hit = np.array([a < stop and b > start for a, b in self.offsets], dtype=bool)
        return _sum_scored(self.token_scores[hit]) if len(hit) else math.nan

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of this result (NaN becomes None)."""
        return {
            "index": self.index,
            "text": self.text,
            "metric": self.metric,
            "model": self.model,
            "unit": self.unit,
            "surprisal": self.surprisal,
            "total": _none_if_nan(self.total),
            "mean": _none_if_nan(self.mean),
            "n_tokens": self.n_tokens,
            "n_words": self.n_words,
            "tokens": [
                {
                    "piece": t.piece,
                    "span": list(t.span),
                    "word": t.word,
                    "score": _none_if_nan(t.score),
                    **({} if t.entropy is None else {"entropy": _none_if_nan(t.entropy)}),
                    **({} if self.rank is None else {"rank": t.rank}),
                }
                for t in self.tokens
            ],
            "words": [
                {"text": w.text, "span": list(w.span), "score": _none_if_nan(w.score), "n_tokens": w.n_tokens}
                for w in self.words
            ],
        }

    def __repr__(self) -> str:
        return (
            f"SentenceScore(index={self.index}, metric={self.metric!r}, total={self.total:.4f} {self.unit}"
            f"{' surprisal' if self.surprisal else ''}, n_tokens={self.n_tokens}, text={self.text!r})"
        )


@dataclass(frozen=True)
class Results(Sequence[SentenceScore]):
    """Scores of a list of texts, one :class:`SentenceScore` per (metric, text).

    Ordered metric-major: all texts under the first metric, then all under the next.
    With one metric, ``results[i]`` is text ``i``; with several, use ``for_metric``.
    """

    items: tuple[SentenceScore, ...] = field(default_factory=tuple)

    @overload
    def __getitem__(self, i: int) -> SentenceScore: ...
    @overload
    def __getitem__(self, i: slice) -> Results: ...
    def __getitem__(self, i: int | slice) -> SentenceScore | Results:
        if isinstance(i, slice):
            return Results(self.items[i])
        return self.items[i]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[SentenceScore]:
        return iter(self.items)

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics present, in order."""
        return tuple(dict.fromkeys(r.metric for r in self.items))

    def for_metric(self, metric: str) -> Results:
        """The results of one metric, in input order."""
        from pllscore.metrics import resolve_metrics

        name = metric if metric == "causal" else resolve_metrics(metric)[0]
        if name not in self.metrics:
            raise KeyError(f"no results for metric {metric!r}; these results have {', '.join(self.metrics)}")
        return Results(tuple(r for r in self.items if r.metric == name))

    @property
    def totals(self) -> np.ndarray:
        """Per item, its total score."""
        return np.array([r.total for r in self.items], dtype=np.float64)

    def view(self, *, base: float | Literal["e"] | None = None, surprisal: bool | None = None) -> Results:
        """The same results in another unit (see :meth:`SentenceScore.view`)."""
        return Results(tuple(r.view(base=base, surprisal=surprisal) for r in self.items))

    def to_frame(
        self, level: Level = "sentence", *, norm: str | Sequence[str] | None = None, unigram: Any = None
    ) -> Any:
        """A tidy pandas DataFrame at sentence, word or token level (``norm``, ``unigram``: see :func:`to_frame`)."""
        return to_frame(self, level=level, norm=norm, unigram=unigram)

    def to_dicts(self) -> list[dict[str, Any]]:
        """JSON-ready dicts, one per item."""
        return [r.to_dict() for r in self.items]

    def __repr__(self) -> str:
        return f"Results({len(self.items)} items, metrics={list(self.metrics)})"


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
        unigram: the unigram model ``slor`` and ``norm-lp`` need (:func:`pllscore.unigram.load_unigram`
            builds one from a counts table, a corpus or ``"wordfreq"``).

    The score column is named ``logprob`` (or ``surprisal``) and the ``unit`` column says
    nats or bits. Results scored with ``outputs=("entropy", "rank")`` add ``entropy`` (in the
    unit's base) and ``rank`` columns at token level, and at word level those of the word's first
    token (the distribution the word begins from). Word scores include ``word_prob="bow"``'s
    correction when the results have it.
    """
    import pandas as pd

    from pllscore.unigram import load_unigram

    unigram = load_unigram(unigram) if unigram is not None else None
    extra = _norm_columns(norm, unigram, level)
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

    from pllscore.unigram import load_unigram

    unigram = load_unigram(unigram) if unigram is not None else None
    extra = _norm_columns(norm, unigram, level)

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


def norm_values(r: SentenceScore, norms: Sequence[str], unigram: Any = None) -> dict[str, float]:
    """norm -> normalised total of ``r`` (the unigram log-probability is computed once)."""
    out: dict[str, float] = {}
    u: float | None = None
    for norm in norms:
        if norm in UNIGRAM_NORMS:
            if u is None:
                u = unigram.logprob(r)
            out[norm] = _unigram_norm(r, norm, u)
        else:
            out[norm] = r.normalised(norm)
    return out


def _unigram_norm(r: SentenceScore, norm: str, u: float) -> float:
    """SLOR or NormLP of ``r`` from its unigram log-probability ``u`` (nats), in the view's unit and sign."""
    total = _sum_scored(r.logprobs)  # nats
    sign = -1.0 if r.surprisal else 1.0
    if math.isnan(total) or math.isnan(u):
        return math.nan
    if norm == "slor":
        return sign * (total - u) / math.log(r.base) / r.n_scored
    return sign * total / -u if u != 0 else math.nan  # norm-lp: a ratio of logs, the same in any base


def _norm_columns(norms: Sequence[str] | None, unigram: Any, level: str) -> tuple[str, ...]:
    """The norms that add columns (``sum`` and ``mean`` are always there); only at sentence level."""
    from pllscore.errors import InputError

    chosen = check_norms(norms, unigram)
    extra = tuple(n for n in chosen if n not in ("sum", "mean"))
    if extra and level != "sentence":
        raise InputError(f"norms ({', '.join(extra)}) are sentence scores; use level sentence")
    return extra


def _level_error(level: object) -> Exception:
    from pllscore.errors import InputError

    return InputError(f"unknown level {level!r}; choose sentence, word or token")


def _check_base(base: float | str) -> float:
    from pllscore.errors import InputError

    if base == "e":
        return math.e
    if isinstance(base, (int, float)) and not isinstance(base, bool) and base > 0 and base != 1:
        return float(base)
    raise InputError(f"invalid log base {base!r}; use 'e' (nats), 2 (bits) or another positive number other than 1")


def _sum_scored(values: np.ndarray) -> float:
    """Sum of the non-NaN values; NaN (not 0) when there are none."""
    return float(np.nansum(values, dtype=np.float64)) if (~np.isnan(values)).any() else math.nan


def _none_if_nan(x: float) -> float | None:
    return None if math.isnan(x) else x
