"""A scorer that returns fixed sentence scores: for testing what sits on top of the engine."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from pllscore.metrics import resolve_metrics
from pllscore.results.scores import Results, SentenceScore
from pllscore.scoring.encoding import Encodings


def encode_words(texts, **options) -> Encodings:
    """What a real scorer's ``encode`` returns, for a stand-in whose tokens are its texts' words: the texts, one
    token id per word, and the options (long, context, words, convention, ...) they were encoded with."""
    texts = [texts] if isinstance(texts, str) else list(texts)
    encoded = [SimpleNamespace(ids=list(range(len(t.split()) or 1))) for t in texts]
    return Encodings(texts=texts, encoded=encoded, made_by="fake", **options)


def texts_of(texts) -> list[str]:
    """The texts a stand-in is asked to score: given as a string, a list, or encoded (:func:`encode_words`)."""
    if isinstance(texts, Encodings):
        return list(texts.texts)
    return [texts] if isinstance(texts, str) else list(texts)


class FakeScorer:
    """Scores each text with ``table[text]`` (plus ``offset[metric]``); counts the texts it was asked."""

    def __init__(self, table: dict[str, float], *, kind: str = "masked", name: str = "fake", offset=None) -> None:
        self.table, self.kind, self.name, self.revision = table, kind, name, None
        self.metric = ("word-l2r",) if kind == "masked" else None
        self.offset = offset or {}
        self.asked: list[str] = []

    def check(self, texts, **options):
        """Every text can be scored."""
        return len(list(texts))

    def encode(self, texts, **options):
        """The texts encoded (the table job encodes them, which checks them, before scoring them)."""
        return encode_words(texts, **options)

    def score(self, texts, *, metric=None, progress=None, spans=None, **options):
        """``texts``: texts or their encodings; ``options``: the encoding options a real scorer takes (long,
        convention, words, ...), unused."""
        texts = texts_of(texts)
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
