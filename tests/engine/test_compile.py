"""compile=True: the compiled layers score as the oracle does (tiny masked and causal models)."""

from __future__ import annotations

import copy
import shutil

import numpy as np
import pytest

from pllscore import CausalScorer, MaskedScorer
from pllscore.engine.compiling import find_layers
from tests import oracle

pytestmark = pytest.mark.skipif(not (shutil.which("c++") or shutil.which("g++")), reason="no C++ compiler")

TEXTS = ["The cat sat on the mat.", "The cat sat on the mats.", "A dog"]


def test_layers_found_and_compiled(causal_models):
    model = copy.deepcopy(causal_models["llama-unigram"][0])
    layers = find_layers(model)
    assert layers is model.model.layers
    model2, tok = copy.deepcopy(causal_models["gpt2-bpe"])
    scorer = CausalScorer(model2, tok, compile=True)
    assert scorer.compiled and all(getattr(layer, "_pllscore_compiled", False) for layer in model2.transformer.h)


@pytest.mark.parametrize("share", [True, False])
def test_compiled_causal_equals_oracle(causal_models, share):
    model, tok = causal_models["llama-unigram"]
    compiled = copy.deepcopy(model)
    results = CausalScorer(compiled, tok, compile=True, share_prefixes=share).score(TEXTS)
    for text, r in zip(TEXTS, results):
        np.testing.assert_allclose(r.logprobs, oracle.causal_logprobs(model, tok, text), atol=1e-5, rtol=0)


def test_compiled_masked_equals_oracle(masked_models):
    model, tok = masked_models["bert-wordpiece"]
    compiled = copy.deepcopy(model)
    results = MaskedScorer(compiled, tok, compile=True).score(TEXTS, metric="word-l2r")
    for text, r in zip(TEXTS, results):
        np.testing.assert_allclose(r.logprobs, oracle.masked_logprobs(model, tok, text, "word-l2r"), atol=1e-5, rtol=0)
