"""The architecture matrix: every architecture ``load`` accepts, exact against the independent loop.

A tiny random model of each architecture is built here (no Hub), scored as one mixed-length batch
and one text at a time, and compared with :mod:`tests.oracle` (one unpadded forward pass per masked
copy or per text): at most 1e-4 nats per token, every PLL metric for masked LMs; with and without
prefix trees for causal LMs. Batch totals agree with alone to 1e-5. The matrix is what
:data:`pllscore.engine.padding.PADDED` (padding proven harmless), :data:`~pllscore.engine.padding.UNPADDED`
(run without padding) and :data:`pllscore.engine.prefix_tree.TREE_TYPES` rest on: each list is checked
to hold exactly the architectures proven here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from pllscore import CausalScorer, MaskedScorer
from pllscore.engine import padding, prefix_tree
from tests import oracle
from tests import tokenizers_fixtures as tf
from tests.device import on_device, reference

pytestmark = pytest.mark.gpu  # make test-gpu: the same on CUDA (tests/device.py)

TEXTS = ["The cat sat on the mat.", "She went to the store yesterday!", "A dog ran."]
# short texts that share prefixes, within the sliding windows below, for the prefix-tree proof
TREE_TEXTS = ["The cat sat.", "The cat ran.", "The dog sat.", "The cat"]
SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)
DECODER = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=37)
METRICS = ("original", "word-l2r", "whole-word", "sentence-l2r")


def _tok(name: str) -> Any:
    return {
        "wp": tf.wordpiece,
        "bpe": lambda: tf.byte_bpe(roberta=True),
        "uni": tf.unigram,
        "gpt": lambda: tf.byte_bpe(roberta=False),
        "llama": lambda: tf.unigram(template="<s> $A"),
    }[name]()


def _ids(tok: Any) -> dict[str, Any]:
    out = {"pad_token_id": tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id}
    out.update(bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    return out


def _masked(config: str, model: str, tok: str, **kw: Any) -> tuple[Callable[[], Any], str]:
    def build() -> Any:
        import transformers

        t = _tok(tok)
        cfg = getattr(transformers, config)(vocab_size=len(t), pad_token_id=t.pad_token_id, **kw)
        return getattr(transformers, model)(cfg), t

    return build, tok


def _causal(config: str, model: str, tok: str = "gpt", **kw: Any) -> tuple[Callable[[], Any], str]:
    def build() -> Any:
        import transformers

        t = _tok(tok)
        cfg = getattr(transformers, config)(vocab_size=len(t), **_ids(t), **kw)
        return getattr(transformers, model)(cfg), t

    return build, tok


ROBERTA_LIKE = dict(max_position_embeddings=66, **SMALL)
MASKED = {
    "bert": _masked("BertConfig", "BertForMaskedLM", "wp", max_position_embeddings=64, **SMALL),
    "roberta": _masked("RobertaConfig", "RobertaForMaskedLM", "bpe", **ROBERTA_LIKE),
    "xlm-roberta": _masked("XLMRobertaConfig", "XLMRobertaForMaskedLM", "uni", **ROBERTA_LIKE),
    "camembert": _masked("CamembertConfig", "CamembertForMaskedLM", "uni", **ROBERTA_LIKE),
    "electra": _masked("ElectraConfig", "ElectraForMaskedLM", "wp", embedding_size=16, **SMALL),
    "albert": _masked("AlbertConfig", "AlbertForMaskedLM", "uni", embedding_size=16, **SMALL),
    "distilbert": _masked(
        "DistilBertConfig", "DistilBertForMaskedLM", "wp", dim=32, n_layers=2, n_heads=2, hidden_dim=37
    ),
    "deberta": _masked(
        "DebertaConfig",
        "DebertaForMaskedLM",
        "bpe",
        relative_attention=True,
        pos_att_type=["c2p", "p2c"],
        position_biased_input=False,
        max_relative_positions=16,
        **SMALL,
    ),
    "deberta-v2": _masked(
        "DebertaV2Config",
        "DebertaV2ForMaskedLM",
        "uni",
        relative_attention=True,
        pos_att_type=["p2c", "c2p"],
        position_biased_input=False,
        position_buckets=8,
        norm_rel_ebd="layer_norm",
        share_att_key=True,
        max_relative_positions=16,
        **SMALL,
    ),
    "mpnet": _masked("MPNetConfig", "MPNetForMaskedLM", "bpe", **ROBERTA_LIKE),
    "ernie": _masked("ErnieConfig", "ErnieForMaskedLM", "wp", **SMALL),
    "roformer": _masked("RoFormerConfig", "RoFormerForMaskedLM", "wp", embedding_size=32, **SMALL),
    "megatron-bert": _masked("MegatronBertConfig", "MegatronBertForMaskedLM", "wp", **SMALL),
    "data2vec-text": _masked("Data2VecTextConfig", "Data2VecTextForMaskedLM", "bpe", **ROBERTA_LIKE),
    "modernbert": _masked(
        "ModernBertConfig", "ModernBertForMaskedLM", "wp", max_position_embeddings=64, local_attention=8, **SMALL
    ),
    "squeezebert": _masked(
        "SqueezeBertConfig",
        "SqueezeBertForMaskedLM",
        "wp",
        embedding_size=32,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
    ),
    "big_bird": _masked("BigBirdConfig", "BigBirdForMaskedLM", "uni", block_size=4, num_random_blocks=2, **SMALL),
    "longformer": _masked("LongformerConfig", "LongformerForMaskedLM", "bpe", attention_window=8, **ROBERTA_LIKE),
    "mobilebert": _masked(
        "MobileBertConfig",
        "MobileBertForMaskedLM",
        "wp",
        embedding_size=16,
        intra_bottleneck_size=16,
        true_hidden_size=16,
        num_feedforward_networks=2,
        **SMALL,
    ),
    "convbert": _masked("ConvBertConfig", "ConvBertForMaskedLM", "wp", embedding_size=16, conv_kernel_size=5, **SMALL),
    "nystromformer": _masked(
        "NystromformerConfig",
        "NystromformerForMaskedLM",
        "wp",
        segment_means_seq_len=64,
        num_landmarks=64,
        conv_kernel_size=9,
        max_position_embeddings=66,
        **SMALL,
    ),
}

SLIDING = dict(sliding_window=12)
CAUSAL = {
    "gpt2": _causal("GPT2Config", "GPT2LMHeadModel", n_embd=32, n_layer=2, n_head=2, n_positions=64),
    "llama": _causal("LlamaConfig", "LlamaForCausalLM", "llama", **DECODER),
    "mistral": _causal("MistralConfig", "MistralForCausalLM", "llama", **SLIDING, **DECODER),
    "qwen2": _causal("Qwen2Config", "Qwen2ForCausalLM", **DECODER),
    "qwen3": _causal("Qwen3Config", "Qwen3ForCausalLM", head_dim=8, **DECODER),
    "gemma2": _causal("Gemma2Config", "Gemma2ForCausalLM", "llama", head_dim=8, **SLIDING, **DECODER),
    "gemma3_text": _causal(
        "Gemma3TextConfig",
        "Gemma3ForCausalLM",
        "llama",
        head_dim=8,
        layer_types=["sliding_attention", "full_attention"],
        **SLIDING,
        **DECODER,
    ),
    "gpt_neox": _causal("GPTNeoXConfig", "GPTNeoXForCausalLM", **{**SMALL, "num_attention_heads": 4}),
    "phi": _causal("PhiConfig", "PhiForCausalLM", **DECODER),
    "phi3": _causal("Phi3Config", "Phi3ForCausalLM", "llama", **DECODER),
    "falcon": _causal(
        "FalconConfig",
        "FalconForCausalLM",
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_kv_heads=2,
        new_decoder_architecture=True,
    ),
    "opt": _causal(
        "OPTConfig",
        "OPTForCausalLM",
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        ffn_dim=37,
        word_embed_proj_dim=32,
        max_position_embeddings=64,
    ),
    "bloom": _causal("BloomConfig", "BloomForCausalLM", hidden_size=32, n_layer=2, n_head=2),
    "gptj": _causal("GPTJConfig", "GPTJForCausalLM", n_embd=32, n_layer=2, n_head=2, rotary_dim=8, n_positions=64),
    "olmo2": _causal("Olmo2Config", "Olmo2ForCausalLM", "llama", **DECODER),
    "starcoder2": _causal("Starcoder2Config", "Starcoder2ForCausalLM", **SLIDING, **DECODER),
    "stablelm": _causal("StableLmConfig", "StableLmForCausalLM", **DECODER),
    "mamba": _causal("MambaConfig", "MambaForCausalLM", hidden_size=32, num_hidden_layers=2, state_size=8),
    "xglm": _causal(
        "XGLMConfig",
        "XGLMForCausalLM",
        d_model=32,
        num_layers=2,
        attention_heads=2,
        ffn_dim=37,
        max_position_embeddings=64,
    ),
}

_BUILT: dict[str, Any] = {}


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny models gain nothing from intra-op threads, and on shared cores lose much (4x) to them."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def built(arch: str) -> tuple[Any, Any]:
    """(model, tokenizer) of ``arch``, seeded, in eval mode, its padding embedding random; built once per session."""
    if arch not in _BUILT:
        build = (MASKED.get(arch) or CAUSAL[arch])[0]
        torch.manual_seed(0)
        model, tok = build()
        # a trained model's padding embedding need not be zero (a TF checkpoint has no padding_idx):
        # exactness must not rest on transformers' zero initialisation of that row
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        with torch.no_grad():
            row = model.get_input_embeddings().weight[pad]
            row.copy_(torch.randn_like(row))
        _BUILT[arch] = (on_device(model.eval()), tok)
    return _BUILT[arch]


ATOL = 1e-4  # per token, against the independent loop
TOTALS = 1e-5  # batch totals against alone


@pytest.mark.parametrize("arch", sorted(MASKED))
def test_masked_architecture_is_exact(arch):
    model, tok = built(arch)
    scorer = MaskedScorer(model, tok)
    assert scorer.padding == ("equal" if arch in padding.UNPADDED else "pad"), arch
    batch = scorer.score(TEXTS, metric="all")
    for i, text in enumerate(TEXTS):
        alone = scorer.score([text], metric="all")
        expected = _masked_oracle(model, tok, text)
        for metric in METRICS:
            got, one = batch.for_metric(metric)[i], alone.for_metric(metric)[0]
            assert abs(got.total - one.total) <= TOTALS, (arch, metric, text)
            want = expected[metric]
            np.testing.assert_allclose(got.logprobs, want, atol=ATOL, rtol=0, err_msg=f"{arch} {metric} {text!r}")


@torch.inference_mode()
def _masked_oracle(model: Any, tok: Any, text: str) -> dict[str, list[float]]:
    """Per metric, what :func:`tests.oracle.masked_logprobs` gives, each distinct masked copy run once."""
    model = reference(model)
    enc = tok(text)
    ids, word_ids = enc["input_ids"], enc.word_ids()
    copies: dict[frozenset[int], torch.Tensor] = {}
    out: dict[str, list[float]] = {}
    for metric in METRICS:
        out[metric] = []
        for t in (t for t in range(len(ids)) if word_ids[t] is not None):
            masked = frozenset(oracle.mask_set(metric, t, word_ids))
            if masked not in copies:
                x = torch.tensor([ids])
                x[0, sorted(masked)] = tok.mask_token_id
                copies[masked] = torch.log_softmax(model(input_ids=x).logits[0].double(), -1)
            out[metric].append(copies[masked][t, ids[t]].item())
    return out


@pytest.mark.parametrize("arch", sorted(padding.UNPADDED))
def test_unpadded_architectures_need_it(arch):
    """Padded, these would be off: the entry in UNPADDED is what keeps them exact."""
    model, tok = built(arch)
    scorer = MaskedScorer(model, tok)
    alone = [r.total for t in TEXTS for r in scorer.score([t], metric="all")]
    scorer.engine.padding = "pad"
    padded = scorer.score(TEXTS, metric="all")
    padded = [padded.for_metric(m)[i].total for i in range(len(TEXTS)) for m in METRICS]
    assert max(abs(a - b) for a, b in zip(alone, padded)) > TOTALS


@pytest.mark.parametrize("share", [False, True], ids=["plain", "trees"])
@pytest.mark.parametrize("arch", sorted(CAUSAL))
def test_causal_architecture_is_exact(arch, share, monkeypatch):
    monkeypatch.setattr(prefix_tree, "MIN_SAVING", -1.0)  # trees wherever the family has them
    model, tok = built(arch)
    scorer = CausalScorer(model, tok, share_prefixes=share)
    assert scorer.padding == "pad", arch
    batch = scorer.score(TEXTS + TREE_TEXTS)
    for i, text in enumerate(TEXTS + TREE_TEXTS):
        one = scorer.score([text])[0]
        assert abs(batch[i].total - one.total) <= TOTALS, (arch, text)
        want = oracle.causal_logprobs(model, tok, text)
        np.testing.assert_allclose(batch[i].logprobs, want, atol=ATOL, rtol=0, err_msg=f"{arch} {text!r}")


TREE_TYPES = frozenset(prefix_tree.TREE_TYPES)


@pytest.mark.parametrize("arch", sorted(CAUSAL))
def test_prefix_trees_exactly_where_proven(arch, monkeypatch):
    """Trees forced on every architecture: equal to the plain pass exactly for those in TREE_TYPES."""
    model, tok = built(arch)
    plain = [r.logprobs for r in CausalScorer(model, tok, share_prefixes=False).score(TREE_TEXTS)]
    monkeypatch.setattr(prefix_tree, "MIN_SAVING", -1.0)
    monkeypatch.setattr(prefix_tree, "TREE_TYPES", TREE_TYPES | {arch})
    ran = []
    monkeypatch.setattr(
        "pllscore.engine.causal.run_trees", lambda *a, **k: ran.append(1) or prefix_tree.run_trees(*a, **k)
    )
    if model.config._attn_implementation not in ("sdpa", "eager"):
        assert arch not in TREE_TYPES
        return
    try:
        trees = [r.logprobs for r in CausalScorer(model, tok).score(TREE_TEXTS)]
        exact = all(np.abs(a - b).max() <= TOTALS for a, b in zip(plain, trees))
    except Exception:  # a family that does not take a 4D mask or position ids
        exact = False
    assert ran, arch
    assert exact == (arch in TREE_TYPES), f"{arch}: trees {'equal' if exact else 'differ from'} the plain pass"


def test_the_lists_are_the_matrix():
    """Every architecture the matrix builds is on exactly one list, and nothing else is."""
    assert padding.PADDED | set(padding.UNPADDED) == set(MASKED) | set(CAUSAL)
    assert not padding.PADDED & set(padding.UNPADDED)
    assert TREE_TYPES <= set(CAUSAL)


@pytest.mark.parametrize("arch", sorted(MASKED) + sorted(CAUSAL))
def test_the_probe_agrees_with_the_lists(arch):
    """What the load-time probe decides for an architecture off the lists, it decides for every one on them."""
    model, tok = built(arch)
    short, long = (tok(text)["input_ids"] for text in padding.PROBE_TEXTS)
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    mode, why = padding.probe(model, short, long, pad)
    assert mode == ("equal" if arch in padding.UNPADDED else "pad"), (arch, why)
