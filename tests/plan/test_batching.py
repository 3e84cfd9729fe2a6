"""Token-budget packing. No torch here."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pllscore.plan.batching import pack


@given(st.lists(st.integers(1, 100), max_size=60), st.integers(1, 500))
def test_every_item_once_and_within_budget(lengths, budget):
    batches = pack(lengths, budget)
    seen = np.concatenate(batches) if batches else np.array([], dtype=int)
    assert sorted(seen.tolist()) == list(range(len(lengths)))
    for b in batches:
        padded = len(b) * max(lengths[i] for i in b)
        assert padded <= budget or len(b) == 1


@given(st.lists(st.integers(1, 100), min_size=1, max_size=60), st.integers(1, 500))
def test_longest_first(lengths, budget):
    order = [lengths[i] for b in pack(lengths, budget) for i in b]
    assert order == sorted(order, reverse=True)


def test_budget_must_be_positive():
    with pytest.raises(ValueError, match="max_tokens"):
        pack([3], 0)


@given(st.lists(st.integers(1, 100), max_size=60), st.integers(1, 500), st.floats(0.1, 1.0))
def test_min_fill_keeps_every_item_within_its_share_of_the_batchs_longest(lengths, budget, fill):
    batches = pack(lengths, budget, min_fill=fill)
    seen = np.concatenate(batches) if batches else np.array([], dtype=int)
    assert sorted(seen.tolist()) == list(range(len(lengths)))
    for b in batches:
        longest = max(lengths[i] for i in b)
        assert len(b) * longest <= budget or len(b) == 1
        assert all(lengths[i] >= fill * longest for i in b)
    assert len(batches) >= len(pack(lengths, budget))  # never fewer batches than without it
