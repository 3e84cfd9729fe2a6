"""What a model kind's run (:meth:`pllscore.scoring.base.Scorer._run`) is given and gives back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from pllscore.scoring.encoding import Encoded

__all__ = ["Batch", "Scored"]


class Scored(NamedTuple):
    """One (metric, text) of a kind's run (:meth:`Scorer._run`)."""

    metric: str
    #: which text of the batch
    index: int
    #: per token of the result (the text's tokens and its scored special tokens, in sequence order),
    #: its log-probability (NaN: not scored)
    values: np.ndarray
    #: the positions the engine read, for the finite check (None: all)
    read: np.ndarray | None
    #: optional per-token arrays of the results (entropy, rank, word_correction)
    extra: dict[str, np.ndarray]


class Batch(NamedTuple):
    """What a kind's run (:meth:`Scorer._run`) scores: texts encoded, and what to compute for them."""

    encoded: Sequence[Encoded]
    #: per text, which of its scored positions to score (None: all), from ``spans``
    keeps: Sequence[np.ndarray | None]
    metrics: tuple[str, ...]
    #: the per-token arrays to fill besides the scores (what :meth:`Scorer._outputs` returned)
    asked: tuple[str, ...]
    progress: bool | None
