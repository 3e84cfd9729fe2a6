"""Windows over texts longer than the model allows. Pure logic, no torch.

Masked LMs: each target token is scored in a window of ``size`` content tokens placed to give
it as much context on both sides as the text allows: centred on the target
(``target - size // 2``), then shifted inside the text. Special tokens are added to every
window as for a normal input. Targets whose windows start at the same place share them.

Causal LMs: windows of ``size`` tokens that advance by ``stride``; the first window scores
all its tokens, each later one only the ``stride`` tokens after the previous window, with the
``size - stride`` tokens before them as context (the strided evaluation of the
transformers perplexity guide).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["causal_windows", "centred_starts"]


def centred_starts(n: int, size: int, targets: Sequence[int]) -> list[int]:
    """Per target (a content-token index in ``0..n-1``), the start of its window of ``size`` tokens."""
    if size < 1:
        raise ValueError(f"window size must be positive, got {size}")
    if n <= size:
        return [0] * len(targets)
    return [min(max(t - size // 2, 0), n - size) for t in targets]


def causal_windows(n: int, size: int, stride: int) -> list[tuple[int, int, int]]:
    """Windows ``(begin, end, first)`` over ``n`` tokens: the window holds ``begin:end`` and scores
    positions ``first:end`` (position 0 is never scored: it has no context). Every position
    ``1..n-1`` is scored by exactly one window."""
    if size < 2:
        raise ValueError(f"window size must be at least 2, got {size}")
    if not 1 <= stride <= size - 1:
        raise ValueError(f"stride must be between 1 and size - 1 = {size - 1}, got {stride}")
    end = min(size, n)
    out = [(0, end, 1)]
    while end < n:
        new_end = min(end + stride, n)
        out.append((new_end - size, new_end, end))
        end = new_end
    return out
