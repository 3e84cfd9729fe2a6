"""Conditional scores against minicons' conditional_score (an independent implementation)."""

from __future__ import annotations

import pytest

minicons = pytest.importorskip("minicons.scorer", reason="minicons not installed (pip install pllscore[test])")

PAIRS = [
    ("The traveler lost the souvenir.", "She was sad."),
    ("After the storm,", "the hooligan wrecked the vehicle."),
    ("My cat", "sat on the mat yesterday!"),
]


def _fresh_tokenizer(scorer):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(scorer.tokenizer.name_or_path)  # minicons may change its pad token
    if not hasattr(tok, "batch_encode_plus"):  # transformers 5 dropped it; minicons' masked scorer calls it
        tok.batch_encode_plus = tok.__call__
    return tok


def test_causal_conditional_score_equals_minicons(shared_gpt2):
    lm = minicons.IncrementalLMScorer(shared_gpt2.model, "cpu", tokenizer=_fresh_tokenizer(shared_gpt2))
    for context, text in PAIRS:
        want = lm.conditional_score(context, text, reduction=lambda x: x.sum(0).item(), bos_token=True)[0]
        got = shared_gpt2.score(text, context=context)[0].total
        assert got == pytest.approx(want, abs=1e-4), (context, text)


@pytest.mark.parametrize(("ours", "theirs"), [("original", "original"), ("word-l2r", "within_word_l2r")])
def test_masked_conditional_score_equals_minicons(shared_bert, ours, theirs):
    lm = minicons.MaskedLMScorer(shared_bert.model, "cpu", tokenizer=_fresh_tokenizer(shared_bert))
    for context, text in PAIRS:
        want = lm.conditional_score(context, text, reduction=lambda x: x.sum(0).item(), PLL_metric=theirs)[0]
        got = shared_bert.score(text, context=context, metric=ours)[0].total
        assert got == pytest.approx(want, abs=1e-4), (ours, context, text)
