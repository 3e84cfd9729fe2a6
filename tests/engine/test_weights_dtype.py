"""dtype=bfloat16/float16 loads the weights in that type (half the memory); autocast=True keeps float32 weights and
autocasts, as before; a model handed to a scorer keeps its weights as they are."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import pllscore
from pllscore import CausalScorer, InputError, MaskedScorer
from pllscore.settings import ModelSettings
from tests.conftest import SENTENCES


@pytest.fixture(scope="module")
def saved(tmp_path_factory, masked_models, causal_models, seq2seq_models):
    """The tiny fixture models saved to folders (float32), as a user's models are."""
    root = tmp_path_factory.mktemp("dtype-models")
    pairs = {"masked": masked_models["bert-wordpiece"], "causal": causal_models["gpt2-bpe"]}
    pairs["seq2seq"] = seq2seq_models["t5-unigram"]
    for name, (model, tok) in pairs.items():
        model.save_pretrained(root / name)
        tok.save_pretrained(root / name)
    return root


def _weights(scorer):
    return {p.dtype for p in scorer.model.parameters()}


@pytest.mark.parametrize("kind", ["masked", "causal", "seq2seq"])
def test_reduced_dtype_loads_the_weights_in_it_and_halves_the_memory(saved, kind):
    exact = pllscore.load(saved / kind, device="cpu")
    half = pllscore.load(saved / kind, device="cpu", dtype="bfloat16")
    assert _weights(exact) == {torch.float32}
    assert _weights(half) == {torch.bfloat16}
    nbytes = [sum(p.numel() * p.element_size() for p in s.model.parameters()) for s in (exact, half)]
    assert nbytes[1] * 2 == nbytes[0]
    # the footprint counts buffers too (position ids stay int64)
    assert half.model.get_memory_footprint() < 0.55 * exact.model.get_memory_footprint()
    assert (half.dtype, half.autocast) == (torch.bfloat16, False)
    assert (exact.dtype, exact.autocast) == (torch.float32, False)


def test_float16_weights(saved):
    half = pllscore.load(saved / "causal", device="cpu", dtype="fp16")
    assert _weights(half) == {torch.float16} and half.dtype == torch.float16


def _error(exact, approx):
    return np.concatenate([np.abs(a.logprobs - b.logprobs) for a, b in zip(exact, approx)])


def test_bf16_weights_are_close_to_float32_masked(saved):
    # the bounds of tests/engine/test_precision.py (autocast over float32 weights)
    exact = pllscore.load(saved / "masked", device="cpu").score(SENTENCES, metric="all")
    approx = pllscore.load(saved / "masked", device="cpu", dtype="bfloat16").score(SENTENCES, metric="all")
    err = _error(exact, approx)
    assert 0 < err.max() < 0.1


def test_bf16_weights_are_close_to_float32_causal(saved):
    exact = pllscore.load(saved / "causal", device="cpu").score(SENTENCES)
    approx = pllscore.load(saved / "causal", device="cpu", dtype="bfloat16").score(SENTENCES)
    assert approx.totals == pytest.approx(exact.totals, abs=0.5)
    assert not np.array_equal(approx.totals, exact.totals)


def test_bf16_weights_are_close_to_float32_seq2seq(saved):
    exact = pllscore.load(saved / "seq2seq", device="cpu").score(SENTENCES)
    approx = pllscore.load(saved / "seq2seq", device="cpu", dtype="bfloat16").score(SENTENCES)
    assert approx.totals == pytest.approx(exact.totals, abs=0.5)
    assert not np.array_equal(approx.totals, exact.totals)


def test_log_softmax_is_float32_with_bf16_weights(saved):
    """The head's logits come out bf16; every readout takes its log-sum-exp in float32 (a bf16 log-softmax
    over the vocabulary would be off by ~1e-2 nats a token)."""
    from pllscore.engine import readout

    seen = []
    real = torch.logsumexp

    def spy(x, *args, **kwargs):
        seen.append(x.dtype)
        return real(x, *args, **kwargs)

    scorer = pllscore.load(saved / "causal", device="cpu", dtype="bfloat16")
    try:
        readout.torch.logsumexp = spy
        scorer.score(SENTENCES[:2])
        scorer.score(SENTENCES[:2], outputs=["entropy", "rank"])
    finally:
        readout.torch.logsumexp = real
    assert seen and set(seen) == {torch.float32}


def test_autocast_keeps_float32_weights_and_todays_numbers(saved, causal_models, masked_models):
    for kind, (model, tok), cls in [
        ("causal", causal_models["gpt2-bpe"], CausalScorer),
        ("masked", masked_models["bert-wordpiece"], MaskedScorer),
    ]:
        scorer = pllscore.load(saved / kind, device="cpu", dtype="bfloat16", autocast=True)
        assert _weights(scorer) == {torch.float32}
        assert (scorer.dtype, scorer.autocast) == (torch.bfloat16, True)
        # today's path: float32 weights handed to a scorer with dtype=bfloat16 are autocast
        today = cls(model, tok, dtype="bfloat16")
        assert today.autocast
        np.testing.assert_array_equal(scorer.score(SENTENCES).totals, today.score(SENTENCES).totals)


def test_a_model_handed_over_keeps_its_weights(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    half = type(model)(model.config).to(torch.bfloat16).eval()
    half.load_state_dict(model.state_dict())
    scorer = CausalScorer(half, tok)  # dtype left out: the weights' own
    assert (scorer.dtype, scorer.autocast) == (torch.bfloat16, False)
    assert _weights(scorer) == {torch.bfloat16}
    same = CausalScorer(half, tok, dtype="bfloat16")
    assert not same.autocast
    np.testing.assert_array_equal(scorer.score(SENTENCES[:3]).totals, same.score(SENTENCES[:3]).totals)
    with pytest.raises(InputError, match="weights are bfloat16, not float32"):
        CausalScorer(half, tok, dtype="float32")


def test_autocast_needs_a_reduced_dtype(saved):
    with pytest.raises(InputError, match="autocast=True runs float32 weights"):
        pllscore.load(saved / "causal", device="cpu", autocast=True)
    with pytest.raises(InputError, match="--autocast runs float32 weights"):
        ModelSettings(model="m", autocast=True)
    assert ModelSettings(model="m", dtype="bf16", autocast=True).record()["autocast"] is True


def test_provenance_records_autocast_and_resume_refuses_a_change(saved, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("\n".join(SENTENCES[:4]) + "\n")
    out = tmp_path / "out.csv"
    model = str(saved / "causal")
    pllscore.score_file(src, out, model=model, device="cpu", dtype="bfloat16", autocast=True)
    meta = json.loads((tmp_path / "out.csv.meta.json").read_text())
    assert (meta["dtype"], meta["autocast"]) == ("bfloat16", True)
    with pytest.raises(InputError, match="autocast=True, this run has autocast=False"):
        pllscore.score_file(src, out, model=model, device="cpu", dtype="bfloat16", resume=True)
    pllscore.score_file(src, out, model=model, device="cpu", dtype="bfloat16", autocast=True, resume=True)


def test_resume_reads_an_older_bf16_output_as_autocast(saved, tmp_path):
    """Outputs written before autocast was a setting ran bfloat16 as autocast over float32 weights."""
    src = tmp_path / "in.txt"
    src.write_text("\n".join(SENTENCES[:4]) + "\n")
    out = tmp_path / "out.csv"
    model = str(saved / "causal")
    pllscore.score_file(src, out, model=model, device="cpu", dtype="bfloat16", autocast=True)
    meta_file = tmp_path / "out.csv.meta.json"
    meta = json.loads(meta_file.read_text())
    del meta["autocast"]
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(InputError, match="autocast=True, this run has autocast=False"):
        pllscore.score_file(src, out, model=model, device="cpu", dtype="bfloat16", resume=True)
    pllscore.score_file(src, out, model=model, device="cpu", dtype="bfloat16", autocast=True, resume=True)


def test_cli_autocast_flag(saved, tmp_path):
    from tests.test_cli import run

    model = str(saved / "causal")
    args = ["score", "--text", "The cat sat.", "--model", model, "--device", "cpu", "--dtype", "bfloat16"]
    got = run(*args, "--autocast", "-o", str(tmp_path / "a.csv"), "-q")
    assert got.returncode == 0, got.stderr
    assert json.loads((tmp_path / "a.csv.meta.json").read_text())["autocast"] is True
    bad = run("score", "--text", "x", "--model", model, "--autocast")
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines() == [
        "error: --autocast runs float32 weights in a reduced type: add --dtype bfloat16 or float16, or drop --autocast"
    ]
