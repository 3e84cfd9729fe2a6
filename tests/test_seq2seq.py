"""Encoder-decoder scoring (T5 with a Unigram tokenizer, BART with byte-level BPE, both tiny and random) against
the model's own loss, an independent teacher-forced loop, and lm-evaluation-harness's seq2seq backend."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import pllscore
from pllscore import CausalScorer, MaskedScorer, Seq2SeqScorer
from pllscore.errors import InputError, ModelError
from tests.oracle import seq2seq_logprobs, seq2seq_loss_total

FAMILIES = ["t5-unigram", "bart-bpe"]
TEXTS = ["The cat sat on the mat.", "She went to the store yesterday.", "A dog ran.", "The chef cut the onion."]
SOURCES = ["The keys are on the table.", "", "The keys are on the table.", "Is the vehicle ready?"]


@pytest.fixture(params=FAMILIES)
def family(request, seq2seq_models):
    model, tok = seq2seq_models[request.param]
    return request.param, model, tok


def test_default_total_is_minus_the_models_own_loss(family):
    _, model, tok = family
    scorer = Seq2SeqScorer(model, tok)
    got = scorer.score(TEXTS, context=SOURCES).totals
    ref = [seq2seq_loss_total(model, tok, t, s) for t, s in zip(TEXTS, SOURCES)]
    np.testing.assert_allclose(got, ref, atol=1e-4)
    plain = scorer.score(TEXTS).totals  # no context: the empty source, tokenizer("")
    np.testing.assert_allclose(plain, [seq2seq_loss_total(model, tok, t) for t in TEXTS], atol=1e-4)


def test_tokens_equal_the_teacher_forced_loop_and_specials_are_listed(family):
    name, model, tok = family
    results = Seq2SeqScorer(model, tok).score(TEXTS, context=SOURCES)
    for r, t, s in zip(results, TEXTS, SOURCES):
        np.testing.assert_allclose(r.logprobs, seq2seq_logprobs(model, tok, t, s), atol=1e-4)
        assert r.pieces == tuple(tok.convert_ids_to_tokens(tok(t)["input_ids"]))
        special = r.is_special
        assert r.pieces[-1] == "</s>" and special[-1] and r.word_index[-1] == -1 and r.offsets[-1] == (len(t), len(t))
        assert special[0] == (name == "bart-bpe")  # BART's labels open with <s>
        assert math.isclose(sum(w.score for w in r.words) + r.token_scores[special].sum(), r.total, abs_tol=1e-9)
        assert r.metric == "seq2seq"


def test_eos_false_leaves_special_tokens_out_of_the_total(family):
    _, model, tok = family
    with_eos = Seq2SeqScorer(model, tok).score(TEXTS, context=SOURCES)
    without = Seq2SeqScorer(model, tok, eos=False).score(TEXTS, context=SOURCES)
    for a, b in zip(with_eos, without):
        assert b.special is None and b.n_tokens == a.n_tokens - a.is_special.sum()
        np.testing.assert_allclose(b.logprobs, a.logprobs[~a.is_special], atol=1e-9)
        assert b.total == pytest.approx(a.total - a.logprobs[a.is_special].sum(), abs=1e-9)


def test_batch_equals_alone_and_the_encoder_runs_once_per_distinct_source(family):
    _, model, tok = family
    scorer = Seq2SeqScorer(model, tok, max_tokens=64)
    calls = []
    hook = model.get_encoder().register_forward_hook(lambda m, a, k: calls.append(1))
    try:
        batch = scorer.score(TEXTS * 3, context=SOURCES * 3).totals
    finally:
        hook.remove()
    assert len(calls) <= len(set(SOURCES))  # 3 distinct sources, several may share an encoder pass
    alone = [scorer.score(t, context=s)[0].total for t, s in zip(TEXTS * 3, SOURCES * 3)]
    np.testing.assert_allclose(batch, alone, atol=1e-4)


def test_words_spans_views_and_outputs(family):
    _, model, tok = family
    scorer = Seq2SeqScorer(model, tok)
    text = "The cat sat on the mat."
    r = scorer.score(text, context="A dog ran.", words="whitespace", outputs=("entropy", "rank"))[0]
    assert [w.text for w in r.words] == text.split()
    assert r.entropy is not None and np.all(r.rank >= 1)
    bits = r.view(base=2, surprisal=True)
    assert bits.total == pytest.approx(-r.total / math.log(2))
    span = scorer.score(text, context="A dog ran.", spans=[(4, 7)])[0]  # "cat": the rest, EOS too, unscored
    assert span.n_scored >= 1 and not span.scored[span.is_special].any()
    hit = np.array([a < 7 and b > 4 for a, b in span.offsets])
    np.testing.assert_allclose(span.logprobs[hit], r.logprobs[hit], atol=1e-6)
    frame = scorer.score([text], context="A dog ran.").to_frame(level="token")
    assert frame["special"].sum() >= 1 and (frame.loc[frame["special"], "word_id"] == -1).all()
    words = scorer.score([text]).to_frame(level="word")
    assert list(words["n_tokens"]) == [w.n_tokens for w in scorer.score(text)[0].words]


def _hflm_loglikelihood(model, tok, pairs):
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=model, tokenizer=tok, backend="seq2seq", device="cpu", batch_size=3)
    reqs = [Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)]
    return [ll for ll, _ in lm.loglikelihood(reqs, disable_tqdm=True)]


def test_lm_eval_convention_equals_hflm_seq2seq(family):
    _, model, tok = family
    contexts = ["The keys are on the table.", "", "Is the vehicle ready? ", "The chef said:"]
    ref = _hflm_loglikelihood(model, tok, [(c, " " + t) for c, t in zip(contexts, TEXTS)])
    scorer = Seq2SeqScorer(model, tok)
    got = scorer.score(TEXTS, context=contexts, convention="lm-eval")
    np.testing.assert_allclose(got.totals, ref, atol=1e-4)
    assert all(r.special is None for r in got)  # lm-eval scores no special token
    alone = [scorer.score(t, convention="lm-eval")[0].total for t in TEXTS]
    np.testing.assert_allclose(alone, _hflm_loglikelihood(model, tok, [("", " " + t) for t in TEXTS]), atol=1e-4)


def test_lm_eval_whitespace_only_context_equals_hflm_seq2seq(family):
    pytest.importorskip("lm_eval", reason="lm_eval not installed (pip install 'pllscore[lm-eval]')")
    _, model, tok = family
    # lm-eval moves the whitespace to the continuation and encodes "" with special tokens (BART: <s></s>), which
    # is not the prefix token of an empty context; a whitespace-only continuation is scored too
    pairs = [(" ", " The cat sat."), ("\n", "The cat sat."), ("\t ", "A dog ran."), ("", " A dog ran."), ("x", "\n")]
    ref = _hflm_loglikelihood(model, tok, pairs)
    scorer = Seq2SeqScorer(model, tok)
    got = [scorer.score(t, context=c, sep="", convention="lm-eval")[0].total for c, t in pairs]
    np.testing.assert_allclose(got, ref, atol=1e-4)


def test_bad_input_is_one_line(family):
    _, model, tok = family
    scorer = Seq2SeqScorer(model, tok)
    long = " ".join(["The cat sat on the mat."] * 20)
    with pytest.raises(InputError, match="the text of text 0 is .* tokens long"):
        scorer.score(long)
    with pytest.raises(InputError, match="the source of text 0 is .* tokens long"):
        scorer.score("A dog ran.", context=long)
    with pytest.raises(InputError, match="not available for encoder-decoder"):
        scorer.score("A dog ran.", long="window")
    with pytest.raises(InputError, match="leave metric out"):
        scorer.score("A dog ran.", metric="word-l2r")
    with pytest.raises(InputError, match="bow"):
        scorer.score("A dog ran.", word_prob="bow")
    with pytest.raises(InputError, match="empty"):
        scorer.score("")
    with pytest.raises(ModelError, match="seq2seq LM"):
        MaskedScorer(model, tok)
    with pytest.raises(ModelError, match="seq2seq LM"):
        CausalScorer(model, tok)


def test_load_detects_the_kind_and_refuses_an_untrained_head(tmp_path, seq2seq_models):
    model, tok = seq2seq_models["t5-unigram"]
    model.save_pretrained(tmp_path / "t5")
    tok.save_pretrained(tmp_path / "t5")
    scorer = pllscore.load(tmp_path / "t5", device="cpu")
    assert isinstance(scorer, Seq2SeqScorer) and scorer.kind == "seq2seq"
    np.testing.assert_allclose(
        scorer.score(TEXTS, context=SOURCES).totals, Seq2SeqScorer(model, tok).score(TEXTS, context=SOURCES).totals
    )
    assert pllscore.load(tmp_path / "t5", device="cpu", eos=False).eos is False
    with pytest.raises(ModelError, match="seq2seq LM"):
        pllscore.load(tmp_path / "t5", device="cpu", kind="causal")
    from safetensors.torch import load_file, save_file

    model.save_pretrained(tmp_path / "bare")  # then its decoder's last layer is dropped from the checkpoint
    tok.save_pretrained(tmp_path / "bare")
    weights = tmp_path / "bare" / "model.safetensors"
    kept = {k: v for k, v in load_file(weights).items() if not k.startswith("decoder.block.1.")}
    save_file(kept, weights, metadata={"format": "pt"})
    with pytest.raises(ModelError, match="would be randomly initialised"):
        pllscore.load(tmp_path / "bare", device="cpu")


def test_encodings_are_reused_and_made_by_the_scorer(family):
    _, model, tok = family
    scorer = Seq2SeqScorer(model, tok)
    enc = scorer.encode(TEXTS, context=SOURCES)
    assert [e.source for e in enc.encoded][1] == tuple(tok("")["input_ids"])
    np.testing.assert_allclose(scorer.score(enc).totals, scorer.score(TEXTS, context=SOURCES).totals)
    with pytest.raises(InputError, match="made by"):
        Seq2SeqScorer(model, tok, eos=False).score(enc)


def test_bfloat16_is_close(family):
    _, model, tok = family
    exact = Seq2SeqScorer(model, tok).score(TEXTS).totals
    reduced = Seq2SeqScorer(model, tok, dtype=torch.bfloat16).score(TEXTS).totals
    np.testing.assert_allclose(reduced, exact, rtol=0.05)


def test_shared_stems_change_no_number_and_are_used(seq2seq_models, monkeypatch):
    from pllscore.engine.seq2seq import Seq2SeqEngine

    model, tok = seq2seq_models["t5-unigram"]
    texts = ["The cat sat on the mat.", "The cat sat on a mat.", "The cat ran.", "A dog ran."]
    texts.append(texts[0])
    sources = ["", "", "", "", "The keys."]
    scorer = Seq2SeqScorer(model, tok, max_tokens=48)
    assert scorer.engine.share_stems
    calls = []
    real = Seq2SeqEngine._run_stems
    monkeypatch.setattr(Seq2SeqEngine, "_run_stems", lambda self, *a: calls.append(1) or real(self, *a))
    shared = scorer.score(texts * 2, context=sources * 2, outputs=("entropy", "rank"))
    assert calls
    scorer.engine.share_stems = False
    plain = scorer.score(texts * 2, context=sources * 2, outputs=("entropy", "rank"))
    for a, b in zip(shared, plain):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-5)
        np.testing.assert_allclose(a.entropy, b.entropy, atol=1e-5)
    for r, t, s in zip(shared, texts * 2, sources * 2):
        np.testing.assert_allclose(r.logprobs, seq2seq_logprobs(model, tok, t, s), atol=1e-4)
    assert not Seq2SeqScorer(*seq2seq_models["bart-bpe"]).engine.share_stems  # absolute positions: never shared
