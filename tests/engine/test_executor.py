"""Batch execution: every item once, and CUDA out-of-memory halves the budget without losing work."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pllscore import ModelError
from pllscore.engine.executor import run_batches


def test_oom_halves_budget_and_finishes_every_item_once():
    lengths = np.array([5, 9, 3, 9, 7, 2, 8, 8, 1, 6] * 4)
    seen: list[int] = []
    sizes: list[int] = []

    def run(batch):
        padded = len(batch) * int(lengths[batch].max())
        if padded > 20:  # "GPU memory" holds 20 padded tokens
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (fake)")
        sizes.append(padded)
        seen.extend(batch.tolist())

    run_batches(lengths, 200, run, progress=False)
    assert sorted(seen) == list(range(len(lengths)))
    assert max(sizes) <= 20


def test_oom_on_a_single_item_is_a_clear_error():
    def run(batch):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory (fake)")

    with pytest.raises(ModelError, match="out of GPU memory even for a single input of 9 tokens"):
        run_batches(np.array([9, 3]), 9, run, progress=False)
