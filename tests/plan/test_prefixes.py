"""Prefix trees: every sequence is a path of its row, each distinct prefix is one node, rows fit the capacity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pllscore.plan.prefixes import ancestor_mask, common_prefix, pack_trees

# a small alphabet, so that random sequences share prefixes often
seqs = st.lists(st.lists(st.integers(0, 3), min_size=0, max_size=9), min_size=1, max_size=25)


def test_hand_worked_trie():
    rows = pack_trees([[1, 2, 3], [1, 5], [1, 2, 4]], capacity=100)
    assert len(rows) == 1
    r = rows[0]
    # lexicographic order: [1,2,3], [1,2,4], [1,5]; nodes 1, 1-2, 1-2-3, 1-2-4, 1-5
    assert r.items.tolist() == [0, 2, 1]
    assert r.tokens.tolist() == [1, 2, 3, 4, 5]
    assert r.parents.tolist() == [-1, 0, 1, 1, 0]
    assert r.depths.tolist() == [0, 1, 2, 2, 1]
    assert [p.tolist() for p in r.paths] == [[0, 1, 2], [0, 1, 3], [0, 4]]
    assert ancestor_mask(r.parents).astype(int).tolist() == [
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 1, 1, 0, 0],
        [1, 1, 0, 1, 0],
        [1, 0, 0, 0, 1],
    ]


def test_capacity_closes_rows_and_long_sequences_get_their_own():
    rows = pack_trees([[7] * 5, [1, 2], [1, 3], [1, 4]], capacity=4)
    # [1,2],[1,3],[1,4] need 4 nodes; [7]*5 is longer than the capacity: a row of its own
    assert [r.items.tolist() for r in rows] == [[1, 2, 3], [0]]
    assert [r.size for r in rows] == [4, 5]


def test_common_prefix():
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix([1, 2], [1, 2, 3]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([2], [1]) == 0


def test_capacity_must_be_positive():
    with pytest.raises(ValueError, match="capacity"):
        pack_trees([[1]], 0)


@given(items=seqs, capacity=st.integers(1, 30))
def test_rows_are_tries_of_their_sequences(items, capacity):
    rows = pack_trees(items, capacity)
    seen = np.concatenate([r.items for r in rows])
    assert sorted(seen.tolist()) == list(range(len(items)))
    for r in rows:
        assert r.size <= capacity or len(r.items) == 1
        assert np.all(r.parents < np.arange(r.size))  # parents come first
        prefixes = set()
        for i, path in zip(r.items, r.paths):
            s = items[i]
            assert r.tokens[path].tolist() == s
            assert r.depths[path].tolist() == list(range(len(s)))
            if len(s):
                assert r.parents[path[0]] == -1
                assert r.parents[path[1:]].tolist() == path[:-1].tolist()
            prefixes.update(tuple(s[: k + 1]) for k in range(len(s)))
        # one node per distinct prefix: nothing is computed twice within a row
        assert r.size == len(prefixes)
        mask = ancestor_mask(r.parents)
        for path in r.paths:
            for k, node in enumerate(path):
                assert set(np.flatnonzero(mask[node]).tolist()) == set(path[: k + 1].tolist())


@given(items=seqs)
def test_one_row_when_everything_fits(items):
    rows = pack_trees(items, 10_000)
    assert len(rows) == 1
    assert rows[0].size == len({tuple(s[: k + 1]) for s in items for k in range(len(s))})
