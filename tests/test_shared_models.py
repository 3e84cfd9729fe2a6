"""Integration on the trained tiny models in ../shared/models."""

from __future__ import annotations

import numpy as np
import pytest

from pllscore.metrics import METRICS
from tests import oracle

pytestmark = pytest.mark.shared

TEXTS = [
    "The traveler lost the souvenir.",
    "The hooligan wrecked the vehicle.",
    "The carnivore ate the unbelievable marauder.",
    "The cat sat on the mat.",
]


def test_bert_equals_oracle_all_metrics(shared_bert):
    res = shared_bert.score(TEXTS, metric="all")
    for r in res:
        want = oracle.masked_logprobs(shared_bert.model, shared_bert.tokenizer, r.text, r.metric)
        np.testing.assert_allclose(r.logprobs, want, atol=1e-5, rtol=0, err_msg=f"{r.metric} {r.text}")
    assert res.metrics == tuple(METRICS)


def test_gpt2_equals_oracle(shared_gpt2):
    for r in shared_gpt2.score(TEXTS):
        want = oracle.causal_logprobs(shared_gpt2.model, shared_gpt2.tokenizer, r.text)
        np.testing.assert_allclose(r.logprobs, want, atol=1e-5, rtol=0)
        assert r.pieces[0] == "The"  # <|endoftext|> conditions but is not scored


def test_papers_effect_on_multi_token_words(shared_bert):
    """PLL-original inflates words split into several pieces; word-l2r does not (Kauf & Ivanova, 2023)."""
    res = shared_bert.score(TEXTS[:3], metric=["original", "word-l2r"])
    n = 3
    inflated = 0
    multi = 0
    gaps: list[float] = []
    for i in range(n):
        orig, l2r = res[i], res[n + i]
        for wo, wl in zip(orig.words, l2r.words):
            if wo.n_tokens >= 3:  # souvenir, hooligan, wrecked, carnivore, unbelievable, marauder
                multi += 1
                inflated += wo.score > wl.score
                gaps.append(wo.score - wl.score)
        for wo, wl in zip(orig.words, l2r.words):
            if wo.n_tokens == 1:
                assert wo.score == wl.score  # the same masked copy under both metrics
    assert multi >= 5
    assert inflated >= 0.75 * multi
    assert np.mean(gaps) > 1.0  # nats per multi-piece word
    souvenir_orig, souvenir_l2r = res[0].words[4], res[n].words[4]
    assert souvenir_orig.text == "souvenir" and souvenir_orig.n_tokens == 4
    assert souvenir_orig.score > souvenir_l2r.score


def test_normal_order_beats_shuffled(shared_bert, shared_gpt2):
    good, bad = "She went to the store yesterday.", "Store she yesterday the to went."
    for scorer in (shared_bert, shared_gpt2):
        r = scorer.score([good, bad])
        assert r[0].total > r[1].total
