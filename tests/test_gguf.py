"""GGUF files as models: which paths are GGUF models, the errors, and a tiny Llama written to GGUF in-test.

The tiny model is a random Llama with the byte-level BPE of tests/tokenizers_fixtures, written
with the ``gguf`` package's writer in float32 (q/k rows permuted the way llama.cpp's converter
does); loaded back through ``pllscore.load`` it must give the original model's logits exactly.
Real quantized files are the real tier's (tests/real).
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
import torch

import pllscore
from pllscore import InputError, ModelError
from pllscore.engine.gguf import find_gguf
from tests.conftest import SENTENCES
from tests.oracle import causal_logprobs
from tests.test_cli import run as cli_run

EXTRA = "pip install 'pllscore[gguf]'"


def _has(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


needs_gguf = pytest.mark.skipif(not _has("gguf", "accelerate"), reason=f"the gguf extra is not installed ({EXTRA})")


def _fake_gguf(path) -> str:
    path.write_bytes(b"GGUF" + bytes(60))
    return str(path)


# -- which paths are GGUF models ----------------------------------------------------------


def test_a_gguf_file_is_itself(tmp_path):
    assert find_gguf(_fake_gguf(tmp_path / "m.gguf")) == str(tmp_path / "m.gguf")
    assert find_gguf(_fake_gguf(tmp_path / "M.GGUF")) == str(tmp_path / "M.GGUF")
    _fake_gguf(tmp_path / "weights.bin")  # the magic bytes make it one, whatever its name
    assert find_gguf(tmp_path / "weights.bin") == str(tmp_path / "weights.bin")


def test_a_folder_with_one_gguf_and_no_config_is_that_file(tmp_path):
    _fake_gguf(tmp_path / "model.gguf")
    (tmp_path / "README.md").write_text("a model")
    assert find_gguf(tmp_path) == str(tmp_path / "model.gguf")


def test_a_model_folder_with_config_json_is_not_a_gguf_model(tmp_path):
    _fake_gguf(tmp_path / "model.gguf")
    (tmp_path / "config.json").write_text("{}")
    assert find_gguf(tmp_path) is None


def test_other_names_are_not_gguf_models(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    assert find_gguf(tmp_path) is None  # a folder without .gguf: the ordinary loader reports it
    assert find_gguf(tmp_path / "notes.txt") is None
    assert find_gguf("gpt2") is None


def test_a_folder_with_several_gguf_files_is_a_one_line_error_naming_them(tmp_path):
    for name in ("a.Q4_0.gguf", "a.Q8_0.gguf"):
        _fake_gguf(tmp_path / name)
    with pytest.raises(ModelError) as e:
        pllscore.load(tmp_path, device="cpu")
    msg = str(e.value)
    assert "\n" not in msg and "a.Q4_0.gguf, a.Q8_0.gguf" in msg and "pass the path of the one to load" in msg


def test_a_missing_gguf_file_says_so(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        pllscore.load(tmp_path / "nope.gguf", device="cpu")


def test_without_the_gguf_package_the_error_names_the_extra(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a))
    with pytest.raises(ModelError) as e:
        pllscore.load(_fake_gguf(tmp_path / "m.gguf"), device="cpu")
    assert "\n" not in str(e.value) and "gguf" in str(e.value) and EXTRA in str(e.value)


@needs_gguf
def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    bad = tmp_path / "m.gguf"
    bad.write_bytes(b"PK\x03\x04 this is a zip")
    with pytest.raises(ModelError, match="not a GGUF file"):
        pllscore.load(bad, device="cpu")


# -- a tiny Llama, written to GGUF and read back -------------------------------------------


def _permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's q/k row order (rotary halves interleaved); transformers undoes it on loading."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_tiny_gguf(path, model, tokenizer) -> None:
    """Write a LlamaForCausalLM (float32) and its byte-level BPE tokenizer as a GGUF file.

    A model with tied embeddings is written without ``output.weight``, as llama.cpp writes one.
    """
    import gguf

    cfg = model.config
    w = gguf.GGUFWriter(str(path), arch="llama")
    w.add_name("tiny llama")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_rope_dimension_count(cfg.hidden_size // cfg.num_attention_heads)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_vocab_size(cfg.vocab_size)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    merges = json.loads(tokenizer.backend_tokenizer.to_str())["model"]["merges"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    specials = set(tokenizer.all_special_tokens)
    w.add_token_types([gguf.TokenType.CONTROL if t in specials else gguf.TokenType.NORMAL for t in tokens])
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in merges])
    w.add_bos_token_id(tokenizer.bos_token_id)
    w.add_eos_token_id(tokenizer.eos_token_id)
    w.add_add_bos_token(False)
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    names = {
        "attn_norm": "input_layernorm",
        "attn_v": "self_attn.v_proj",
        "attn_output": "self_attn.o_proj",
        "ffn_norm": "post_attention_layernorm",
        "ffn_gate": "mlp.gate_proj",
        "ffn_up": "mlp.up_proj",
        "ffn_down": "mlp.down_proj",
    }
    for i in range(cfg.num_hidden_layers):
        p = f"model.layers.{i}."
        w.add_tensor(f"blk.{i}.attn_q.weight", _permute(sd[p + "self_attn.q_proj.weight"], cfg.num_attention_heads))
        w.add_tensor(f"blk.{i}.attn_k.weight", _permute(sd[p + "self_attn.k_proj.weight"], cfg.num_key_value_heads))
        for ours, theirs in names.items():
            w.add_tensor(f"blk.{i}.{ours}.weight", sd[p + theirs + ".weight"])
    w.add_tensor("output_norm.weight", sd["model.norm.weight"])
    if not cfg.tie_word_embeddings:
        w.add_tensor("output.weight", sd["lm_head.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory):
    """Converted GGUF files go to a folder of this test run's, not the user's cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PLLSCORE_CACHE", str(tmp_path_factory.mktemp("pllscore-cache")))
        yield


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(path of the GGUF file, the original model, its tokenizer)."""
    return make_tiny_gguf(tmp_path_factory.mktemp("gguf"))


def make_tiny_gguf(folder, *, tied: bool = False, seed: int = 0):
    """A random tiny Llama written to ``folder`` as a GGUF file: (its path, the model, its tokenizer).

    ``tied``: the output layer is the embedding matrix (no ``output.weight`` in the file).
    """
    if not _has("gguf", "accelerate"):
        pytest.skip(f"the gguf extra is not installed ({EXTRA})")
    from transformers import LlamaConfig, LlamaForCausalLM

    from tests import tokenizers_fixtures as tf

    tok = tf.byte_bpe(roberta=False)
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        rms_norm_eps=1e-6,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        tie_word_embeddings=tied,
    )
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():  # norms of 1 would hide a norm weight read from the wrong tensor
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    path = folder / ("tiny-llama-tied.F32.gguf" if tied else "tiny-llama.F32.gguf")
    write_tiny_gguf(path, model, tok)
    return path, model, tok


@pytest.fixture(scope="module")
def tiny_scorer(tiny):
    return pllscore.load(tiny[0], device="cpu")


def test_the_tiny_gguf_loads_as_the_model_it_was_written_from(tiny, tiny_scorer):
    path, model, tok = tiny
    s = tiny_scorer
    assert type(s).__name__ == "CausalScorer" and s.kind == "causal"
    assert s.name == str(path) and s.revision is None
    assert s.tokenizer.is_fast and s.max_length == 64
    for text in SENTENCES:
        assert s.tokenizer(text)["input_ids"] == tok(text)["input_ids"]
    ids = torch.tensor([[tok.bos_token_id, *tok(" ".join(SENTENCES))["input_ids"]][:64]])
    with torch.inference_mode():
        assert torch.equal(s.model(input_ids=ids).logits, model(input_ids=ids).logits)


def test_the_tiny_gguf_scores_equal_the_oracle_on_the_original_model(tiny, tiny_scorer):
    _, model, tok = tiny
    for r, text in zip(tiny_scorer.score(SENTENCES), SENTENCES):
        np.testing.assert_allclose(r.logprobs, causal_logprobs(model, tok, text), atol=1e-5, rtol=0)


def test_a_folder_holding_the_gguf_loads_the_same(tiny, tiny_scorer):
    folder = tiny[0].parent
    (folder / "README.md").write_text("the tiny model")
    s = pllscore.load(folder, device="cpu")
    assert s.name == str(tiny[0])
    assert s.score(SENTENCES).totals.tolist() == tiny_scorer.score(SENTENCES).totals.tolist()


def test_files_beside_the_gguf_are_not_read(tiny, tiny_scorer, tmp_path):
    """A GGUF next to another model's files (a Hub repo with both) is read alone."""
    gguf_file = tmp_path / "model.gguf"
    gguf_file.write_bytes(tiny[0].read_bytes())
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "architectures": ["BertForMaskedLM"]}))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer"}))
    s = pllscore.load(gguf_file, device="cpu")
    assert s.kind == "causal"
    assert s.score(SENTENCES).totals.tolist() == tiny_scorer.score(SENTENCES).totals.tolist()


def test_kind_masked_and_a_revision_are_refused(tiny):
    with pytest.raises(ModelError, match="causal LM"):
        pllscore.load(tiny[0], device="cpu", kind="masked")
    with pytest.raises(InputError, match="revision"):
        pllscore.load(tiny[0], device="cpu", revision="main")


def test_the_provenance_records_the_file_name_and_sha256(tiny, tiny_scorer):
    import hashlib

    from pllscore.io.provenance import model_identity, model_key, model_record, run_record

    path = tiny[0]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    ident = model_identity(tiny_scorer)
    assert ident == {"name": str(path.resolve()), "revision": None, "fingerprint": f"sha256:{digest}"}
    assert model_key(tiny_scorer) == f"tiny-llama.F32.gguf@{digest[:12]}"
    file = {"name": "tiny-llama.F32.gguf", "sha256": digest}
    assert model_record(tiny_scorer)["model_file"] == file
    assert run_record(tiny_scorer, ["causal"])["model_file"] == file


def _cli(*args: str) -> tuple[int, str, str]:
    done = cli_run(*args)
    return done.returncode, done.stdout, done.stderr


def test_the_cli_scores_with_a_gguf_model(tiny, tiny_scorer, tmp_path):
    import hashlib

    import pandas as pd

    (tmp_path / "in.txt").write_text("\n".join(SENTENCES) + "\n")
    out = tmp_path / "out.tsv"
    code, _, err = _cli("score", str(tmp_path / "in.txt"), "-m", str(tiny[0]), "-o", str(out), "-q")
    assert code == 0, err
    frame = pd.read_csv(out, sep="\t")
    assert frame["causal_logprob"].tolist() == pytest.approx(tiny_scorer.score(SENTENCES).totals.tolist(), abs=1e-9)
    meta = json.loads((tmp_path / "out.tsv.meta.json").read_text())
    digest = hashlib.sha256(tiny[0].read_bytes()).hexdigest()
    assert meta["model_file"] == {"name": tiny[0].name, "sha256": digest}
    assert meta["model_fingerprint"] == f"sha256:{digest}"
