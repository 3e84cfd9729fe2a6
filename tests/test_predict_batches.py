"""predict's numbers do not depend on the company a text keeps: whatever texts share its batches (a chunk of a
file run, a resumed chunk), in whatever order, repeated or not, under whatever token budget, in prefix trees or
padded rows, each text's words and logprobs are those it gets alone, to 1e-5."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.shared

CAUSAL = [
    "The chef tasted the",
    "The chef tasted the soup and",
    "The raider caught the",
    "The illness caught the",
    "She went to the ___",
    "After dinner, she left the",
    "___",
]
MASKED = [
    "The chef tasted the ___ before serving it.",
    "The ___ caught the raider.",
    "She went to the ___ yesterday.",
    "After dinner, ___, she left.",
    "___ is a good idea.",
]
_ALONE: dict[tuple[str, str], dict[str, float]] = {}
K, WORD_TOKENS = 3, 2


def _scorer(base, **options):
    """The shared model under other run options."""
    scorer = copy.copy(base)
    for name, value in options.items():
        setattr(scorer, name, value)
    return scorer


def _words(p) -> dict[str, float]:
    return {w.word: w.logprob for w in p.words}


def _alone(base, text: str) -> dict[str, float]:
    if (base.name, text) not in _ALONE:
        (p,) = base.predict(text, k=K, word_tokens=WORD_TOKENS)
        _ALONE[base.name, text] = _words(p)
    return _ALONE[base.name, text]


def _check_same(got: dict[str, float], want: dict[str, float]) -> None:
    for word in got.keys() & want.keys():
        assert abs(got[word] - want[word]) <= 1e-5, (word, got[word], want[word])
    # a word in one list only can only be a near tie at the list's end
    last = min(want.values(), default=0.0)
    for word in got.keys() ^ want.keys():
        assert abs(got.get(word, want.get(word, 0.0)) - last) <= 1e-5, word


@pytest.mark.parametrize("model, pool", [("shared_gpt2", CAUSAL), ("shared_bert", MASKED)], ids=["causal", "masked"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_texts_numbers_do_not_depend_on_its_batch(request, model, pool, data):
    base = request.getfixturevalue(model)
    texts = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=5), label="texts")
    max_tokens = data.draw(st.sampled_from([16, 48, 128, 1024]), label="max_tokens")
    share = data.draw(st.booleans(), label="share_prefixes")
    options = {"max_tokens": max_tokens}
    if base.kind == "causal":
        options["share_prefixes"] = share
    got = _scorer(base, **options).predict(texts, k=K, word_tokens=WORD_TOKENS)
    for text, p in zip(texts, got):
        _check_same(_words(p), _alone(base, text))
