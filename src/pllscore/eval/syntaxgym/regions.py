"""Region surprisals: each token goes to the region that holds its first non-space character.

A token belongs to the region holding the character it stands on, the first non-space character at or after
the token's start (:func:`pllscore.plan.align.anchors`, the rule of spans and words too): GPT-2's ``Ġthe``
starts at the space before ``the`` and goes with ``the``'s region, a token that is only whitespace (GPT-2's
lone ``Ġ`` before a comma) goes with the region of the next character, and every token of a character the
normaliser expands (NFKC's ``ﷺ``) goes with that character's region. Special tokens are never listed, so BOS
conditions the first token and is no region's. With ``final_eos`` a causal LM's log P(EOS | sentence) is one
more token of the last non-empty region (as lm-zoo's GPT-2 image counted it). A region's value is
``meta.metric`` of its tokens' surprisals in bits (``-log2 p``): ``sum`` (0 for an empty region), ``mean``,
``median``, ``range``, ``max``, ``min`` (NaN for an empty region: SyntaxGym 0.6 gives NaN for
``mean``/``median`` and fails on the others). A token without a score (a causal LM's first token when it has
no BOS) is left out; a region with tokens but none scored is NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pllscore.plan.align import owners

__all__ = ["aggregate", "region_of_tokens", "region_rows"]


def region_of_tokens(spans: Sequence[tuple[int, int] | None], anchors: Sequence[int]) -> list[int]:
    """Per token (the character of the sentence it stands on, :func:`pllscore.plan.align.anchors`), the index of
    its region in ``spans`` (None: an empty region)."""
    return owners(list(anchors), spans)


def aggregate(values: np.ndarray, metric: str, n_tokens: int) -> float:
    """``metric`` of a region's scored surprisals (bits); see the module's docstring for empty regions."""
    if n_tokens == 0:
        return 0.0 if metric == "sum" else math.nan
    if values.size == 0:  # tokens, none of them scored
        return math.nan
    if metric == "sum":
        return float(values.sum())
    if metric == "mean":
        return float(values.mean())
    if metric == "median":
        return float(np.median(values))
    if metric == "range":
        return float(np.ptp(values))
    return float(values.max() if metric == "max" else values.min())


def region_rows(condition: Any, score: Any, metric: str) -> list[tuple[int, str, float, int]]:
    """``(region_number, content, value, n_tokens)`` per region of ``condition`` (a
    :class:`~pllscore.eval.syntaxgym.suite.Condition`) from the scores of its sentence (``anchors`` and
    ``logprobs`` per token, as a :class:`~pllscore.eval.syntaxgym.scores.TokenScores` has them,
    and ``eos``: log P(EOS | sentence) or None)."""
    spans = condition.spans()
    owner = np.asarray(region_of_tokens(spans, score.anchors), dtype=np.int64)
    bits = -np.asarray(score.logprobs, dtype=np.float64) / math.log(2)
    eos = getattr(score, "eos", None)
    if eos is not None:  # one more token, of the last non-empty region
        owner = np.append(owner, max(r for r, span in enumerate(spans) if span is not None))
        bits = np.append(bits, -eos / math.log(2))
    rows = []
    for r, (number, content) in enumerate(zip(condition.numbers, condition.contents)):
        mine = bits[owner == r] if owner.size else bits[:0]
        n = int(mine.size)
        rows.append((number, content, aggregate(mine[~np.isnan(mine)], metric, n), n))
    return rows
