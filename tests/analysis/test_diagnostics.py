"""Diagnostics: r and CI equal scipy's; OOV ratio by hand; word scores equal the oracle on the span."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pllscore import MaskedScorer
from pllscore.analysis import diagnostics as dx
from pllscore.analysis.stats import pearson
from tests import oracle
from tests import tokenizers_fixtures as tf
from tests.fakes import FakeScorer


def test_pearson_equals_scipy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    y = x + rng.normal(size=40)
    got = pearson(x, y)
    want = stats.pearsonr(x, y)
    ci = want.confidence_interval(0.95)
    assert (got["r"], got["ci_low"], got["ci_high"], got["p"], got["n"]) == pytest.approx(
        (want.statistic, ci.low, ci.high, want.pvalue, 40)
    )
    x[3] = np.nan  # non-finite pairs are dropped
    assert pearson(x, y)["n"] == 39
    assert np.isnan(pearson([1, 1, 1], [1, 2, 3])["r"])


def test_length_and_agreement_use_the_right_vectors():
    texts = {"a b": -2.0, "a b c": -5.0, "a b c d e": -6.0, "a": -0.5}
    mlm = FakeScorer(texts).score(list(texts), metric=["original", "word-l2r"])
    clm = FakeScorer({k: v * 2 + 1 for k, v in texts.items()}, kind="causal").score(list(texts))
    summary, data = dx.length(mlm, clm)
    assert summary["metric"].tolist() == ["original", "word-l2r", "causal"]
    n_tokens = [1, 1, 1, 1]  # FakeScorer: one token per text
    assert np.isnan(summary["r"].iloc[0])  # no spread in length
    agree, _ = dx.agreement(mlm, clm)
    assert agree["r"].tolist() == pytest.approx([1.0, 1.0])
    assert data["surprisal"].tolist()[:4] == [2.0, 5.0, 6.0, 0.5] and data["n_tokens"].tolist()[:4] == n_tokens


def test_oov_ratio_by_hand():
    tok = tf.wordpiece()
    # "hooligan" -> ho ##oli ##gan (split); "the", "cat", "vehicle" whole; "zebra" -> letters (split); "." ignored
    ratio = dx.oov_ratio(tok, ["the hooligan the cat.", "zebra vehicle hooligan."])
    assert ratio["word_tokens"] == 7 and ratio["word_tokens_split"] == 3
    assert ratio["word_types"] == 5 and ratio["word_types_split"] == 2
    assert ratio["token_ratio"] == pytest.approx(3 / 7) and ratio["type_ratio"] == pytest.approx(2 / 5)


def test_word_scores_in_context_equal_oracle_on_the_span(masked_models):
    model, tok = masked_models["bert-wordpiece"]
    words = ["hooligan", "vehicle", "zebra"]
    summary, data = dx.word_frequency(words, MaskedScorer(model, tok), metrics=["original", "word-l2r"], progress=False)
    for _, row in data.iterrows():
        text = dx.CONTEXTS[row["context"]].format(row["word"])
        a = text.index(row["word"], len(text) - len(row["word"]) - 0)
        enc = tok(text, return_offsets_mapping=True)
        lp = oracle.masked_logprobs(model, tok, text, row["metric"])
        offs = [o for o, w in zip(enc["offset_mapping"], enc.word_ids()) if w is not None]
        want = sum(v for v, (s, e) in zip(lp, offs) if s < a + len(row["word"]) and e > a)
        assert row["logprob"] == pytest.approx(want, abs=1e-5)
    assert set(summary["analysis"]) == {f"frequency:{c}" for c in dx.CONTEXTS}
    assert dx.distinct_words(["The Cat sat.", "the cat's hat"]) == ["the", "cat", "sat", "cat's", "hat"]
