"""N-best rescoring with a language model: the public names of :mod:`pllscore.rescoring`.

Kept as the import path the CLI, the README and users' code have always used
(``from pllscore.rescore import rescore``); the code lives in :mod:`pllscore.rescoring`.
"""

from __future__ import annotations

from pllscore.rescoring.choice import choose, combine
from pllscore.rescoring.evaluation import EVAL_METRICS as EVAL_METRICS
from pllscore.rescoring.evaluation import evaluate, oracle_wer
from pllscore.rescoring.lmscores import score_hypotheses
from pllscore.rescoring.nbest import ADDED as ADDED
from pllscore.rescoring.nbest import SPLITS as SPLITS
from pllscore.rescoring.nbest import check_nbest, read_nbest
from pllscore.rescoring.run import rescore, rescore_frame
from pllscore.rescoring.summary import RescoreResult, RescoreSummary
from pllscore.rescoring.tuning import DEFAULT_BETA_GRID, DEFAULT_LAMBDA_GRID, Tuning, parse_grid, tune

# EVAL_METRICS, ADDED and SPLITS are importable from here, as before, but not in __all__
__all__ = [
    "DEFAULT_BETA_GRID",
    "DEFAULT_LAMBDA_GRID",
    "RescoreResult",
    "RescoreSummary",
    "Tuning",
    "check_nbest",
    "choose",
    "combine",
    "evaluate",
    "oracle_wer",
    "parse_grid",
    "read_nbest",
    "rescore",
    "rescore_frame",
    "score_hypotheses",
    "tune",
]
