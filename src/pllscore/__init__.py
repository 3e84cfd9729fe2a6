"""pllscore: exact sentence, word and token scores from masked and causal language models.

>>> import pllscore
>>> scorer = pllscore.load("bert-base-cased")                       # doctest: +SKIP
>>> scorer.score(["The traveler lost the souvenir."])[0].total      # doctest: +SKIP
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from pllscore.errors import InputError, InputTooLongError, ModelError, PllscoreError
from pllscore.metrics import DEFAULT_METRIC, METRICS
from pllscore.results import Results, SentenceScore, TokenScore, WordScore, to_frame

__version__ = "0.1.0"

__all__ = [
    "CausalScorer",
    "DEFAULT_METRIC",
    "InputError",
    "InputTooLongError",
    "METRICS",
    "MaskedScorer",
    "ModelError",
    "PllscoreError",
    "Results",
    "Scorer",
    "SentenceScore",
    "TokenScore",
    "WordScore",
    "__version__",
    "load",
    "score",
    "to_frame",
]

# torch and transformers load only when a scorer is first used, so `pllscore --help` stays fast
_LAZY = {"CausalScorer", "MaskedScorer", "Scorer", "load", "score"}

if TYPE_CHECKING:
    from pllscore.scorer import CausalScorer, MaskedScorer, Scorer, load, score


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module("pllscore.scorer"), name)
    raise AttributeError(f"module 'pllscore' has no attribute {name!r}")
