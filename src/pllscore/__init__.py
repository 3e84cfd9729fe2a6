"""pllscore: exact sentence, word and token scores from masked and causal language models.

>>> import pllscore
>>> scorer = pllscore.load("bert-base-cased")                       # doctest: +SKIP
>>> scorer.score(["The traveler lost the souvenir."])[0].total      # doctest: +SKIP
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from pllscore.errors import InputError, InputTooLongError, ModelError, NonFiniteError, PllscoreError
from pllscore.frames import to_frame
from pllscore.metrics import DEFAULT_METRIC, METRICS
from pllscore.results import Results, SentenceScore, TokenScore, WordScore

__version__ = "0.1.0"

__all__ = [
    "CausalScorer",
    "DEFAULT_METRIC",
    "Explanation",
    "InputError",
    "InputTooLongError",
    "Interrupted",
    "METRICS",
    "MaskedScorer",
    "ModelError",
    "NonFiniteError",
    "PllscoreError",
    "Results",
    "ScoreSummary",
    "Scorer",
    "SentenceScore",
    "TokenScore",
    "WordScore",
    "__version__",
    "explain",
    "load",
    "score",
    "score_dataset",
    "score_file",
    "to_frame",
]

# torch and transformers load only when a scorer is first used, so `pllscore --help` stays fast
_LAZY = {
    "CausalScorer": "pllscore.scorer",
    "MaskedScorer": "pllscore.scorer",
    "Scorer": "pllscore.scorer",
    "load": "pllscore.scorer",
    "score": "pllscore.scorer",
    "score_file": "pllscore.scorefile",
    "ScoreSummary": "pllscore.scorefile",
    "Interrupted": "pllscore.scorefile",
    "explain": "pllscore.explanation",
    "score_dataset": "pllscore.distributed.ray",
    "Explanation": "pllscore.explanation",
}

if TYPE_CHECKING:
    from pllscore.distributed.ray import score_dataset
    from pllscore.explanation import Explanation, explain
    from pllscore.scorefile import Interrupted, ScoreSummary, score_file
    from pllscore.scorer import CausalScorer, MaskedScorer, Scorer, load, score


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pllscore' has no attribute {name!r}")
