"""results/lazy.py: a score's per-token fields are made when first read, and are then what they always were."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

from pllscore import CausalScorer, MaskedScorer, SentenceScore
from pllscore.results.lazy import TOKEN_FIELDS, LazyScore, lazy_score

TEXTS = ["The traveler lost the souvenir.", "  The cat sat  on the mat! ", "She went to the store yesterday."]


def _made(r) -> bool:
    return any(name in vars(r) for name in TOKEN_FIELDS)


def _fields(r) -> dict:
    return {f.name: getattr(r, f.name) for f in dataclasses.fields(SentenceScore)}


def _same(a, b) -> None:
    for name, value in _fields(a).items():
        other = getattr(b, name)
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, other)
        else:
            assert value == other, name


@pytest.fixture(scope="module")
def results(causal_models, masked_models):
    model, tok = causal_models["gpt2-bpe"]
    causal = CausalScorer(model, tok, max_tokens=64)
    model, tok = masked_models["bert-wordpiece"]
    masked = MaskedScorer(model, tok, max_tokens=64)
    encodings = causal.encode(TEXTS)
    return {
        "causal": (causal.score(encodings), encodings),
        "causal-words": (causal.score(TEXTS, words="whitespace"), None),
        "masked": (masked.score(TEXTS, metric="all"), None),
    }


@pytest.mark.parametrize("case", ["causal", "causal-words", "masked"])
def test_totals_and_counts_make_nothing(results, case):
    res, encodings = results[case]
    for r in res:
        assert isinstance(r, LazyScore) and isinstance(r, SentenceScore)
        r.total, r.mean, r.n_scored, r.n_tokens, r.n_words, r.view(base=2).total, repr(r)
        assert not _made(r)
    if encodings is not None:  # and the texts' alignments were never made either
        assert all("alignment" not in vars(e) for e in encodings.encoded)


@pytest.mark.parametrize("case", ["causal", "causal-words", "masked"])
def test_fields_once_made_are_the_eager_ones(results, case):
    res, _ = results[case]
    for r in res:
        view = r.view(base=2, surprisal=True)
        n_tokens, n_words = r.n_tokens, r.n_words
        words = [(w.text, w.span, w.score, w.n_tokens) for w in r.words]  # makes them
        assert _made(r) and not _made(view)
        assert (n_tokens, n_words) == (len(r.pieces), len(r.word_spans))
        assert len(r.offsets) == len(r.anchors) == len(r.word_index) == n_tokens
        assert [(w.text, w.span, w.n_tokens) for w in view.words] == [w[:2] + w[3:] for w in words]
        eager = SentenceScore(**_fields(r))
        assert [w.score for w in eager.words] == [w[2] for w in words]
        assert [t.span for t in eager.tokens] == [t.span for t in r.tokens]


def test_pickled_and_copied_are_plain_scores_with_every_field(results):
    res, _ = results["masked"]
    r = res[1]
    for other in (pickle.loads(pickle.dumps(r)), copy.copy(r), copy.deepcopy(r)):
        assert type(other) is SentenceScore
        _same(r, other)
    assert pickle.loads(pickle.dumps(res))[1].total == r.total


def test_replace_gives_a_whole_score(results):
    r = results["causal"][0][0]
    other = dataclasses.replace(r, index=7)
    assert other.index == 7 and other.n_words == len(r.word_spans) and other.pieces == r.pieces


def test_lazy_score_needs_the_scores_and_takes_only_fields():
    def make():
        raise AssertionError("not read")

    with pytest.raises(TypeError, match="logprobs"):
        lazy_score(make, (), n_words=0, index=0, text="", metric="m", model="m")
    with pytest.raises(TypeError, match="pieces"):
        lazy_score(make, (), n_words=0, index=0, text="", metric="m", model="m", logprobs=[], pieces=())
