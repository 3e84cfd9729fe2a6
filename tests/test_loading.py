"""Loading from folders: kind detection, overrides and one-line errors."""

from __future__ import annotations

import pytest

import pllscore
from pllscore import CausalScorer, InputError, MaskedScorer, ModelError
from pllscore.engine.loading import resolve_device, resolve_dtype


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
