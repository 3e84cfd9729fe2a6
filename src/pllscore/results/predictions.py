"""What :meth:`Scorer.predict <pllscore.scoring.base.Scorer.predict>` returns: per text, ranked words.

:class:`Prediction` holds one text's words (or tokens, or candidates) best first, the probability
mass they cover, for tokens the entropy of the distribution, and whether the list is complete (a
search that stopped at its step budget is not). :meth:`Predictions.to_frame` makes the table
``pllscore predict`` writes: one row per text and rank, columns :data:`COLUMNS`, each text's
``covered`` mass, ``entropy`` and ``complete`` repeated on its rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pllscore.errors import InputError
from pllscore.results.columns import entropy_column, value_name

__all__ = ["COLUMNS", "LEVELS", "PredictedWord", "Prediction", "PredictionWarning", "Predictions"]

#: the columns of a prediction table, in order (in nats; another view renames ``logprob`` and ``entropy`` as the
#: column rule does: ``logprob_bits``, ``surprisal``, ``entropy_bits``; see :func:`columns`)
COLUMNS = (
    "text_id", "text", "rank", "word", "logprob", "prob", "n_tokens", "tokens", "covered", "entropy", "complete",
)  # fmt: skip
#: what ``level=`` may be: whole words, or single tokens
LEVELS = ("word", "token")


class PredictionWarning(UserWarning):
    """A prediction is less than was asked: a search stopped at its step budget with fewer than ``k`` words,
    or candidates given twice were scored once."""


@dataclass(frozen=True)
class PredictedWord:
    """One word in a slot: its rank (1 = best), text, log-probability (nats) and tokens (pieces)."""

    rank: int
    word: str
    logprob: float
    tokens: tuple[str, ...]

    @property
    def prob(self) -> float:
        return math.exp(self.logprob)

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True)
class Prediction:
    """One text's prediction.

    Attributes:
        index: the text's position among those given.
        text: the text as given (with its slot).
        level: ``"word"`` (the top words), ``"token"`` (the top tokens) or ``"candidates"`` (the
            given words, in the order given, ranked by log-probability).
        words: the words, best first (candidates: in the order given; ``rank`` says their order).
        entropy: the entropy (nats) of the token distribution at the slot (``"token"``), else NaN.
        model: the model's name.
        complete: False when the search stopped at its step budget before it had ``k`` words (the words
            listed are still the best ones, in order; some better-ranked word may be missing after them).
    """

    index: int
    text: str
    level: str
    words: tuple[PredictedWord, ...]
    entropy: float = math.nan
    model: str = ""
    complete: bool = True

    @property
    def covered(self) -> float:
        """The probability mass of :attr:`words` together (a masked LM's words of different lengths each
        under their own number of masks: see the docs' page on predictions)."""
        return float(sum(w.prob for w in self.words if math.isfinite(w.logprob)))

    @property
    def top(self) -> PredictedWord | None:
        """The best word, or None when none was found."""
        return min(self.words, key=lambda w: w.rank, default=None)


_NONE = PredictedWord(0, "", math.nan, ())


def _unit(base: float) -> str:
    return "nats" if base == math.e else "bits" if base == 2 else f"log{base:g}"


def columns(base: float = math.e, surprisal: bool = False) -> list[str]:
    """The prediction table's columns in a view: ``logprob`` named as the score columns are (``surprisal_bits``
    in bits as surprisal), ``entropy`` with its unit (``entropy_bits``); a bare ``logprob`` is in nats."""
    unit = _unit(base)
    named = {"logprob": value_name(surprisal, unit), "entropy": entropy_column(unit)}
    return [named.get(c, c) for c in COLUMNS]


def _convert(x: float, base: float, surprisal: bool) -> float:
    y = x / math.log(base)
    return -y if surprisal else y


@dataclass(frozen=True)
class Predictions(Sequence[Prediction]):
    """One :class:`Prediction` per text, in the order given."""

    items: tuple[Prediction, ...] = field(default_factory=tuple)

    def __getitem__(self, i: int) -> Prediction:  # type: ignore[override]
        return self.items[i]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Prediction]:
        return iter(self.items)

    def to_rows(self, *, base: float | Literal["e"] | None = None, surprisal: bool = False) -> list[dict[str, Any]]:
        """One dict per text and rank (:func:`columns`); ``base``/``surprisal`` view ``logprob`` and ``entropy``
        in another base (2: bits: ``logprob_bits``, ``entropy_bits``) or as surprisal (``-logprob``: ``surprisal``);
        ``prob`` stays a probability."""
        b = math.e if base in (None, "e") else float(base)  # type: ignore[arg-type]
        if not b > 1:
            raise InputError(f"base must be a number above 1 (2 for bits) or 'e', got {base!r}")
        score, spread = (c for c in columns(b, surprisal) if c.startswith(("logprob", "surprisal", "entropy")))
        rows = []
        for p in self.items:
            entropy = p.entropy if math.isnan(p.entropy) else p.entropy / math.log(b)
            # a search that found no word still has its row (rank 0, no word), so that the table says so
            words = sorted(p.words, key=lambda w: w.rank) or ([_NONE] if not p.complete else [])
            for w in words:
                rows.append(
                    {
                        "text_id": p.index,
                        "text": p.text,
                        "rank": w.rank,
                        "word": w.word,
                        score: _convert(w.logprob, b, surprisal),
                        "prob": w.prob,
                        "n_tokens": w.n_tokens,
                        "tokens": " ".join(w.tokens),
                        "covered": p.covered,
                        spread: entropy,
                        "complete": p.complete,
                    }
                )
        return rows

    def to_frame(self, *, base: float | Literal["e"] | None = None, surprisal: bool = False) -> Any:
        """:meth:`to_rows` as a pandas DataFrame (columns :func:`columns`)."""
        import pandas as pd

        b = math.e if base in (None, "e") else float(base)  # type: ignore[arg-type]
        return pd.DataFrame(self.to_rows(base=base, surprisal=surprisal), columns=columns(b, surprisal))
