"""dtype=bfloat16/float16: autocast over float32 weights; close to, not equal to, float32. float32 stays exact
whatever the process set (TF32 on CUDA, bf16/TF32 through oneDNN on CPUs)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pllscore import CausalScorer, InputError, MaskedScorer
from tests.conftest import SENTENCES

pytestmark = pytest.mark.gpu  # make test-gpu: the same on CUDA (tests/device.py)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_masked_autocast_is_close_to_float32(masked_models, dtype):
    model, tok = masked_models["bert-wordpiece"]
    exact = MaskedScorer(model, tok).score(SENTENCES, metric="all")
    approx = MaskedScorer(model, tok, dtype=dtype).score(SENTENCES, metric="all")
    err = np.concatenate([np.abs(a.logprobs - b.logprobs) for a, b in zip(exact, approx)])
    assert err.max() < 0.1
    assert next(model.parameters()).dtype == torch.float32  # weights untouched


def test_causal_autocast_is_close_to_float32(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    exact = CausalScorer(model, tok).score(SENTENCES)
    approx = CausalScorer(model, tok, dtype="bfloat16").score(SENTENCES)
    assert approx.totals == pytest.approx(exact.totals, abs=0.5)
    assert not np.array_equal(approx.totals, exact.totals)


def test_bad_dtype(masked_models):
    with pytest.raises(InputError, match="unsupported dtype"):
        MaskedScorer(*masked_models["bert-wordpiece"], dtype="int8")


# --- float32 stays float32 whatever the process set (TF32 on CUDA, bf16/TF32 through oneDNN on CPUs) ---------
def _fp32_state():
    from pllscore.engine.executor import _FP32_BACKENDS, _backend

    return [_backend(p).fp32_precision for p in _FP32_BACKENDS]


def _lowered(precision: str):
    """The process's float32 products lowered to ``precision`` as Lightning lowers them, put back afterwards."""
    if not hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        pytest.skip("torch before 2.9 has only the legacy switches")
    from pllscore.engine.executor import _FP32_BACKENDS, _backend

    before = _fp32_state()
    torch.set_float32_matmul_precision(precision)
    yield
    for p, b in zip(_FP32_BACKENDS, before):
        _backend(p).fp32_precision = b


@pytest.fixture
def lowered_float32():
    yield from _lowered("medium")  # cuBLAS TF32, oneDNN bf16


@pytest.fixture
def tf32_on():
    yield from _lowered("high")  # TF32 on cuBLAS (and oneDNN)


@pytest.mark.parametrize("kind", ["masked", "causal"])
def test_float32_forward_runs_in_full_float32_under_a_lowered_global_setting(
    masked_models, causal_models, lowered_float32, kind
):
    model, tok = masked_models["bert-wordpiece"] if kind == "masked" else causal_models["gpt2-bpe"]
    seen = []
    # on the first layer with a matrix product (the engines call the model's parts, not its forward)
    first = next(m for m in model.modules() if isinstance(m, torch.nn.Linear) or type(m).__name__ == "Conv1D")
    hook = first.register_forward_pre_hook(lambda *_: seen.append(_fp32_state()))
    try:
        scorer = (MaskedScorer if kind == "masked" else CausalScorer)(model, tok)
        lowered = _fp32_state()
        scorer.score(SENTENCES[:3])
    finally:
        hook.remove()
    assert seen and all(s == ["ieee"] * len(s) for s in seen)  # every forward pass in float32
    assert _fp32_state() == lowered  # and the user's setting is back
    assert "tf32" in lowered and "bf16" in lowered


def test_float32_scores_do_not_move_under_a_lowered_global_setting(causal_models, lowered_float32):
    from tests import oracle

    model, tok = causal_models["gpt2-bpe"]
    got = CausalScorer(model, tok).score(SENTENCES[:3])
    for r in got:
        np.testing.assert_allclose(r.logprobs, oracle.causal_logprobs(model, tok, r.text), atol=1e-5, rtol=0)


@pytest.mark.parametrize("kind", ["masked", "causal"])
def test_the_oracle_runs_in_full_float32_under_a_lowered_global_setting(
    masked_models, causal_models, lowered_float32, kind
):
    """The oracle is immune to the process's precision: on CPUs with AMX-BF16, "medium" made oneDNN run it in bf16
    and the oracle, not the product, moved by up to 6.7e-4 nats."""
    from tests import oracle

    model, tok = masked_models["bert-wordpiece"] if kind == "masked" else causal_models["gpt2-bpe"]
    seen = []
    first = next(m for m in model.modules() if isinstance(m, torch.nn.Linear) or type(m).__name__ == "Conv1D")
    hook = first.register_forward_pre_hook(lambda *_: seen.append(_fp32_state()))
    lowered = _fp32_state()
    try:
        if kind == "masked":
            oracle.masked_logprobs(model, tok, SENTENCES[0], "word-l2r")
        else:
            oracle.causal_logprobs(model, tok, SENTENCES[0])
    finally:
        hook.remove()
    assert seen and all(s == ["ieee"] * len(s) for s in seen)
    assert _fp32_state() == lowered and "bf16" in lowered


@pytest.mark.parametrize("family", ["bert-wordpiece", "gpt2-bpe", "llama-unigram"])
def test_float32_scores_equal_a_float64_oracle_with_tf32_on(masked_models, causal_models, tf32_on, family):
    """TF32 switched on globally (``set_float32_matmul_precision("high")``): within 1e-5 of the oracle in float64.

    On an H200 without the guard, the tiny models' totals moved 4e-3 to 6e-3 nats away from the oracle.
    """
    from tests import oracle
    from tests.device import float64_copy

    lowered = _fp32_state()
    if family in masked_models:
        model, tok = masked_models[family]
        got = MaskedScorer(model, tok).score(SENTENCES[:3], metric="all")
        want = [oracle.masked_logprobs(float64_copy(model), tok, r.text, r.metric) for r in got]
    else:
        model, tok = causal_models[family]
        got = CausalScorer(model, tok).score(SENTENCES[:3])
        want = [oracle.causal_logprobs(float64_copy(model), tok, r.text) for r in got]
    assert _fp32_state() == lowered and "tf32" in lowered  # the user's setting still on after scoring
    for r, w in zip(got, want):
        np.testing.assert_allclose(r.logprobs, w, atol=1e-5, rtol=0, err_msg=f"{family} {r.metric} {r.text!r}")
