"""Scores do not depend on batch size, token budget or input order (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pllscore import CausalScorer, MaskedScorer
from tests import tokenizers_fixtures as tf

pytestmark = pytest.mark.gpu  # make test-gpu: the same on CUDA (tests/device.py)

WORDS = tf.WHOLE_WORDS + ["hooligan", "marauder", "Carnivores", "didn't", "unbelievable"]
texts = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=9).map(" ".join), min_size=1, max_size=6)
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _by_text(results):
    return {(r.metric, r.index): r.logprobs for r in results}


@SETTINGS
@given(items=texts, budget=st.integers(8, 300), seed=st.integers(0, 1000))
def test_masked_scores_ignore_budget_and_order(masked_models, items, budget, seed):
    model, tok = masked_models["bert-wordpiece"]
    reference = MaskedScorer(model, tok, max_tokens=4096).score(items, metric="all")
    perm = np.random.default_rng(seed).permutation(len(items))
    shuffled = MaskedScorer(model, tok, max_tokens=budget).score([items[i] for i in perm], metric="all")
    for r in shuffled:
        want = reference.for_metric(r.metric)[int(perm[r.index])]
        assert want.text == r.text
        np.testing.assert_allclose(r.logprobs, want.logprobs, atol=1e-5, rtol=0)


@SETTINGS
@given(items=texts, budget=st.integers(8, 300), seed=st.integers(0, 1000))
def test_causal_scores_ignore_budget_and_order(causal_models, items, budget, seed):
    model, tok = causal_models["gpt2-bpe"]
    reference = CausalScorer(model, tok, max_tokens=4096).score(items)
    perm = np.random.default_rng(seed).permutation(len(items))
    shuffled = CausalScorer(model, tok, max_tokens=budget).score([items[i] for i in perm])
    for r in shuffled:
        np.testing.assert_allclose(r.logprobs, reference[int(perm[r.index])].logprobs, atol=1e-5, rtol=0)


@SETTINGS
@given(items=texts)
def test_word_scores_sum_to_total_and_one_token_words_agree(masked_models, items):
    model, tok = masked_models["bert-wordpiece"]
    res = MaskedScorer(model, tok).score(items, metric=["original", "word-l2r", "whole-word"])
    for r in res:
        assert abs(sum(w.score for w in r.words) - r.total) < 1e-9
        assert sum(w.n_tokens for w in r.words) == r.n_tokens
    n = len(items)
    for i in range(n):
        o, w, ww = (res[k * n + i] for k in range(3))
        singles = [j for j, word in enumerate(o.words) if word.n_tokens == 1]
        for j in singles:
            assert o.words[j].score == w.words[j].score == ww.words[j].score
