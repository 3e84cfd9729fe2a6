"""outputs=("entropy", "rank"): per-token entropy and rank against a full-softmax float64 reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pllscore import CausalScorer, InputError, MaskedScorer
from pllscore.metrics import METRICS
from pllscore.results.frames import to_wide_frame
from tests import oracle
from tests.conftest import SENTENCES

ATOL = 2e-5


def _check(got, want, label):
    want = np.asarray(want, dtype=np.float64)
    np.testing.assert_allclose(got.logprobs, want[:, 0], atol=ATOL, rtol=0, err_msg=label)
    np.testing.assert_allclose(got.entropy, want[:, 1], atol=ATOL, rtol=0, err_msg=label)
    np.testing.assert_array_equal(got.rank, want[:, 2], err_msg=label)


@pytest.mark.parametrize("family", ["bert-wordpiece", "roberta-bpe", "albert-unigram"])
def test_masked_entropy_and_rank_equal_reference_under_each_metric(masked_models, family):
    model, tok = masked_models[family]
    results = MaskedScorer(model, tok, max_tokens=64).score(SENTENCES[:3], metric="all", outputs=("entropy", "rank"))
    for k, metric in enumerate(METRICS):
        for i, text in enumerate(SENTENCES[:3]):
            _check(results[k * 3 + i], oracle.masked_outputs(model, tok, text, metric), f"{family} {metric} {text!r}")


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram"])
def test_causal_entropy_and_rank_equal_reference(causal_models, family):
    model, tok = causal_models[family]
    scorer = CausalScorer(model, tok, max_tokens=40)
    results = scorer.score(SENTENCES, outputs=["entropy", "rank"])
    for r in results:
        _check(r, oracle.causal_outputs(model, tok, r.text), f"{family} {r.text!r}")


def test_causal_full_logits_path_equals_reference(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    scorer = CausalScorer(model, tok)
    scorer.engine.parts = None  # a family without a known head: full logits
    for r in scorer.score(SENTENCES[:2], outputs=("entropy", "rank")):
        _check(r, oracle.causal_outputs(model, tok, r.text), r.text)


def test_shared_models_entropy_and_rank(shared_bert, shared_gpt2):
    text = "The hooligan wrecked the vehicle."
    r = shared_gpt2.score(text, outputs=("entropy", "rank"))[0]
    _check(r, oracle.causal_outputs(shared_gpt2.model, shared_gpt2.tokenizer, text), "tiny-gpt2")
    r = shared_bert.score(text, metric="word-l2r", outputs=("entropy", "rank"))[0]
    _check(r, oracle.masked_outputs(shared_bert.model, shared_bert.tokenizer, text, "word-l2r"), "tiny-bert")


def _windowed_reference(model, ids: list[int], size: int, stride: int) -> list[tuple[float, float, int]]:
    """Per position 1..n-1, stats from the window that scores it by the documented rule: the first window
    holds ``0:size``; each later one ends ``stride`` further (or at the text's end) and holds ``size`` tokens."""
    import torch

    out = []
    n = len(ids)
    for j in range(1, n):
        end = size if j < size else min(size + stride * math.ceil((j + 1 - size) / stride), n)
        begin = max(end - size, 0)
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([ids[begin:end]])).logits[0]
        out.append(oracle._stats(logits[j - begin - 1], ids[j]))
    return out


def test_windows_read_each_output_from_the_window_that_scores_the_token(causal_models):
    model, tok = causal_models["gpt2-bpe"]  # 64 positions
    long = " ".join(SENTENCES * 3)
    scorer = CausalScorer(model, tok, stride=20)
    plain = scorer.score(long, long="window")[0]
    got = scorer.score(long, long="window", outputs=("entropy", "rank"))[0]
    assert np.array_equal(plain.logprobs, got.logprobs)
    ids = [tok.eos_token_id] + tok(long, add_special_tokens=False)["input_ids"]
    assert len(ids) > 100
    _check(got, _windowed_reference(model, ids, 64, 20), "windows")


def test_spans_leave_unscored_tokens_nan(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    part = CausalScorer(model, tok).score(SENTENCES[0], spans=[(4, 20)], outputs=("entropy", "rank"))[0]
    assert 0 < part.n_scored < part.n_tokens
    assert np.array_equal(np.isnan(part.entropy), ~part.scored)
    assert np.array_equal(np.isnan(part.rank), ~part.scored)


def test_views_frames_and_dicts(shared_gpt2):
    r = shared_gpt2.score(["The cat sat on the mat.", "Dogs bark."], outputs=("entropy", "rank"))
    bits = r.view(base=2, surprisal=True)
    np.testing.assert_allclose(bits[0].token_entropy, r[0].entropy / math.log(2))
    tokens = r.to_frame("token")
    assert list(tokens.columns)[-3:] == ["entropy", "rank", "unit"]
    np.testing.assert_allclose(tokens["entropy"].to_numpy(), np.concatenate([x.entropy for x in r]))
    words = r.to_frame("word")
    first = [0, 1, 2, 3, 4, 5, 6]  # one token per word in the first text
    np.testing.assert_allclose(words["entropy"].to_numpy()[:7], r[0].entropy[first])
    wide = to_wide_frame(r, level="token")
    assert list(wide["causal_rank"]) == [int(x) for x in np.concatenate([x.rank for x in r])]
    d = r[0].to_dict()["tokens"][0]
    assert set(d) >= {"entropy", "rank"} and d["rank"] == int(r[0].rank[0])
    plain = shared_gpt2.score("Dogs bark.")
    assert "entropy" not in plain.to_frame("token").columns


def test_unknown_output_is_one_line_error(shared_gpt2):
    with pytest.raises(InputError, match="unknown output 'entropie'"):
        shared_gpt2.score("Dogs bark.", outputs=("entropie",))
