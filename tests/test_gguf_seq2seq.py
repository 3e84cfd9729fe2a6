"""GGUF encoder-decoder files: a tiny T5 written to GGUF in-test loads as a seq2seq LM and scores as the original.

The tiny model is tests/seq2seq_models' T5 made Flan-T5 style (gated GELU feed-forward, untied output
layer) with its T5 Unigram tokenizer, written with the ``gguf`` package's writer in float32 under
llama.cpp's T5 tensor names and metadata keys. transformers reads T5 GGUF files as gated but with
ReLU; pllscore gives them the activation llama.cpp runs (gated GELU), so the scores equal the
original model's. Files of other kinds are refused in one line.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import pllscore
from pllscore import ModelError
from pllscore.engine import gguf as gguf_module
from pllscore.engine import gguf_cache
from pllscore.scoring.seq2seq import Seq2SeqScorer
from tests import seq2seq_models
from tests.conftest import SENTENCES
from tests.test_gguf import needs_gguf

pytestmark = needs_gguf


def write_t5_gguf(path, model, tokenizer, *, name: str = "tiny flan-t5", arch: str = "t5") -> None:
    """Write a T5ForConditionalGeneration (float32) and its Unigram tokenizer as llama.cpp writes a T5 GGUF.

    A model whose output layer is its embedding matrix (T5's scaled, tied head) is written without
    ``output.weight``: transformers reads its absence as ``tie_word_embeddings``.
    """
    import gguf

    cfg = model.config
    w = gguf.GGUFWriter(str(path), arch=arch)
    w.add_name(name)
    w.add_context_length(tokenizer.model_max_length)
    w.add_embedding_length(cfg.d_model)
    w.add_block_count(cfg.num_layers)
    w.add_feed_forward_length(cfg.d_ff)
    w.add_head_count(cfg.num_heads)
    w.add_key_length(cfg.d_kv)
    w.add_value_length(cfg.d_kv)
    w.add_layer_norm_eps(cfg.layer_norm_epsilon)
    w.add_relative_attn_buckets_count(cfg.relative_attention_num_buckets)
    w.add_decoder_start_token_id(cfg.decoder_start_token_id)
    w.add_vocab_size(cfg.vocab_size)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    pieces = json.loads(tokenizer.backend_tokenizer.to_str())["model"]["vocab"]  # [[piece, score], ...] by id
    specials = set(tokenizer.all_special_tokens) - {tokenizer.unk_token}
    types = {tokenizer.unk_token: gguf.TokenType.UNKNOWN} | dict.fromkeys(specials, gguf.TokenType.CONTROL)
    w.add_tokenizer_model("t5")
    w.add_token_list([piece for piece, _ in pieces])
    w.add_token_scores([float(score) for _, score in pieces])
    w.add_token_types([types.get(piece, gguf.TokenType.NORMAL) for piece, _ in pieces])
    w.add_eos_token_id(tokenizer.eos_token_id)
    w.add_pad_token_id(tokenizer.pad_token_id)
    w.add_unk_token_id(tokenizer.unk_token_id)
    w.add_add_bos_token(False)
    w.add_add_eos_token(True)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.T5, cfg.num_layers)
    for key, value in model.state_dict().items():
        if key in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight"):
            continue  # both are shared.weight (token_embd)
        if key == "lm_head.weight" and cfg.scale_decoder_outputs:
            continue  # T5's tied head: no output.weight
        stem, suffix = key.rsplit(".", 1)
        gguf_name = names.get_name(stem)
        assert gguf_name is not None, key
        w.add_tensor(f"{gguf_name}.{suffix}", value.detach().numpy())
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def make_t5_gguf(folder, *, flan: bool = True):
    """A random tiny T5 written to ``folder`` as a GGUF file: (its path, the model, its tokenizer).

    ``flan``: gated GELU feed-forward and an untied output layer (Flan-T5); else the original
    T5's ReLU feed-forward and scaled, tied output layer.
    """
    options = {"feed_forward_proj": "gated-gelu", "tie_word_embeddings": False} if flan else {}
    model, tok = seq2seq_models.t5(**options)
    with torch.no_grad():  # norms of 1 would hide a norm weight read from the wrong tensor
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    path = folder / ("tiny-flan-t5.F32.gguf" if flan else "tiny-t5.F32.gguf")
    write_t5_gguf(path, model, tok)
    return path, model, tok


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_t5_gguf(tmp_path_factory.mktemp("gguf-t5"))


@pytest.fixture
def conversions(monkeypatch):
    """How many times a GGUF file was converted (read by transformers) during the test."""
    calls: list[str] = []
    real = gguf_module.convert

    def counted(file, kind=None):
        calls.append(file)
        return real(file, kind)

    monkeypatch.setattr(gguf_module, "convert", counted)
    return calls


def _same(results, reference, atol: float = 0.0) -> None:
    assert len(results) == len(reference)
    for a, b in zip(results, reference):
        assert a.tokens == b.tokens
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=atol, rtol=0)
        assert a.total == pytest.approx(b.total, abs=atol * len(a.logprobs))


def test_a_t5_gguf_loads_as_a_seq2seq_scorer_and_scores_as_the_original(tiny, tmp_path, monkeypatch, conversions):
    path, model, tok = tiny
    monkeypatch.setenv(gguf_cache.ENV, str(tmp_path / "cache"))
    s = pllscore.load(path, device="cpu")
    assert isinstance(s, Seq2SeqScorer) and s.kind == "seq2seq"
    assert s.name == str(path) and type(s.model).__name__ == "T5ForConditionalGeneration"
    assert s.model.config.is_gated_act and s.model.config.dense_act_fn == "gelu_new"
    assert s.tokenizer.is_fast
    for text in SENTENCES:  # the tokenizer transformers builds from the file encodes these as the original
        assert s.tokenizer(text)["input_ids"] == tok(text)["input_ids"]
    reference = Seq2SeqScorer(model, tok).score(SENTENCES)
    _same(s.score(SENTENCES), reference, atol=1e-5)
    with_source = Seq2SeqScorer(model, tok).score(SENTENCES[1:], context=SENTENCES[:-1])
    _same(s.score(SENTENCES[1:], context=SENTENCES[:-1]), with_source, atol=1e-5)
    assert len(conversions) == 1

    again = pllscore.load(path, device="cpu")  # from the cache entry the first load kept
    assert len(conversions) == 1 and gguf_cache.entry_folder(path).is_dir()
    assert isinstance(again, Seq2SeqScorer) and again.kind == "seq2seq"
    assert again.model.config.dense_act_fn == "gelu_new"
    _same(again.score(SENTENCES), s.score(SENTENCES))


def test_kind_seq2seq_is_accepted_and_other_kinds_refused_in_one_line(tiny):
    path = tiny[0]
    assert pllscore.load(path, device="cpu", kind="seq2seq", cache=False).kind == "seq2seq"
    for kind in ("causal", "masked"):
        with pytest.raises(ModelError) as e:
            pllscore.load(path, device="cpu", kind=kind, cache=False)
        msg = str(e.value)
        assert "\n" not in msg and "seq2seq LM" in msg and "kind='seq2seq'" in msg


def test_kind_causal_is_refused_when_loading_from_the_cache_too(tiny, tmp_path, monkeypatch, conversions):
    monkeypatch.setenv(gguf_cache.ENV, str(tmp_path / "cache"))
    pllscore.load(tiny[0], device="cpu")
    with pytest.raises(ModelError, match="is a seq2seq LM, not a causal one"):
        pllscore.load(tiny[0], device="cpu", kind="causal")
    assert len(conversions) == 1  # refused from the entry, not converted again
    assert gguf_cache.entry_folder(tiny[0]).is_dir()  # and the entry is kept


def test_the_original_t5_relu_feed_forward_loads_too(tmp_path):
    """A file without gate weights is the original T5 (ReLU, tied and scaled head), as llama.cpp runs it."""
    path, model, tok = make_t5_gguf(tmp_path, flan=False)
    s = pllscore.load(path, device="cpu", cache=False)
    assert s.kind == "seq2seq" and not s.model.config.is_gated_act and s.model.config.dense_act_fn == "relu"
    _same(s.score(SENTENCES), Seq2SeqScorer(model, tok).score(SENTENCES), atol=1e-5)


def test_a_umt5_gguf_loads_as_umt5(tmp_path):
    """transformers reads a T5 file whose name says UMT5 as UMT5 (a relative-position bias in every layer)."""
    from transformers import UMT5Config, UMT5ForConditionalGeneration

    from tests import tokenizers_fixtures as tf

    tok = tf.t5_unigram()
    torch.manual_seed(0)
    options = dict(d_model=32, d_kv=8, d_ff=37, num_layers=2, num_heads=4, relative_attention_num_buckets=8)
    options.update(feed_forward_proj="gated-gelu", tie_word_embeddings=False, decoder_start_token_id=0)
    model = UMT5ForConditionalGeneration(UMT5Config(vocab_size=len(tok), **options)).eval()
    path = tmp_path / "tiny-umt5.gguf"
    write_t5_gguf(path, model, tok, name="tiny umt5")
    s = pllscore.load(path, device="cpu", cache=False)
    assert s.kind == "seq2seq" and type(s.model).__name__ == "UMT5ForConditionalGeneration"
    _same(s.score(SENTENCES), Seq2SeqScorer(model, tok).score(SENTENCES), atol=1e-5)


def test_a_t5_encoder_gguf_is_refused_in_one_line(tmp_path):
    """llama.cpp's ``t5encoder`` files (the text encoder of image models) have no decoder to score with."""
    model, tok = seq2seq_models.t5(feed_forward_proj="gated-gelu", tie_word_embeddings=False)
    path = tmp_path / "tiny-t5-encoder.gguf"
    write_t5_gguf(path, model, tok, arch="t5encoder")
    with pytest.raises(ModelError) as e:
        pllscore.load(path, device="cpu", cache=False)
    msg = str(e.value)
    assert "\n" not in msg and "holds only an encoder (T5EncoderModel)" in msg


def test_an_architecture_transformers_cannot_read_is_one_line(tmp_path):
    import gguf

    path = tmp_path / "odd.gguf"
    w = gguf.GGUFWriter(str(path), arch="no-such-arch")
    w.add_block_count(1)
    w.add_tensor("token_embd.weight", np.zeros((4, 4), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(ModelError) as e:
        pllscore.load(path, device="cpu", cache=False)
    msg = str(e.value)
    assert "\n" not in msg and "cannot read the GGUF file" in msg and "no-such-arch" in msg
