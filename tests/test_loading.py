"""Loading from folders: kind detection, overrides and one-line errors."""

from __future__ import annotations

import re

import pytest

import pllscore
from pllscore import CausalScorer, InputError, MaskedScorer, ModelError
from pllscore.engine.loading import resolve_device, resolve_dtype
from tests.conftest import MASKED_FAMILIES


@pytest.fixture(scope="module")
def saved(tmp_path_factory, masked_models, causal_models):
    root = tmp_path_factory.mktemp("models")
    for name, (model, tok) in [("bert", masked_models["bert-wordpiece"]), ("gpt2", causal_models["gpt2-bpe"])]:
        model.save_pretrained(root / name)
        tok.save_pretrained(root / name)
    return root


def test_kind_from_config(saved):
    assert isinstance(pllscore.load(saved / "bert", device="cpu"), MaskedScorer)
    clm = pllscore.load(saved / "gpt2", device="cpu")
    assert isinstance(clm, CausalScorer) and clm.name.endswith("gpt2")


def test_loaded_equals_in_memory(saved, masked_models):
    text = "The hooligan wrecked the vehicle."
    a = pllscore.load(saved / "bert", device="cpu").score(text)[0]
    b = MaskedScorer(*masked_models["bert-wordpiece"]).score(text)[0]
    assert a.logprobs.tolist() == pytest.approx(b.logprobs.tolist(), abs=1e-6)


def test_wrong_kind_is_refused(saved):
    with pytest.raises(ModelError, match="is a causal LM .* not a masked one") as e:
        pllscore.load(saved / "gpt2", kind="masked")
    assert "\n" not in str(e.value)
    with pytest.raises(ModelError, match="is a masked LM"):
        pllscore.load(saved / "bert", kind="causal")


@pytest.mark.parametrize("name", ["no-such-model-xyz", "someone/not-a-real-model"])
def test_unknown_model_one_line(name):
    with pytest.raises(ModelError, match="not found.*local folder") as e:
        pllscore.load(name)
    assert "\n" not in str(e.value)


def test_missing_folder(tmp_path):
    with pytest.raises(ModelError) as e:
        pllscore.load(tmp_path)  # exists, but holds no model
    assert str(tmp_path) in str(e.value) and "\n" not in str(e.value)


def test_model_without_lm_head(tmp_path, masked_models):
    model, tok = masked_models["bert-wordpiece"]
    model.config.architectures = ["BertForSequenceClassification"]
    try:
        model.config.save_pretrained(tmp_path)
    finally:
        model.config.architectures = None
    (tmp_path / "config.json").write_text(
        (tmp_path / "config.json").read_text().replace('"model_type": "bert"', '"model_type": "bert-nope"')
    )
    with pytest.raises(ModelError):
        pllscore.load(tmp_path)


def test_device_and_dtype_resolution():
    assert resolve_device("auto").type in {"cpu", "cuda", "mps"}
    assert resolve_device("cpu").type == "cpu"
    with pytest.raises(InputError, match="invalid device"):
        resolve_device("gpu0")
    import torch

    assert resolve_dtype(None) is torch.float32 and resolve_dtype("bf16") is torch.bfloat16
    with pytest.raises(InputError, match="unsupported dtype"):
        resolve_dtype("int8")


# -- checkpoints without a trained LM head are refused ---------------------------------------


def _bert_config(tok):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
    )


def _headless(kind: str, tok):
    import torch
    from transformers import BertForSequenceClassification, BertModel, ElectraConfig, ElectraForPreTraining

    torch.manual_seed(0)
    if kind == "sequence-classifier":
        return BertForSequenceClassification(_bert_config(tok))
    if kind == "sentence-embedding":  # what a sentence-embedding folder holds: a bare encoder
        return BertModel(_bert_config(tok))
    return ElectraForPreTraining(  # an ELECTRA discriminator: replaced-token detection, no vocabulary head
        ElectraConfig(
            vocab_size=len(tok),
            embedding_size=16,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=37,
            max_position_embeddings=64,
            pad_token_id=tok.pad_token_id,
        )
    )


HEADLESS = {
    "sequence-classifier": "cls.predictions",
    "sentence-embedding": "cls.predictions",
    "electra-discriminator": "generator_predictions",
}


@pytest.fixture(scope="module")
def headless(tmp_path_factory):
    from tests import tokenizers_fixtures as tf

    tok = tf.wordpiece()
    root = tmp_path_factory.mktemp("headless")
    for kind in HEADLESS:
        _headless(kind, tok).save_pretrained(root / kind)
        tok.save_pretrained(root / kind)
    return root


@pytest.mark.parametrize("kind", list(HEADLESS))
def test_checkpoint_without_lm_head_is_refused(headless, kind):
    with pytest.raises(ModelError) as e:
        pllscore.load(headless / kind, device="cpu")
    message = str(e.value)
    assert "\n" not in message
    assert HEADLESS[kind] in message and "randomly initialised" in message
    assert "has no trained masked-LM head" in message
    assert re.search(r": \d+ weights of \w+ are not in the checkpoint", message) and "more)" in message
    assert "use a checkpoint with a masked-LM head" in message


def test_checkpoint_without_lm_head_is_refused_when_kind_is_forced(headless):
    with pytest.raises(ModelError, match="randomly initialised"):
        pllscore.load(headless / "sentence-embedding", device="cpu", kind="masked")


def test_tied_output_embeddings_load(saved):
    """BERT's decoder and GPT-2's lm_head are tied to the input embeddings and not saved: not missing."""
    from safetensors import safe_open

    def keys(folder):
        with safe_open(str(folder / "model.safetensors"), framework="pt") as f:
            return set(f.keys())

    assert "cls.predictions.decoder.weight" not in keys(saved / "bert")
    assert "lm_head.weight" not in keys(saved / "gpt2")
    assert isinstance(pllscore.load(saved / "bert", device="cpu"), MaskedScorer)
    clm = pllscore.load(saved / "gpt2", device="cpu")
    assert isinstance(clm, CausalScorer) and clm.score("The cat sat.")[0].total < 0


@pytest.mark.parametrize("family", MASKED_FAMILIES)
def test_every_masked_fixture_family_loads(tmp_path, masked_models, family):
    model, tok = masked_models[family]
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    text = "The cat sat on the mat."
    got = pllscore.load(tmp_path, device="cpu").score(text)[0].total
    assert got == pytest.approx(MaskedScorer(model, tok).score(text)[0].total, abs=1e-5)


def test_llama_fixture_loads(tmp_path, causal_models):
    model, tok = causal_models["llama-unigram"]
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    assert isinstance(pllscore.load(tmp_path, device="cpu"), CausalScorer)


def test_cli_refuses_checkpoint_without_lm_head(headless, tmp_path):
    from tests.test_cli import run

    (tmp_path / "in.txt").write_text("The cat sat on the mat.\n")
    done = run("score", str(tmp_path / "in.txt"), "-m", str(headless / "sequence-classifier"), "-q")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr
    assert "randomly initialised" in lines[0] and "cls.predictions" in lines[0]
    assert done.stdout == ""


def test_checkpoint_missing_body_weights_is_refused(tmp_path, masked_models):
    """A config with more layers than the weights hold: the extra layer would be random."""
    import json

    model, tok = masked_models["bert-wordpiece"]
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["num_hidden_layers"] += 1
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(
        ModelError, match=r"lacks weights of BertForMaskedLM's body: \d+ weights .*bert\.encoder\.layer\.2"
    ):
        pllscore.load(tmp_path, device="cpu")


def test_the_collector_is_paused_during_a_load_and_put_back(monkeypatch):
    import gc

    from pllscore.engine import loading

    seen = []
    monkeypatch.setattr(loading, "_load", lambda *a: seen.append(gc.isenabled()) or "loaded")
    assert gc.isenabled()
    assert loading.load_pretrained("anything") == "loaded" and seen == [False] and gc.isenabled()
    gc.disable()
    try:
        loading.load_pretrained("anything")
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()
