"""Pseudo-log-likelihood scoring with a masked LM: the masked kind's hooks of the scoring template.

Encoded texts -> windows and the mask plan (:class:`~pllscore.scoring.stitching.MaskedWork`,
:func:`~pllscore.plan.masks.build_plan`) -> :class:`~pllscore.engine.masked.MaskedEngine` -> per
(metric, text) the scores of the text's tokens.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from pllscore.engine.loading import Kind
from pllscore.engine.masked import MaskedEngine
from pllscore.errors import ModelError
from pllscore.metrics import DEFAULT_METRIC, resolve_metrics
from pllscore.plan.masks import build_plan
from pllscore.scoring.base import Batch, Scored, Scorer
from pllscore.scoring.outputs import wants_for
from pllscore.scoring.stitching import MaskedWork

__all__ = ["MaskedScorer"]


class MaskedScorer(Scorer):
    """Pseudo-log-likelihood scoring with a masked LM (BERT, RoBERTa, ELECTRA, XLM-R, ModernBERT, ...).

    :meth:`score` gives each text's PLL under one or more of the four PLL metrics (``metric``: the
    scorer's default).
    """

    kind: Kind = "masked"
    #: where a masked token is read: at its own position (0), or one before it (1: :mod:`pllscore.scoring.mntp`)
    read_offset = 0

    def __init__(
        self, model: Any, tokenizer: Any, *, metric: str | Sequence[str] = DEFAULT_METRIC, **kwargs: Any
    ) -> None:
        super().__init__(model, tokenizer, **kwargs)
        if tokenizer.mask_token_id is None:
            raise ModelError(f"the tokenizer of {self.name!r} has no mask token, so it cannot be used for PLL scoring")
        self.metric = resolve_metrics(metric)
        self.engine = MaskedEngine(
            model,
            mask_token_id=tokenizer.mask_token_id,
            read_offset=self.read_offset,
            padding=self.padding,
            **self._engine_options,
        )

    def _metrics(self, metric: str | Sequence[str] | None) -> tuple[str, ...]:
        return self.metric if metric is None else resolve_metrics(metric)

    def _encoding(self) -> tuple[bool, int | None]:
        return True, None

    def _run(self, batch: Batch) -> Iterator[Scored]:
        encoded, keeps, metrics, asked, progress = batch
        work = MaskedWork.build(encoded, keeps, self.max_length)
        plan = build_plan(work.sequences, work.alignments, metrics)
        got: dict[str, np.ndarray] = {}
        if asked:
            got = self.engine.run_outputs(plan, wants_for(asked), max_tokens=self.max_tokens, progress=progress)
            reads = got["logprob"]
        else:
            reads = self.engine.run(plan, max_tokens=self.max_tokens, progress=progress)
        for k, m in enumerate(metrics):
            for i in range(len(encoded)):
                extra = {n: work.values(plan, got[n], k, i) for n in asked}
                yield Scored(m, i, work.values(plan, reads, k, i), keeps[i], extra)
