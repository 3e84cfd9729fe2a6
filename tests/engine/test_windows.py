"""long="window": equal to the normal score when the text fits; by construction when it does not."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pllscore import CausalScorer, InputTooLongError, MaskedScorer
from pllscore.metrics import METRICS
from tests import oracle
from tests.conftest import SENTENCES

LONG = " ".join(["The hooligan wrecked the vehicle, and the cat sat on the mat."] * 9)  # about 100 tokens


@pytest.mark.parametrize("metric", list(METRICS))
def test_masked_window_equals_normal_when_it_fits(masked_models, metric):
    model, tok = masked_models["bert-wordpiece"]
    normal = MaskedScorer(model, tok).score(SENTENCES, metric=metric)
    windowed = MaskedScorer(model, tok, long="window").score(SENTENCES, metric=metric)
    for a, b in zip(normal, windowed):
        assert a.logprobs.tolist() == b.logprobs.tolist()


@pytest.mark.parametrize("metric", list(METRICS))
def test_masked_window_by_construction(masked_models, metric):
    model, tok = masked_models["bert-wordpiece"]
    scorer = MaskedScorer(model, tok, long="window", max_tokens=300)
    n = len(tok(LONG)["input_ids"])
    assert n > scorer.max_length == 64
    with pytest.raises(InputTooLongError):
        MaskedScorer(model, tok).score(LONG)
    got = scorer.score(LONG, metric=metric)[0]
    assert got.n_scored == n - 2
    want = oracle.masked_window_logprobs(model, tok, LONG, metric, 64)
    np.testing.assert_allclose(got.logprobs, want, atol=1e-5, rtol=0)


def test_causal_window_equals_normal_when_it_fits(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    a = CausalScorer(model, tok).score(SENTENCES)
    b = CausalScorer(model, tok, long="window").score(SENTENCES)
    for x, y in zip(a, b):
        assert x.logprobs.tolist() == y.logprobs.tolist()


@pytest.mark.parametrize("stride", [1, 16, 40, 63])
def test_causal_window_by_construction(causal_models, stride):
    model, tok = causal_models["gpt2-bpe"]
    scorer = CausalScorer(model, tok, long="window", stride=stride)
    ids = [tok.eos_token_id, *tok(LONG)["input_ids"]]
    assert len(ids) > 64
    got = scorer.score(LONG)[0]
    # by hand: token p is predicted from the window that ends after it, with the tokens before it in that window
    want = []
    end = min(64, len(ids))
    windows = [(0, end, 1)]
    while end < len(ids):
        new_end = min(end + stride, len(ids))
        windows.append((new_end - 64, new_end, end))
        end = new_end
    for b, e, f in windows:
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([ids[b:e]])).logits[0].double()
        want += [torch.log_softmax(logits[p - b - 1], -1)[ids[p]].item() for p in range(f, e)]
    np.testing.assert_allclose(got.logprobs, want, atol=1e-5, rtol=0)
