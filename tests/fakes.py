"""A scorer that returns fixed sentence scores: for testing what sits on top of the engine."""

from __future__ import annotations

import numpy as np

from pllscore.metrics import resolve_metrics
from pllscore.results.scores import Results, SentenceScore


class FakeScorer:
    """Scores each text with ``table[text]`` (plus ``offset[metric]``); counts the texts it was asked."""

    def __init__(self, table: dict[str, float], *, kind: str = "masked", name: str = "fake", offset=None) -> None:
        self.table, self.kind, self.name, self.revision = table, kind, name, None
        self.metric = ("word-l2r",) if kind == "masked" else None
        self.offset = offset or {}
        self.asked: list[str] = []

    def check(self, texts, **options):
        """Every text can be scored (the table job checks texts before scoring them)."""
        return len(list(texts))

    def score(self, texts, *, metric=None, progress=None, spans=None, **options):
        """``options``: the encoding options a real scorer takes (long, convention, words, ...), unused."""
        texts = [texts] if isinstance(texts, str) else list(texts)
        self.asked.extend(texts)
        metrics = ("causal",) if self.kind == "causal" else (self.metric if metric is None else resolve_metrics(metric))
        items = [
            SentenceScore(
                index=i,
                text=t,
                metric=m,
                model=self.name,
                pieces=(t,),
                offsets=((0, len(t)),),
                word_index=np.array([0]),
                word_spans=((0, len(t)),),
                logprobs=np.array([self.table[t] + self.offset.get(m, 0.0)]),
            )  # fmt: skip
            for m in metrics
            for i, t in enumerate(texts)
        ]
        return Results(tuple(items))
