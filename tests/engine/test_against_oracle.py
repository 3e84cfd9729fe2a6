"""The engine equals the naive reference (one forward pass per masked copy) to 1e-5 per token."""

from __future__ import annotations

import numpy as np
import pytest

from pllscore import CausalScorer, MaskedScorer
from pllscore.metrics import METRICS
from tests import oracle
from tests.conftest import MASKED_FAMILIES, SENTENCES
from tests.device import reference

pytestmark = pytest.mark.gpu  # make test-gpu: the same on CUDA (tests/device.py)

ATOL = 1e-5
# families whose last encoder layer runs only at the read positions (engine/last_layer.py)
LAST_LAYER_AT_READS = {"bert-wordpiece", "roberta-bpe", "xlmr-unigram", "electra-wordpiece"}


@pytest.mark.parametrize("family", MASKED_FAMILIES)
def test_masked_families_equal_oracle_for_all_metrics(masked_models, family):
    model, tok = masked_models[family]
    scorer = MaskedScorer(model, tok, max_tokens=64)  # small budget: many batches, with padding
    results = scorer.score(SENTENCES, metric="all")
    assert scorer.engine.parts is not None, f"{family} should use its per-family head"
    assert (scorer.engine.last_layer is not None) == (family in LAST_LAYER_AT_READS), family
    for k, metric in enumerate(METRICS):
        for i, text in enumerate(SENTENCES):
            got = results[k * len(SENTENCES) + i]
            assert got.metric == metric and got.text == text
            want = oracle.masked_logprobs(model, tok, text, metric)
            np.testing.assert_allclose(got.logprobs, want, atol=ATOL, rtol=0, err_msg=f"{family} {metric} {text!r}")


@pytest.mark.parametrize("family", ["bert-wordpiece", "albert-unigram"])
def test_generic_fallback_equals_oracle(masked_models, family):
    model, tok = masked_models[family]
    scorer = MaskedScorer(model, tok, max_tokens=48)
    scorer.engine.parts = None  # as for a family without a known head
    results = scorer.score(SENTENCES[:3], metric=["word-l2r", "sentence-l2r"])
    for r in results:
        np.testing.assert_allclose(r.logprobs, oracle.masked_logprobs(model, tok, r.text, r.metric), atol=ATOL, rtol=0)


@pytest.mark.parametrize("family", sorted(LAST_LAYER_AT_READS))
def test_full_last_layer_equals_oracle(masked_models, family):
    model, tok = masked_models[family]
    scorer = MaskedScorer(model, tok, max_tokens=48)
    scorer.engine.last_layer = None  # every position through every layer
    results = scorer.score(SENTENCES[:3], metric=["original", "whole-word"])
    for r in results:
        np.testing.assert_allclose(r.logprobs, oracle.masked_logprobs(model, tok, r.text, r.metric), atol=ATOL, rtol=0)


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram"])
@pytest.mark.parametrize("fallback", [False, True])
def test_causal_equals_oracle(causal_models, family, fallback):
    model, tok = causal_models[family]
    scorer = CausalScorer(model, tok, max_tokens=40)
    if fallback:
        scorer.engine.parts = None
    else:
        assert scorer.engine.parts is not None
    for r in scorer.score(SENTENCES):
        assert r.metric == "causal"
        np.testing.assert_allclose(r.logprobs, oracle.causal_logprobs(model, tok, r.text), atol=ATOL, rtol=0)


def test_causal_bos_not_doubled_for_tokenizers_that_add_it(causal_models):
    model, tok = causal_models["llama-unigram"]
    scorer = CausalScorer(model, tok)
    assert scorer._adds_bos and scorer._prefix is None
    r = scorer.score("The cat sat.")[0]
    assert "<s>" not in r.pieces
    ids = tok("The cat sat.")["input_ids"]
    assert ids.count(tok.bos_token_id) == 1
    assert r.n_tokens == len(ids) - 1


def test_causal_gpt2_prepends_endoftext_and_scores_every_token(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    r = CausalScorer(model, tok).score("The cat sat.")[0]
    assert r.n_scored == r.n_tokens == len(tok("The cat sat.")["input_ids"])
    assert "<|endoftext|>" not in r.pieces


def test_causal_without_bos_leaves_first_token_unscored(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    with_bos = CausalScorer(model, tok).score("The cat sat on the mat.")[0]
    r = CausalScorer(model, tok, bos=False).score("The cat sat on the mat.")[0]
    assert np.isnan(r.logprobs[0]) and not r.tokens[0].scored
    assert r.n_scored == r.n_tokens - 1
    assert not np.isnan(r.total) and not np.isnan(r.words[1].score)
    assert r.pieces == with_bos.pieces
    # scored by hand: the chain rule from the first token, no BOS anywhere
    import torch

    ids = tok("The cat sat on the mat.", add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logits = reference(model)(input_ids=torch.tensor([ids])).logits[0].double()
    want = [torch.log_softmax(logits[i - 1], -1)[ids[i]].item() for i in range(1, len(ids))]
    np.testing.assert_allclose(r.logprobs[1:], want, atol=ATOL, rtol=0)


CONTEXTS = ["My word is {}", "I opened a dictionary and randomly picked a word. It was {}", "{}"]


@pytest.mark.parametrize("metric", list(METRICS))
def test_span_scores_equal_oracle_restricted_to_the_span(masked_models, metric):
    model, tok = masked_models["bert-wordpiece"]
    texts, spans = [], []
    for word in ["hooligan", "souvenir", "cat"]:
        for c in CONTEXTS:
            text = c.format(word)
            texts.append(text)
            spans.append((text.index(word), text.index(word) + len(word)))
    res = MaskedScorer(model, tok, max_tokens=50).score(texts, metric=metric, spans=spans)
    for r, (a, b) in zip(res, spans):
        want = oracle.masked_logprobs(model, tok, r.text, metric)
        inside = [s < b and e > a for s, e in r.offsets]
        assert r.n_scored == sum(inside) >= 1
        np.testing.assert_allclose(r.logprobs[inside], np.array(want)[inside], atol=ATOL, rtol=0)
        assert np.isnan(r.logprobs[~np.array(inside)]).all()
        assert r.total == pytest.approx(float(np.sum(np.array(want)[inside])), abs=1e-5)


def test_causal_span_scores(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    text = "My word is souvenir"
    a = text.index("souvenir")
    r = CausalScorer(model, tok).score([text], spans=[(a, len(text))])[0]
    full = oracle.causal_logprobs(model, tok, text)
    inside = [s < len(text) and e > a for s, e in r.offsets]
    np.testing.assert_allclose(r.logprobs[inside], np.array(full)[inside], atol=ATOL, rtol=0)
    assert r.n_scored == sum(inside) and r.n_scored < r.n_tokens


def test_span_that_covers_nothing(masked_models):
    from pllscore import InputError

    scorer = MaskedScorer(*masked_models["bert-wordpiece"])
    with pytest.raises(InputError, match="covers none of its tokens"):
        scorer.score(["The cat."], spans=[(3, 4)])  # the space: no token stands on it
    with pytest.raises(InputError, match="outside the text"):
        scorer.score(["The cat."], spans=[(20, 30)])
