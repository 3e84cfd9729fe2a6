"""Kept for imports written before this module was split; import these names from :mod:`pllscore.scoring`.

The scorers live in :mod:`pllscore.scoring.base` (:class:`Scorer`), :mod:`pllscore.scoring.masked`,
:mod:`pllscore.scoring.causal` and :mod:`pllscore.scoring.api` (:func:`load`, :func:`as_scorer`, :func:`score`).
"""

from __future__ import annotations

from pllscore.scoring.api import as_scorer, load, score
from pllscore.scoring.base import Scorer
from pllscore.scoring.causal import CausalScorer
from pllscore.scoring.masked import MaskedScorer

__all__ = ["CausalScorer", "MaskedScorer", "Scorer", "as_scorer", "load", "score"]
