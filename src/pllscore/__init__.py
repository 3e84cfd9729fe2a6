"""pllscore: exact sentence, word and token scores from masked and causal language models.

>>> import pllscore
>>> scorer = pllscore.load("bert-base-cased")                       # doctest: +SKIP
>>> scorer.score(["The traveler lost the souvenir."])[0].total      # doctest: +SKIP
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from pllscore._version import __version__
from pllscore.errors import InputError, InputTooLongError, ModelError, NonFiniteError, PllscoreError
from pllscore.metrics import DEFAULT_METRIC, METRICS
from pllscore.results.frames import to_frame
from pllscore.results.scores import Results, SentenceScore, TokenScore, WordScore

__all__ = [
    "CausalScorer",
    "DEFAULT_METRIC",
    "Explanation",
    "InputError",
    "InputTooLongError",
    "Interrupted",
    "METRICS",
    "MaskedScorer",
    "MntpScorer",
    "ModelError",
    "NonFiniteError",
    "PllscoreError",
    "Prediction",
    "PredictionWarning",
    "Predictions",
    "Results",
    "ScoreSummary",
    "Scorer",
    "SentenceScore",
    "Seq2SeqScorer",
    "SmallDataWarning",
    "TokenScore",
    "WordScore",
    "__version__",
    "babylm",
    "explain",
    "load",
    "predict",
    "reading_times",
    "score",
    "score_dataset",
    "score_file",
    "syntaxgym",
    "to_frame",
]

# torch and transformers load only when a scorer is first used, so `pllscore --help` stays fast
_LAZY = {
    "PredictionWarning": "pllscore.results.predictions",
    "SmallDataWarning": "pllscore.eval.reading_times.run",
    "CausalScorer": "pllscore.scoring.causal",
    "MaskedScorer": "pllscore.scoring.masked",
    "MntpScorer": "pllscore.scoring.mntp",
    "Scorer": "pllscore.scoring.base",
    "Seq2SeqScorer": "pllscore.scoring.seq2seq",
    "load": "pllscore.scoring.api",
    "score": "pllscore.scoring.api",
    "predict": "pllscore.scoring.api",
    "Prediction": "pllscore.results.predictions",
    "Predictions": "pllscore.results.predictions",
    "score_file": "pllscore.jobs.local",
    "ScoreSummary": "pllscore.jobs.local",
    "Interrupted": "pllscore.jobs.local",
    "explain": "pllscore.analysis.explanation",
    "score_dataset": "pllscore.jobs.ray",
    "Explanation": "pllscore.analysis.explanation",
    "syntaxgym": "pllscore.eval.syntaxgym.run",
    "reading_times": "pllscore.eval.reading_times.run",
    "babylm": "pllscore.eval.babylm.run",
}

if TYPE_CHECKING:
    from pllscore.analysis.explanation import Explanation, explain
    from pllscore.eval.babylm.run import babylm
    from pllscore.eval.reading_times.run import SmallDataWarning, reading_times
    from pllscore.eval.syntaxgym.run import syntaxgym
    from pllscore.jobs.local import Interrupted, ScoreSummary, score_file
    from pllscore.jobs.ray import score_dataset
    from pllscore.results.predictions import Prediction, Predictions, PredictionWarning
    from pllscore.scoring.api import load, predict, score
    from pllscore.scoring.base import Scorer
    from pllscore.scoring.causal import CausalScorer
    from pllscore.scoring.masked import MaskedScorer
    from pllscore.scoring.mntp import MntpScorer
    from pllscore.scoring.seq2seq import Seq2SeqScorer


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pllscore' has no attribute {name!r}")
