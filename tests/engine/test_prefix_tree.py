"""Prefix sharing (tree attention over each distinct prefix once) equals the plain pass to 1e-5.

GPT-2 style (learned positions) and Llama style (RoPE) from the session fixtures, plus tiny
Gemma-3 (sliding and global layers), Qwen2, Qwen3 and Mistral models; windows and contexts through the scorer.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pllscore import CausalScorer
from pllscore.engine import prefix_tree
from pllscore.engine.causal import CausalEngine
from pllscore.engine.prefix_tree import plan_trees, supports_trees
from pllscore.engine.readout import Wants
from tests import oracle
from tests import tokenizers_fixtures as tf

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _tiny(kind: str, vocab: int, attn: str = "sdpa"):
    from transformers import (
        Gemma3ForCausalLM,
        Gemma3TextConfig,
        MistralConfig,
        MistralForCausalLM,
        Qwen2Config,
        Qwen2ForCausalLM,
        Qwen3Config,
        Qwen3ForCausalLM,
    )

    torch.manual_seed(0)
    if kind == "gemma3":
        cfg = Gemma3TextConfig(
            vocab_size=vocab,
            hidden_size=32,
            intermediate_size=40,
            num_hidden_layers=3,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=16,
            sliding_window=6,
            layer_types=["sliding_attention", "sliding_attention", "full_attention"],
            max_position_embeddings=64,
            final_logit_softcapping=None,
        )
        model = Gemma3ForCausalLM(cfg)
    else:
        config, causal_lm = {
            "qwen2": (Qwen2Config, Qwen2ForCausalLM),
            "qwen3": (Qwen3Config, Qwen3ForCausalLM),
            "mistral": (MistralConfig, MistralForCausalLM),
        }[kind]
        cfg = config(
            vocab_size=vocab,
            hidden_size=32,
            intermediate_size=40,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=64,
        )
        model = causal_lm(cfg)
    model.config._attn_implementation = attn
    return model.eval()


@pytest.fixture(autouse=True)
def _always_trees(monkeypatch):
    """Trees even where they would save little, so that every example runs the tree path."""
    monkeypatch.setattr(prefix_tree, "MIN_SAVING", -1.0)


def test_trees_only_when_they_save_enough(monkeypatch):
    monkeypatch.setattr(prefix_tree, "MIN_SAVING", 0.1)
    apart = [np.array([1, 2, 3]), np.array([4, 5, 6])]
    alike = [np.array([1, 2, 3, 4, 5]), np.array([1, 2, 3, 4, 6])]  # 6 nodes for 10 tokens
    assert plan_trees(apart, 100) is None
    rows = plan_trees(alike, 100)
    assert rows is not None and sum(r.size for r in rows) == 6


@pytest.fixture(scope="module")
def engines(causal_models):
    out = {name: model for name, (model, _) in causal_models.items()}
    out["gemma3"] = _tiny("gemma3", 50)
    for kind in ("qwen2", "qwen3", "mistral"):
        out[kind] = _tiny(kind, 50)
    return out


def _run(model, seqs, share, max_tokens=64):
    engine = CausalEngine(model, pad_token_id=0, vocab_size=model.config.vocab_size, share_prefixes=share)
    return engine.run(seqs, max_tokens=max_tokens)


# sequences over a few tokens after a common BOS, so that they share prefixes of all lengths
sequences = st.lists(
    st.lists(st.integers(3, 8), min_size=0, max_size=10).map(lambda s: [1, *s]), min_size=1, max_size=12
)


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram", "gemma3", "qwen2", "qwen3", "mistral"])
@SETTINGS
@given(seqs=sequences, budget=st.integers(12, 120))
def test_shared_prefixes_equal_the_plain_pass(engines, family, seqs, budget):
    model = engines[family]
    # windows of the tiny Gemma-3 are 6 tokens: longer texts must fall back to the plain pass, still exact
    plain = _run(model, seqs, share=False)
    shared = _run(model, seqs, share=True, max_tokens=budget)
    for p, s in zip(plain, shared):
        assert p.shape == s.shape
        np.testing.assert_allclose(s, p, atol=1e-5, rtol=0)


def _outputs(model, seqs, share, wants, max_tokens=64):
    engine = CausalEngine(model, pad_token_id=0, vocab_size=model.config.vocab_size, share_prefixes=share)
    return engine.run_outputs(seqs, wants, max_tokens=max_tokens)


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram", "gemma3", "qwen2"])
@SETTINGS
@given(seqs=sequences, budget=st.integers(12, 120), entropy=st.booleans(), rank=st.booleans(), in_set=st.booleans())
def test_shared_prefixes_give_the_plain_outputs(engines, family, seqs, budget, entropy, rank, in_set):
    """Entropy, rank and a token set's probability (BOW's word end, also after the last token) through the
    trees equal the plain pass's."""
    model = engines[family]
    vocab = model.config.vocab_size
    token_set = torch.from_numpy(np.arange(vocab) % 3 == 0) if in_set else None
    wants = Wants(entropy=entropy, rank=rank, token_set=token_set)
    plain = _outputs(model, seqs, False, wants)
    shared = _outputs(model, seqs, True, wants, max_tokens=budget)
    for p, s in zip(plain, shared):
        assert sorted(p) == sorted(s)
        for k in p:
            assert p[k].shape == s[k].shape, k
            # ranks: an item within float rounding of the target may count either way in another batch shape
            np.testing.assert_allclose(s[k], p[k], atol=1e-5 if k != "rank" else 1, rtol=0, err_msg=k)


def test_trees_with_outputs_share_work(engines, monkeypatch):
    """With outputs asked the trees do run (the node count, not the token count, reaches the model)."""
    seen = []
    real = prefix_tree._run_rows

    def spy(engine, rows, wants):
        seen.append(sum(r.size for r in rows))
        return real(engine, rows, wants)

    monkeypatch.setattr(prefix_tree, "_run_rows", spy)
    seqs = [np.array([1, 3, 4, 5, 6, 7]), np.array([1, 3, 4, 5, 6, 8])]
    _outputs(engines["qwen2"], seqs, True, Wants(entropy=True, rank=True))
    assert sum(seen) == 7


def test_gemma3_with_sliding_windows_shares_only_within_the_window(engines):
    model = engines["gemma3"]
    assert supports_trees(model, [np.arange(6)])
    assert not supports_trees(model, [np.arange(7)])


def test_unsupported_families_and_attention_run_plainly(causal_models):
    model, _ = causal_models["gpt2-bpe"]
    assert supports_trees(model, [np.arange(5)])
    old = model.config._attn_implementation
    try:
        model.config._attn_implementation = "flash_attention_2"
        assert not supports_trees(model, [np.arange(5)])
    finally:
        model.config._attn_implementation = old


@pytest.mark.parametrize("kind", ["gemma3", "qwen2"])
def test_eager_attention_gets_an_additive_mask(kind):
    model = _tiny(kind, 50, attn="eager")
    seqs = [[1, 3, 4, 5], [1, 3, 4, 6, 7], [1, 3], [1, 8, 4]]
    for p, s in zip(_run(model, seqs, share=False), _run(model, seqs, share=True)):
        np.testing.assert_allclose(s, p, atol=1e-5, rtol=0)


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram"])
def test_minimal_pairs_equal_the_oracle(causal_models, family):
    model, tok = causal_models[family]
    texts = ["The cat sat on the mat.", "The cat sat on the mats.", "The cats sat.", "A dog", "The cat sat on"]
    results = CausalScorer(model, tok, max_tokens=40).score(texts)
    for text, r in zip(texts, results):
        np.testing.assert_allclose(r.logprobs, oracle.causal_logprobs(model, tok, text), atol=1e-5, rtol=0)


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram"])
def test_windows_and_contexts_equal_the_plain_pass(causal_models, family):
    model, tok = causal_models[family]
    long = " ".join(tf.WHOLE_WORDS * 6)  # longer than the tiny models' 64 positions
    texts = [long, long + " again", "The cat sat.", "The cat sat down."]
    kwargs = {"long": "window", "context": ["The dog ran.", "The dog ran.", "The dog ran.", "A bird"]}
    plain = CausalScorer(model, tok, max_tokens=100, share_prefixes=False).score(texts, **kwargs)
    shared = CausalScorer(model, tok, max_tokens=100).score(texts, **kwargs)
    for p, s in zip(plain, shared):
        np.testing.assert_allclose(s.logprobs, p.logprobs, atol=1e-5, rtol=0, equal_nan=True)


def test_gemma3_head_is_split_only_without_soft_capping():
    from pllscore.engine.heads import split_causal_lm

    model = _tiny("gemma3", 50)
    assert split_causal_lm(model) is not None
    seqs = [[1, 3, 4, 5], [1, 3, 9, 6, 7], [2]]
    split = CausalEngine(model, pad_token_id=0, vocab_size=50, share_prefixes=False)
    full = CausalEngine(model, pad_token_id=0, vocab_size=50, share_prefixes=False)
    full.parts = None  # logits from the whole model's forward
    for a, b in zip(split.run(seqs, max_tokens=64), full.run(seqs, max_tokens=64)):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)
    model.config.final_logit_softcapping = 30.0
    try:
        assert split_causal_lm(model) is None
    finally:
        model.config.final_logit_softcapping = None
