"""Pack items into batches under a token budget, longest first.

In: per-item lengths, a budget of padded tokens per batch, and how a batch may be padded.
Out: lists of item indices. A batch's padded size (its count times its longest length)
stays within the budget; an item longer than the budget gets a batch of its own.
Longest first, so that an out-of-memory error shows up on the first batch, not the last.

``padding="pad"`` mixes lengths (the shorter items padded); ``"equal"`` puts only items of one
length in a batch, so nothing is padded; ``"single"`` gives every item a batch of its own. A model
whose scores padding would change runs under one of the last two (:mod:`pllscore.engine.padding`).

``min_fill`` (padded batches only) also ends a batch at the first item shorter than that share of its
longest: where every position costs the same (an encoder-decoder's decoder), a batch of 4- to 12-token
items wastes half its rows on padding, and smaller batches of like lengths are faster.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["PADDINGS", "pack"]

#: the batching modes, from the fastest
PADDINGS = ("pad", "equal", "single")


def pack(
    lengths: Sequence[int] | np.ndarray, max_tokens: int, padding: str = "pad", *, min_fill: float = 0.0
) -> list[np.ndarray]:
    """Split item indices into batches whose padded size is at most ``max_tokens`` (``padding``, ``min_fill``:
    see above)."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    if padding not in PADDINGS:
        raise ValueError(f"padding must be one of {PADDINGS}, got {padding!r}")
    lengths = np.asarray(lengths, dtype=np.int64)
    # stable sort on the negated length keeps items of equal length in their original order
    order = np.argsort(-lengths, kind="stable")
    if padding == "single":
        return [order[i : i + 1] for i in range(len(order))]
    batches: list[np.ndarray] = []
    start = 0
    n = len(order)
    while start < n:
        longest = int(lengths[order[start]])
        size = max(1, max_tokens // max(longest, 1))
        if padding == "equal":  # stop at the first shorter item
            size = min(size, int(np.searchsorted(-lengths[order[start:]], -longest, side="right")))
        elif min_fill > 0:  # stop at the first item shorter than min_fill of the longest
            size = min(size, int(np.searchsorted(-lengths[order[start:]], -min_fill * longest, side="right")))
        batches.append(order[start : start + size])
        start += size
    return batches
