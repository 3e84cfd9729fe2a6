"""The options of the steps after the LM, gathered once: :class:`RescoreSettings`.

:func:`~pllscore.rescoring.run.rescore` and :func:`~pllscore.rescoring.run.rescore_frame` keep
their explicit keyword arguments (the public API) and each builds one of these, so the checks
and the combine/choose/evaluate steps are written once, for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pllscore.errors import InputError
from pllscore.rescoring.evaluation import check_eval_metric
from pllscore.rescoring.tuning import DEFAULT_BETA_GRID, DEFAULT_LAMBDA_GRID, parse_grid

__all__ = ["RescoreSettings"]


@dataclass(frozen=True)
class RescoreSettings:
    """How a scored n-best table is combined, chosen and evaluated; the arguments of :func:`rescore_frame`.

    ``eval_metric`` is checked and lower-cased on construction. ``ref_column`` None means no
    evaluation; ``split_column`` None means one split, ``all``.
    """

    lam: float = 1.0
    beta: float = 0.0
    tune_on_dev: bool = False
    lambda_grid: Sequence[float] | str = DEFAULT_LAMBDA_GRID
    beta_grid: Sequence[float] | str = DEFAULT_BETA_GRID
    eval_metric: str = "wer"
    utt_column: str = "utt_id"
    text_column: str = "hyp"
    score_column: str = "score"
    ref_column: str | None = "ref"
    split_column: str | None = None

    def __post_init__(self) -> None:
        # frozen, so the normalized name goes in the way dataclasses themselves do it
        object.__setattr__(self, "eval_metric", check_eval_metric(self.eval_metric))

    def checked(self, frame: Any) -> RescoreSettings:
        """These settings, with what tuning on ``frame`` needs checked and the grids parsed into lists.

        Without ``tune_on_dev``, the settings unchanged (the grids are then never read). Raises
        :class:`~pllscore.InputError` without references, without a split column, without a
        dev row, or for a grid that cannot be read.
        """
        if not self.tune_on_dev:
            return self
        if self.ref_column is None:
            raise InputError("--tune needs references: name the reference column with --ref-column")
        if self.split_column is None:
            raise InputError("--tune needs a dev/test split: name a column whose values are dev or test")
        if not (frame[self.split_column] == "dev").any():
            raise InputError(f"--tune needs dev utterances: no row has split 'dev' in column {self.split_column!r}")
        return replace(
            self, lambda_grid=parse_grid(self.lambda_grid, "lambda"), beta_grid=parse_grid(self.beta_grid, "beta")
        )
