"""dtype=bfloat16/float16: autocast over float32 weights; close to, not equal to, float32."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pllscore import CausalScorer, InputError, MaskedScorer
from tests.conftest import SENTENCES


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
