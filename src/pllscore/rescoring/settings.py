"""The options of the steps after the LM, gathered once: :class:`RescoreSettings`.

:func:`~pllscore.rescoring.run.rescore` and :func:`~pllscore.rescoring.run.rescore_frame` keep
their explicit keyword arguments (the public API) and each builds one of these, so the checks
and the combine/choose/evaluate steps are written once, for both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from pllscore.errors import InputError
from pllscore.rescoring.evaluation import check_eval_metric
from pllscore.rescoring.nbest import NbestColumns, refuse_unknown
from pllscore.rescoring.tuning import DEFAULT_BETA_GRID, DEFAULT_LAMBDA_GRID, parse_grid

__all__ = ["RescoreSettings"]


@dataclass(frozen=True)
class RescoreSettings:
    """How a scored n-best table is combined, chosen and evaluated; the arguments of :func:`rescore_frame`.

    ``eval_metric`` is checked and lower-cased on construction. ``columns.ref`` None means no
    evaluation; ``columns.split`` None means one split, ``all``.
    """

    lam: float = 1.0
    beta: float = 0.0
    tune_on_dev: bool = False
    lambda_grid: Sequence[float] | str = DEFAULT_LAMBDA_GRID
    beta_grid: Sequence[float] | str = DEFAULT_BETA_GRID
    eval_metric: str = "wer"
    columns: NbestColumns = field(default_factory=lambda: NbestColumns(ref="ref"))

    def __post_init__(self) -> None:
        # frozen, so the normalized name goes in the way dataclasses themselves do it
        object.__setattr__(self, "eval_metric", check_eval_metric(self.eval_metric))

    @classmethod
    def of(cls, options: Mapping[str, Any], what: str, *, ref: str | None = "ref") -> RescoreSettings:
        """The settings of the keyword options of :func:`rescore_frame` or :func:`rescore` (``what``): the
        fields above, and the ``*_column`` names of :class:`NbestColumns` (``ref``: the default reference
        column). Another keyword is refused."""
        rest = dict(options)
        columns = NbestColumns.take(rest, ref=ref)
        own = {f.name: rest.pop(f.name) for f in fields(cls) if f.name in rest and f.name != "columns"}
        refuse_unknown(rest, what)
        return cls(columns=columns, **own)

    def checked(self, frame: Any) -> RescoreSettings:
        """These settings, with what tuning on ``frame`` needs checked and the grids parsed into lists.

        Without ``tune_on_dev``, the settings unchanged (the grids are then never read). Raises
        :class:`~pllscore.InputError` without references, without a split column, without a
        dev row, or for a grid that cannot be read.
        """
        if not self.tune_on_dev:
            return self
        split = self.columns.split
        if self.columns.ref is None:
            raise InputError("--tune needs references: name the reference column with --ref-column")
        if split is None:
            raise InputError("--tune needs a dev/test split: name a column whose values are dev or test")
        if not (frame[split] == "dev").any():
            raise InputError(f"--tune needs dev utterances: no row has split 'dev' in column {split!r}")
        return replace(
            self, lambda_grid=parse_grid(self.lambda_grid, "lambda"), beta_grid=parse_grid(self.beta_grid, "beta")
        )
