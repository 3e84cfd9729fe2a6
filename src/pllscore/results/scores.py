"""Result types: one :class:`SentenceScore` per (text, metric), collected in :class:`Results`.

Scores are stored once, as natural-log probabilities (nats) in float64, with NaN for a
token that was not scored (the first token of a causal LM run with ``bos=False``, tokens
outside ``spans``). A sum or mean over no scored token is NaN, never 0: a text with nothing
scored has no score, and must not win a comparison by totalling 0.
``view(base=2, surprisal=True)`` gives the same results in bits and/or negated; every
number a view shows (token, word, total, mean) is then in that unit.

Normalised sentence scores (:data:`NORMS`, :meth:`SentenceScore.normalised`): see :mod:`pllscore.results.norms`,
the layer below this one. DataFrames of results: :mod:`pllscore.results.frames`, the layer above, which registers
the builder behind :meth:`Results.to_frame` (:func:`register_frame_builder`) so that no import points up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, overload

import numpy as np

from pllscore.plan.align import Span, anchors, check_span
from pllscore.results.norms import NORMS, check_norms, sum_scored, unigram_norm

Level = Literal["sentence", "word", "token"]

__all__ = ["NORMS", "Results", "SentenceScore", "TokenScore", "WordScore", "register_frame_builder"]

#: the function behind :meth:`Results.to_frame`; set by :mod:`pllscore.results.frames`, which the package imports
_frame_builder: Callable[..., Any] | None = None


def register_frame_builder(build: Callable[..., Any]) -> Callable[..., Any]:
    """Make ``build`` (:func:`pllscore.results.frames.to_frame`) the function behind :meth:`Results.to_frame`.

    Frames sit a layer above these types and import them, so the method cannot import frames back;
    :mod:`pllscore.results` imports :mod:`pllscore.results.frames`, which registers itself here with this decorator.
    """
    global _frame_builder
    _frame_builder = build
    return build


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
    #: a special token scored all the same (an encoder-decoder model's closing EOS; word -1)
    special: bool = False


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
        pieces: the text's tokens; special tokens left out, but for those a model kind scores (an
            encoder-decoder model's closing EOS, listed in sequence order).
        offsets: per token, its character span in ``text`` (a scored special token: empty, at the
            text's start or end).
        word_index: per token, the index of its word (-1: a special token, in no word).
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
        special: per token, whether it is a scored special token (None: the result has none). Its
            score counts in the total and the mean, not in any word.
        anchors: per token, the character of ``text`` it stands on (-1: a special token, on none), which
            decides the span, word or region it belongs to (:func:`pllscore.plan.align.anchors`); None: read
            from ``offsets`` by the same rule.
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
    special: np.ndarray | None = None
    anchors: tuple[int, ...] | None = None

    # --- views -----------------------------------------------------------------
    def view(self, *, base: float | Literal["e"] | None = None, surprisal: bool | None = None) -> SentenceScore:
        """The same scores in another unit: ``base`` 2 for bits, ``surprisal=True`` to negate."""
        return self._with(
            base=_check_base(base) if base is not None else self.base,
            surprisal=self.surprisal if surprisal is None else bool(surprisal),
        )

    def _with(self, **changes: Any) -> SentenceScore:
        return replace(self, **changes)  # a copy with ``changes`` (results/lazy.py keeps its fields unmade)

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
        """Number of tokens listed: the text's, and the special tokens scored (see :attr:`special`)."""
        return len(self.pieces)

    @property
    def is_special(self) -> np.ndarray:
        """Per token, whether it is a scored special token (all False for most results)."""
        return np.zeros(self.n_tokens, dtype=bool) if self.special is None else np.asarray(self.special, bool)

    @property
    def _in_word(self) -> np.ndarray:
        return np.asarray(self.word_index) >= 0

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
        return sum_scored(self.logprobs if self.base == math.e and not self.surprisal else self.token_scores)

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

        ``unigram`` (a :mod:`pllscore.results.unigram` model, with ``logprob(score)`` in nats) is needed by
        ``slor`` and ``norm-lp``.
        """
        norm = check_norms([norm], unigram)[0]
        if norm == "sum":
            return self.total
        if norm == "mean":
            return self.mean
        if norm == "per-char":
            return self.per_char
        return unigram_norm(self, norm, unigram.logprob(self))

    # --- tokens and words ----------------------------------------------------------
    @property
    def tokens(self) -> list[TokenScore]:
        """Per-token scores, in text order."""
        values, scored = self.token_scores, self.scored
        ent = self.token_entropy
        ents = [None] * self.n_tokens if ent is None else [float(x) for x in ent]
        ranks = [None] * self.n_tokens if self.rank is None else [None if np.isnan(x) else int(x) for x in self.rank]
        return [
            TokenScore(piece=p, span=o, word=int(w), score=float(v), scored=bool(s), entropy=e, rank=k, special=bool(x))
            for p, o, w, v, s, e, k, x in zip(
                self.pieces, self.offsets, self.word_index, values, scored, ents, ranks, self.is_special
            )
        ]

    @property
    def word_scores(self) -> np.ndarray:
        """Per word, the sum of its tokens' scores (NaN if none of them was scored), with ``word_prob="bow"``'s
        correction when present."""
        values = self.token_scores
        if self.word_correction is not None:
            scale = (-1.0 if self.surprisal else 1.0) / math.log(self.base)
            values = values + np.nan_to_num(self.word_correction, nan=0.0) * scale
        own = self._in_word  # a scored special token counts in the total, in no word
        sums = np.zeros(self.n_words, dtype=np.float64)
        np.add.at(sums, self.word_index[own], np.nan_to_num(values[own], nan=0.0))
        any_scored = np.zeros(self.n_words, dtype=bool)
        np.logical_or.at(any_scored, self.word_index[own], self.scored[own])
        return np.where(any_scored, sums, np.nan)

    @property
    def words(self) -> list[WordScore]:
        """Per-word scores, in text order."""
        counts = self.word_token_counts
        return [
            WordScore(text=self.text[a:b], span=(a, b), score=float(v), n_tokens=int(n))
            for (a, b), v, n in zip(self.word_spans, self.word_scores, counts)
        ]

    @property
    def word_token_counts(self) -> np.ndarray:
        """Per word, its number of tokens."""
        return np.bincount(self.word_index[self._in_word], minlength=self.n_words)

    def word_first(self, values: np.ndarray | None) -> np.ndarray | None:
        """Per word, ``values`` at its first token (how word level reports entropy and rank); None for None."""
        if values is None:
            return None
        own = np.flatnonzero(np.asarray(self.word_index) >= 0)
        words, at = np.unique(np.asarray(self.word_index)[own], return_index=True)  # each word's first token
        first = np.full(self.n_words, -1, dtype=np.int64)
        first[words] = own[at]
        return np.where(first >= 0, np.asarray(values, dtype=np.float64)[np.maximum(first, 0)], np.nan)

    def word(self, i: int) -> WordScore:
        """The score of word ``i``."""
        return self.words[i]

    @property
    def token_anchors(self) -> np.ndarray:
        """Per token, the character of the text it stands on (-1 for a special token): see :attr:`anchors`."""
        if self.anchors is not None:
            return np.asarray(self.anchors, dtype=np.int64)
        out = np.asarray(anchors(self.text, self.offsets), dtype=np.int64) if self.offsets else np.zeros(0, np.int64)
        return np.where(self.is_special, -1, out)

    def span(self, start: int, stop: int) -> float:
        """Sum of the scores of the tokens that stand on a character of ``start:stop`` (the rule of ``spans=``);
        NaN if none of them was scored. A span outside the text is refused, as ``spans=`` refuses it."""
        check_span((start, stop), self.text, self.index)
        at = self.token_anchors
        hit = (at >= start) & (at < stop)
        return sum_scored(self.token_scores[hit]) if len(hit) else math.nan

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
                    **({"special": True} if t.special else {}),
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

        name = metric if metric in ("causal", "seq2seq") else resolve_metrics(metric)[0]
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
        if _frame_builder is None:  # only while pllscore.results is half imported
            raise RuntimeError("import pllscore.results before calling Results.to_frame")
        return _frame_builder(self, level=level, norm=norm, unigram=unigram)

    def to_dicts(self) -> list[dict[str, Any]]:
        """JSON-ready dicts, one per item."""
        return [r.to_dict() for r in self.items]

    def __repr__(self) -> str:
        return f"Results({len(self.items)} items, metrics={list(self.metrics)})"


def _check_base(base: float | str) -> float:
    from pllscore.errors import InputError

    if base == "e":
        return math.e
    if isinstance(base, (int, float)) and not isinstance(base, bool) and base > 0 and base != 1:
        return float(base)
    raise InputError(f"invalid log base {base!r}; use 'e' (nats), 2 (bits) or another positive number other than 1")


def _none_if_nan(x: float) -> float | None:
    return None if math.isnan(x) else x
