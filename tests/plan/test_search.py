"""The exact top-k search against brute-force enumeration, with a fake log-prob function. No torch here."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pllscore.errors import InputError
from pllscore.plan.search import Expansion, Frame, best_tokens, search
from pllscore.plan.slots import find_slots
from pllscore.plan.word_classes import word_classes

V = 7
MASKS = {
    "first": np.array([0, 1, 1, 1, 1, 0, 0], dtype=bool),
    "plain_first": np.array([0, 0, 0, 1, 1, 1, 1], dtype=bool),
    "continuation": np.array([0, 0, 0, 1, 1, 1, 1], dtype=bool),
}
ENDS = np.array([1, 1, 1, 0, 0, 0, 0], dtype=bool)  # EOS (0) and the word-beginning tokens


def _lp(text: int, length: int, prefix: tuple[int, ...]) -> np.ndarray:
    seed = zlib.crc32(repr((text, length, prefix)).encode())
    x = np.random.default_rng(seed).normal(0, 2, V)
    return x - np.logaddexp.reduce(x)


def _end(text: int, prefix: tuple[int, ...]) -> float:
    return float(np.logaddexp.reduce(_lp(text, 0, prefix)[ENDS]))


def _accept(text: int, tokens: tuple[int, ...]) -> bool:
    return (sum(tokens) + text) % 5 != 0  # a stand-in for the round trip: some sequences do not re-tokenise


class Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self, requests):
        self.calls += 1
        out = []
        for r in requests:
            lp = _lp(r.text, r.length, r.prefix)
            ids, values = best_tokens(lp, MASKS[r.allowed], r.top)
            out.append(Expansion(ids, values, _end(r.text, r.prefix) if r.end else float("nan")))
        return out


def brute(frame: Frame, text: int, k: int, word_tokens: int, shortest: int = 1) -> list[tuple[tuple[int, ...], float]]:
    words = []
    for n in range(shortest, word_tokens + 1):
        firsts = np.flatnonzero(MASKS[frame.first])
        rest = [np.flatnonzero(MASKS["continuation"])] * (n - 1)
        for seq in itertools.product(firsts, *rest):
            seq = tuple(int(t) for t in seq)
            if frame.causal:
                base = -_end(text, ()) if frame.denominator else 0.0
                value = base + sum(_lp(text, 0, seq[:j])[t] for j, t in enumerate(seq)) + _end(text, seq)
            else:
                value = sum(_lp(text, n, seq[:j])[t] for j, t in enumerate(seq))
            if _accept(text, seq):
                words.append((seq, float(value)))
    words.sort(key=lambda w: -w[1])
    return words[:k]


@settings(max_examples=60, deadline=None)
@given(
    k=st.integers(0, 15),
    word_tokens=st.integers(1, 3),
    width=st.integers(1, 4),
    top=st.integers(1, 5),
    causal=st.booleans(),
    denominator=st.booleans(),
    plain=st.booleans(),
    shortest=st.integers(1, 3),
)
def test_search_equals_brute_force(k, word_tokens, width, top, causal, denominator, plain, shortest):
    frames = [Frame("plain_first" if plain else "first", causal, denominator) for _ in range(3)]
    counter = Counter()
    options = {"width": width, "top": top, "shortest": shortest}
    got = search(frames, counter, _accept, k=k, word_tokens=word_tokens, **options)
    for text, frame in enumerate(frames):
        want = brute(frame, text, k, word_tokens, shortest)
        assert [f.tokens for f in got[text].words] == [w for w, _ in want]
        np.testing.assert_allclose([f.logprob for f in got[text].words], [v for _, v in want], atol=1e-12, rtol=0)
        assert got[text].complete


def test_a_text_that_keeps_failing_stops_with_the_best_it_found():
    frames = [Frame(), Frame()]
    got = search(frames, Counter(), lambda text, tokens: text == 1, k=5, word_tokens=3, max_steps=20)
    free = search(frames, Counter(), lambda text, tokens: True, k=5, word_tokens=3)
    assert got[0].words == [] and got[1] == free[1]  # text 1 accepts all: its top 5 come before its steps run out
    assert not got[0].complete and got[1].complete  # text 0 says that it stopped short


def test_texts_share_rounds():
    frames = [Frame() for _ in range(20)]
    counter = Counter()
    search(frames, counter, _accept, k=3, word_tokens=2)
    alone = Counter()
    search(frames[:1], alone, _accept, k=3, word_tokens=2)
    assert counter.calls <= alone.calls + 2  # 20 texts take about as many batched calls as one


def test_best_tokens_orders_and_filters():
    lp = np.log(np.array([0.1, 0.4, 0.2, 0.3]))
    ids, values = best_tokens(lp, np.array([1, 0, 1, 1], dtype=bool), 2)
    assert ids.tolist() == [3, 2]
    np.testing.assert_allclose(values, np.log([0.3, 0.2]))


def test_slots_masked_and_causal():
    (s,) = find_slots(["The chef tasted the ___ before serving it."], "masked")
    assert (s.left, s.right) == ("The chef tasted the ", " before serving it.")
    assert s.fill("soup") == "The chef tasted the soup before serving it."
    (c,) = find_slots(["The chef tasted the ___  "], "causal")
    assert (c.left, c.right, c.fill("soup", " ")) == ("The chef tasted the", "", "The chef tasted the soup")
    assert find_slots(["The chef tasted the"], "causal")[0].left == "The chef tasted the"


@pytest.mark.parametrize(
    ("text", "kind", "words"),
    [
        ("The chef tasted the soup.", "masked", "has no slot"),
        ("The ___ tasted the ___.", "masked", "has 2 slots"),
        ("The ___ tasted the soup.", "causal", "has text after its slot"),
        ("The chef tasted the ____.", "masked", "run of 4 underscores"),
    ],
)
def test_slot_errors_name_the_text(text, kind, words):
    with pytest.raises(InputError, match=words) as err:
        find_slots(["fine ___", text] if kind == "masked" else [text], kind)
    assert repr(text) in str(err.value) and "\n" not in str(err.value)


def test_word_classes_per_family():
    wp = word_classes(["[CLS]", "the", "##s", "##", "a b"], ["", "the", "##s", "##", "a b"], {0}, "##")
    assert wp.first.tolist() == [False, True, False, False, False]
    assert wp.continuation.tolist() == [False, False, True, False, False]
    bpe = word_classes(["Ġthe", "s", "Ġ", "Ċ", None], [" the", "s", " ", "\n", ""], set(), "Ġ")
    assert bpe.first.tolist() == [True, False, True, False, False]  # the lone marker may begin a word
    assert bpe.continuation.tolist() == [False, True, False, False, False]
    assert bpe.plain_first.tolist() == bpe.continuation.tolist()
