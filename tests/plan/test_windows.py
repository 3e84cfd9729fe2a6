"""Window placement: every token scored exactly once, with as much context as possible. No torch."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pllscore.plan.windows import causal_windows, centred_starts


@given(st.integers(1, 300), st.integers(1, 64))
def test_centred_windows_hold_their_target_and_stay_inside(n, size):
    starts = centred_starts(n, size, list(range(n)))
    for t, s in enumerate(starts):
        assert 0 <= s <= max(n - size, 0)
        assert s <= t < s + size
        # as much context on both sides as the text allows
        left, right = t - s, min(s + size, n) - 1 - t
        if n > size:
            assert abs(left - right) <= 1 or s in (0, n - size)


def test_centred_by_hand():
    assert centred_starts(10, 4, [0, 1, 2, 5, 9]) == [0, 0, 0, 3, 6]
    assert centred_starts(3, 8, [0, 2]) == [0, 0]


@given(st.integers(1, 400), st.integers(2, 64), st.data())
def test_causal_windows_score_every_token_once(n, size, data):
    stride = data.draw(st.integers(1, size - 1))
    wins = causal_windows(n, size, stride)
    scored = [p for b, e, f in wins for p in range(f, e)]
    assert scored == list(range(1, n))
    for b, e, f in wins:
        assert 0 <= b < f <= e <= n or (n == 1 and f == 1 and e == 1)
        assert e - b <= size
        if b > 0:
            assert f - b == size - stride or e == n  # full context of size - stride tokens


def test_causal_by_hand():
    assert causal_windows(10, 4, 2) == [(0, 4, 1), (2, 6, 4), (4, 8, 6), (6, 10, 8)]
    assert causal_windows(3, 4, 2) == [(0, 3, 1)]
