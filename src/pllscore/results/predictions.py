"""What :meth:`Scorer.predict <pllscore.scoring.base.Scorer.predict>` returns: per text, ranked words.

:class:`Prediction` holds one text's words (or tokens, or candidates) best first, the probability
mass they cover and, for tokens, the entropy of the distribution. :meth:`Predictions.to_frame`
makes the table ``pllscore predict`` writes: one row per text and rank, columns
:data:`COLUMNS`, each text's ``covered`` mass and ``entropy`` repeated on its rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pllscore.errors import InputError

__all__ = ["COLUMNS", "LEVELS", "PredictedWord", "Prediction", "Predictions"]

#: the columns of a prediction table, in order
COLUMNS = ("text_id", "text", "rank", "word", "logprob", "prob", "n_tokens", "tokens", "covered", "entropy")
#: what ``level=`` may be: whole words, or single tokens
LEVELS = ("word", "token")


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
    """

    index: int
    text: str
    level: str
    words: tuple[PredictedWord, ...]
    entropy: float = math.nan
    model: str = ""

    @property
    def covered(self) -> float:
        """The probability mass of :attr:`words` together (a masked LM's words of different lengths each
        under their own number of masks: see the docs' page on predictions)."""
        return float(sum(w.prob for w in self.words if math.isfinite(w.logprob)))

    @property
    def top(self) -> PredictedWord | None:
        """The best word, or None when none was found."""
        return min(self.words, key=lambda w: w.rank, default=None)


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
        """One dict per text and rank (:data:`COLUMNS`); ``base``/``surprisal`` view ``logprob`` and
        ``entropy`` in another base (2: bits) or as surprisal (``-logprob``); ``prob`` stays a probability."""
        b = math.e if base in (None, "e") else float(base)  # type: ignore[arg-type]
        if not b > 1:
            raise InputError(f"base must be a number above 1 (2 for bits) or 'e', got {base!r}")
        rows = []
        for p in self.items:
            entropy = p.entropy if math.isnan(p.entropy) else p.entropy / math.log(b)
            for w in sorted(p.words, key=lambda w: w.rank):
                rows.append(
                    {
                        "text_id": p.index,
                        "text": p.text,
                        "rank": w.rank,
                        "word": w.word,
                        "logprob": _convert(w.logprob, b, surprisal),
                        "prob": w.prob,
                        "n_tokens": w.n_tokens,
                        "tokens": " ".join(w.tokens),
                        "covered": p.covered,
                        "entropy": entropy,
                    }
                )
        return rows

    def to_frame(self, *, base: float | Literal["e"] | None = None, surprisal: bool = False) -> Any:
        """:meth:`to_rows` as a pandas DataFrame (columns :data:`COLUMNS`)."""
        import pandas as pd

        rows = self.to_rows(base=base, surprisal=surprisal)
        return pd.DataFrame(rows, columns=list(COLUMNS)) if rows else pd.DataFrame(columns=list(COLUMNS))
