"""A NaN or infinite log-probability is an error naming the text and dtype, never a number."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from pllscore import CausalScorer, MaskedScorer, ModelError, NonFiniteError, PllscoreError
from tests.conftest import SENTENCES


def _poison_token(model, tok, text: str) -> int:
    """Set the input embedding of the middle token of ``text`` to NaN (output embeddings untied first)."""
    ids = tok(text, add_special_tokens=False)["input_ids"]
    target = ids[len(ids) // 2]
    out = model.get_output_embeddings()
    out.weight = torch.nn.Parameter(out.weight.detach().clone())  # only the input side gets NaN
    with torch.no_grad():
        model.get_input_embeddings().weight[target] = float("nan")
    return target


def test_error_names_the_text_and_dtype():
    err = NonFiniteError(3, math.nan, "float16")
    assert isinstance(err, ModelError) and isinstance(err, PllscoreError)
    assert str(err).startswith("text 3 got a non-finite log-probability (nan) under dtype float16; score in float32")
    assert "\n" not in str(err) and err.index == 3


def test_masked_nan_weights_raise_naming_the_text(masked_models):
    model, tok = masked_models["bert-wordpiece"]
    model = copy.deepcopy(model)
    _poison_token(model, tok, SENTENCES[0])  # "wrecked" occurs in no other sentence
    scorer = MaskedScorer(model, tok)
    texts = [SENTENCES[2], SENTENCES[1], SENTENCES[0]]
    with pytest.raises(NonFiniteError, match=r"^text 2 got a non-finite log-probability \(nan\) under dtype float32"):
        scorer.score(texts, metric="all")
    # texts without the poisoned token score as before, to finite numbers
    assert np.isfinite(scorer.score(texts[:2]).totals).all()


def test_causal_nan_weights_raise_naming_the_text(causal_models):
    model, tok = causal_models["llama-unigram"]
    model = copy.deepcopy(model)
    _poison_token(model, tok, SENTENCES[0])
    scorer = CausalScorer(model, tok)
    texts = [SENTENCES[2], SENTENCES[0], SENTENCES[1]]
    with pytest.raises(NonFiniteError, match=r"^text 1 got a non-finite log-probability \(nan\) under dtype float32"):
        scorer.score(texts)
    assert np.isfinite(scorer.score([texts[0], texts[2]]).totals).all()


@pytest.mark.parametrize("kind", ["masked", "causal"])
def test_float16_overflow_raises_where_float32_scores(masked_models, causal_models, kind):
    if kind == "masked":
        model, tok = copy.deepcopy(masked_models["bert-wordpiece"][0]), masked_models["bert-wordpiece"][1]
        make = MaskedScorer
    else:
        model, tok = copy.deepcopy(causal_models["gpt2-bpe"][0]), causal_models["gpt2-bpe"][1]
        make = CausalScorer
    out = model.get_output_embeddings()
    # logits of ~1e5-1e6: fine in float32, beyond float16's largest number (65504)
    out.weight = torch.nn.Parameter(out.weight.detach().clone() * 1e6)
    assert np.isfinite(make(model, tok).score(SENTENCES[:2]).totals).all()
    with pytest.raises(NonFiniteError, match=r"^text 0 got .* under dtype float16; score in float32 \(the default\)"):
        make(model, tok, dtype="float16").score(SENTENCES[:2])


def test_nothing_scored_is_nan_not_zero(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    scorer = CausalScorer(model, tok, bos=False)
    one = next(w for w in ["cat", "the", "a", "."] if len(tok(w, add_special_tokens=False)["input_ids"]) == 1)
    res = scorer.score([one, "The cat sat."])
    assert res[0].n_scored == 0  # the first token has no context without BOS: no error, no score
    assert math.isnan(res[0].total) and math.isnan(res[0].mean) and math.isnan(res[0].span(0, len(one)))
    assert np.isfinite(res[1].total) and math.isnan(res.totals[0])


def test_pairs_name_the_sentence_not_an_internal_index(masked_models):
    import pandas as pd

    from pllscore.eval.pairs import score_pairs

    model, tok = masked_models["bert-wordpiece"]
    model = copy.deepcopy(model)
    _poison_token(model, tok, SENTENCES[0])
    pairs = pd.DataFrame({"sentence_good": [SENTENCES[2], SENTENCES[1]], "sentence_bad": [SENTENCES[1], SENTENCES[0]]})
    with pytest.raises(NonFiniteError, match=r"^\S+: sentence 'The hooligan wrecked the vehicle\.' got a non-finite"):
        score_pairs(MaskedScorer(model, tok), pairs)


def test_score_file_names_the_input_line_and_keeps_finished_chunks(masked_models, tmp_path):
    from pllscore import score_file

    model, tok = masked_models["bert-wordpiece"]
    model = copy.deepcopy(model)
    _poison_token(model, tok, SENTENCES[0])
    lines = [SENTENCES[2], SENTENCES[1], SENTENCES[3], SENTENCES[0], SENTENCES[4]]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.csv"
    with pytest.raises(NonFiniteError, match=r"^line 4 of .*in\.txt got a non-finite .*the 2 texts before it are kept"):
        score_file(tmp_path / "in.txt", out, model=MaskedScorer(model, tok), chunk_size=2)
