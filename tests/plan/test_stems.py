"""Shared decoder stems of an encoder-decoder batch (plan.stems). No torch here."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pllscore.plan.stems import plan_stems

# decoder inputs all open with the start token 0, as the engine builds them
sequence = st.lists(st.integers(1, 4), min_size=0, max_size=8).map(lambda s: np.array([0, *s]))


@given(st.lists(st.tuples(sequence, st.integers(0, 2)), max_size=30))
def test_groups_share_a_source_and_a_stem_shorter_than_every_member(items):
    seqs = [s for s, _ in items]
    sources = [src for _, src in items]
    plan = plan_stems(seqs, sources)
    grouped = [int(i) for m in plan.members for i in m]
    assert sorted(grouped + plan.alone.tolist()) == list(range(len(items)))  # every item once
    saved = 0
    for stem, members in zip(plan.stems, plan.members):
        assert len(members) >= 2 and len(stem) >= 2
        assert len({sources[i] for i in members}) == 1
        for i in members:
            assert len(stem) <= len(seqs[i]) and np.array_equal(seqs[i][: len(stem)], stem)
        saved += (len(members) - 1) * len(stem)
    assert plan.saved == saved


def test_a_minimal_pair_and_an_n_best_list():
    pair = [np.array([0, 5, 6, 7, 8]), np.array([0, 5, 6, 9, 8])]  # share [0, 5, 6]: the stem
    nbest = [np.array([0, 1, 2, 3]), np.array([0, 1, 2, 4]), np.array([0, 1, 2, 3, 4])]
    plan = plan_stems([*pair, *nbest, np.array([0, 9])], [0, 0, 1, 1, 1, 0])
    stems = {tuple(s): sorted(m.tolist()) for s, m in zip(plan.stems, plan.members)}
    # the n-best list: [0, 1, 2] is shared by all three (one more token, 3, by two of them only)
    assert {k: v for k, v in ((tuple(int(t) for t in s), m) for s, m in stems.items())} == {
        (0, 5, 6): [0, 1],
        (0, 1, 2): [2, 3, 4],
    }
    assert plan.alone.tolist() == [5] and plan.saved == 1 * 3 + 2 * 3
