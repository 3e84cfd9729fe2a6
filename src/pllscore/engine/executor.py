"""Run items in batches under a token budget, with a progress bar and CUDA out-of-memory back-off.

The executor knows nothing about models: it is given item lengths and a function that
runs one batch of item indices. On a CUDA out-of-memory error it halves the budget and
re-packs the items not yet done, so no finished work is lost.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from pllscore.errors import ModelError
from pllscore.plan.batching import pack

__all__ = ["precision", "run_batches"]


def precision(device: torch.device, dtype: torch.dtype | None) -> Any:
    """Autocast to ``dtype`` on ``device``, or nothing for float32 (the exact setting)."""
    if dtype is None or dtype == torch.float32:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def run_batches(
    lengths: np.ndarray,
    max_tokens: int,
    run: Callable[[np.ndarray], None],
    *,
    progress: bool | None = None,
    desc: str = "scoring",
    unit: str = "copy",
    counts: np.ndarray | None = None,
    padding: str = "pad",
    min_fill: float = 0.0,
) -> None:
    """Call ``run`` on batches of item indices until every item is done.

    ``counts``: how far each item moves the progress bar (default 1 each; a row of texts counts its texts).
    ``padding``: whether a batch may mix lengths; ``min_fill``: how short its items may be against its longest
    (:func:`pllscore.plan.batching.pack`).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    counts = np.ones(len(lengths), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    todo = np.arange(len(lengths))
    budget = max_tokens
    # progress=None: tqdm shows a bar only when stderr is a terminal
    with tqdm(
        total=int(counts.sum()), desc=desc, unit=unit, disable=None if progress is None else not progress, leave=False
    ) as bar:
        while len(todo):
            done = np.zeros(len(todo), dtype=bool)
            try:
                for batch in pack(lengths[todo], budget, padding, min_fill=min_fill):
                    run(todo[batch])
                    done[batch] = True
                    bar.update(int(counts[batch].sum()))
            except torch.cuda.OutOfMemoryError as e:
                torch.cuda.empty_cache()
                if budget <= int(lengths[todo[~done]].max()):
                    raise ModelError(
                        f"out of GPU memory even for a single input of {int(lengths[todo[~done]].max())} tokens; "
                        "use a smaller dtype (bfloat16) or a device with more memory"
                    ) from e
                budget //= 2
            todo = todo[~done]
