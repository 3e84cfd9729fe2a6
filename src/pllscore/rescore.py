"""N-best rescoring (see :mod:`pllscore.rescoring`): its public names."""

from pllscore.rescoring.choose import choose, combine
from pllscore.rescoring.evaluate import (
    DEFAULT_BETA_GRID,
    DEFAULT_LAMBDA_GRID,
    Tuning,
    evaluate,
    oracle_wer,
    parse_grid,
    tune,
)
from pllscore.rescoring.nbest import check_nbest, read_nbest
from pllscore.rescoring.run import RescoreResult, RescoreSummary, rescore, rescore_frame
from pllscore.rescoring.scores import score_hypotheses

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
