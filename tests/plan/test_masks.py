"""Mask plans: hand-worked sets and properties. No torch here."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

from pllscore.metrics import METRICS
from pllscore.plan.align import align
from pllscore.plan.masks import build_plan, mask_positions

# [CLS] the ho ##oli ##gan wrecked the vehicle . [SEP]
HOOLIGAN_WORD_IDS = [None, 0, 1, 1, 1, 2, 3, 4, 5, None]


def _sets(metric: str, word_ids) -> dict[int, set[int]]:
    al = align(word_ids, [(0, 0)] * len(word_ids))
    return {p: set(mask_positions(metric, p, al.words[w], al.length)) for p, w in zip(al.positions, al.word_of)}


def _expand(runs) -> set[int]:
    return {p for a, b in runs for p in range(a, b)}


def test_word_l2r_hand_worked():
    assert _sets("word-l2r", HOOLIGAN_WORD_IDS) == {
        1: {1},
        2: {2, 3, 4},
        3: {3, 4},
        4: {4},
        5: {5},
        6: {6},
        7: {7},
        8: {8},
    }


def test_whole_word_hand_worked():
    sets = _sets("whole-word", HOOLIGAN_WORD_IDS)
    assert sets[2] == sets[3] == sets[4] == {2, 3, 4}
    assert sets[5] == {5}


def test_sentence_l2r_includes_closing_special_token():
    assert _sets("sentence-l2r", HOOLIGAN_WORD_IDS)[2] == set(range(2, 10))


def test_original_hand_worked():
    assert _sets("original", HOOLIGAN_WORD_IDS) == {p: {p} for p in range(1, 9)}


def test_whole_word_is_one_copy_per_word():
    plan = build_plan([list(range(10))], [align(HOOLIGAN_WORD_IDS, [(0, 0)] * 10)], ["whole-word"])
    assert plan.n_copies == 6
    assert plan.n_reads == 8


def test_metrics_share_copies():
    al = align(HOOLIGAN_WORD_IDS, [(0, 0)] * 10)
    separate = sum(build_plan([list(range(10))], [al], [m]).n_copies for m in METRICS)
    together = build_plan([list(range(10))], [al], list(METRICS))
    # one-token words share {t} across original, word-l2r, whole-word; the hooligan start shares {2,3,4}
    assert together.n_copies < separate
    assert together.n_copies == 8 + 2 + 1 + 7  # original, word-l2r extras, whole-word extra, sentence-l2r extras


def test_repeated_sentences_are_computed_once():
    al = align(HOOLIGAN_WORD_IDS, [(0, 0)] * 10)
    once = build_plan([list(range(10))], [al], ["original"])
    twice = build_plan([list(range(10))] * 2, [al, al], ["original"])
    assert twice.n_copies == once.n_copies
    assert list(twice.block(0, 0, 2)) == list(twice.block(0, 1, 2))


@st.composite
def word_id_layouts(draw):
    """[None] + word ids of contiguous words (1-4 tokens each) + [None]."""
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=8))
    ids: list[int | None] = [None]
    for w, k in enumerate(sizes):
        ids += [w] * k
    return ids + [None]


@given(st.lists(word_id_layouts(), min_size=1, max_size=4), st.sets(st.sampled_from(sorted(METRICS)), min_size=1))
def test_plan_serves_every_token_once_per_metric_with_the_right_mask(layouts, metric_set):
    metrics = sorted(metric_set)
    seqs = [[100 * i + p for p in range(len(ids))] for i, ids in enumerate(layouts)]
    als = [align(ids, [(0, 0)] * len(ids)) for ids in layouts]
    plan = build_plan(seqs, als, metrics)
    keys = set()
    for c in range(plan.n_copies):
        keys.add((plan.copy_seq[c], plan.copy_runs[c]))
    assert len(keys) == plan.n_copies  # copies are unique
    for k, m in enumerate(metrics):
        for i, (ids, al) in enumerate(zip(layouts, als)):
            reads = plan.block(k, i, len(layouts))
            assert len(reads) == len(al.positions)  # each scored token once
            for r, p in zip(reads, al.positions):
                c = int(__import__("numpy").searchsorted(plan.read_ptr, r, side="right") - 1)
                assert plan.read_pos[r] == p
                assert plan.copy_seq[c] == i
                assert _expand(plan.copy_runs[c]) == _sets(m, ids)[p]
                assert ids[p] is not None  # special tokens never scored


@given(word_id_layouts())
def test_one_token_words_make_three_metrics_equal(ids):
    single = [None] + list(range(len(ids) - 2)) + [None]
    a, b, c = (_sets(m, single) for m in ("original", "word-l2r", "whole-word"))
    assert a == b == c


def test_plan_does_not_import_torch():
    assert "pllscore.plan.masks" in sys.modules
    import subprocess

    code = "import sys, pllscore.plan.masks, pllscore.plan.batching, pllscore.plan.align; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
