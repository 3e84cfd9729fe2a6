"""Pack items into batches under a token budget, longest first.

In: per-item lengths and a budget of padded tokens per batch.
Out: lists of item indices. A batch's padded size (its count times its longest length)
stays within the budget; an item longer than the budget gets a batch of its own.
Longest first, so that an out-of-memory error shows up on the first batch, not the last.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["pack"]


def pack(lengths: Sequence[int] | np.ndarray, max_tokens: int) -> list[np.ndarray]:
    """Split item indices into batches whose padded size is at most ``max_tokens``."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    lengths = np.asarray(lengths, dtype=np.int64)
    # stable sort on the negated length keeps items of equal length in their original order
    order = np.argsort(-lengths, kind="stable")
    batches: list[np.ndarray] = []
    start = 0
    n = len(order)
    while start < n:
        longest = int(lengths[order[start]])
        size = max(1, max_tokens // max(longest, 1))
        batches.append(order[start : start + size])
        start += size
    return batches
