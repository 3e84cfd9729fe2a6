"""Predictions: a word's logprob is the number score() gives it, on every tokenizer family, for words of
1, 2 and 3 tokens; the token level is the fill-mask pipeline's and a plain softmax's; candidates; errors."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

import pllscore
from pllscore import CausalScorer, InputError, MaskedScorer
from pllscore.scoring.predict import top_words

MASKED = ["bert-wordpiece", "roberta-bpe", "xlmr-unigram"]
CAUSAL = ["gpt2-bpe", "llama-unigram"]
MASKED_TEXT = "The cat sat on the ___ with a knife."
CONTEXT = "The cat sat on the"


def _sharp(model):
    """A copy of a tiny random model with peaked distributions (its output embeddings times 40), as a trained
    model's are: the exact search over a flat distribution of random weights would read most of the tree."""
    model = copy.deepcopy(model)
    with torch.no_grad():
        model.get_output_embeddings().weight.mul_(40.0)
    return model


def _words(scorer, text):
    """The top words of 1, 2 and 3 tokens: the top 6 words, and the top 4 of at least 2 and of 3 tokens."""
    (p,) = scorer.predict(text, k=6, word_tokens=3)
    longer = [top_words(scorer, [text], k=4, word_tokens=3, shortest=n)[0] for n in (2, 3)]
    assert [w.rank for w in p.words] == list(range(1, len(p.words) + 1))
    assert all(a.logprob >= b.logprob for a, b in zip(p.words, p.words[1:]))
    words = [*p.words, *longer[0].words, *longer[1].words]
    assert {1, 2, 3} <= {w.n_tokens for w in words} and len(longer[1].words) == 4
    assert all(w.n_tokens == 3 for w in longer[1].words)
    return words


@pytest.mark.parametrize("family", MASKED)
def test_masked_words_equal_word_l2r_scores(masked_models, family):
    model, tok = masked_models[family]
    scorer = MaskedScorer(_sharp(model), tok)
    words = _words(scorer, MASKED_TEXT)
    left = MASKED_TEXT.index("___")
    filled = [MASKED_TEXT.replace("___", w.word) for w in words]
    spans = [(left, left + len(w.word)) for w in words]
    scored = scorer.score(filled, metric="word-l2r", spans=spans)
    for w, r, text in zip(words, scored, filled):
        assert abs(w.logprob - r.total) < 1e-5, (w, r.total)
        assert tuple(t.piece for t in r.tokens if t.scored) == w.tokens  # the round trip: exactly those tokens
        assert "".join(tok.tokenize(text)).count("".join(w.tokens)) >= 1


@pytest.mark.parametrize("family", CAUSAL)
def test_causal_words_equal_bow_word_scores(causal_models, family):
    model, tok = causal_models[family]
    scorer = CausalScorer(_sharp(model), tok)
    words = _words(scorer, CONTEXT + " ___")
    scored = scorer.score([f"{CONTEXT} {w.word}" for w in words], words="whitespace", word_prob="bow")
    for w, r in zip(words, scored):
        assert abs(w.logprob - r.words[-1].score) < 1e-5, (w, r.words[-1].score)
        assert tuple(t.piece for t in r.tokens[-w.n_tokens :]) == w.tokens
        assert r.words[-1].n_tokens == w.n_tokens


def test_causal_first_word_of_a_text_has_no_denominator(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    scorer = CausalScorer(_sharp(model), tok)
    (p,) = scorer.predict("___", k=8, word_tokens=2)
    assert p.words and not any(w.tokens[0].startswith("Ġ") for w in p.words)  # GPT-2 writes no space first
    scored = scorer.score([w.word for w in p.words], words="whitespace", word_prob="bow")
    np.testing.assert_allclose([w.logprob for w in p.words], [r.words[0].score for r in scored], atol=1e-5)


@pytest.mark.parametrize("family", CAUSAL)
def test_causal_reads_share_their_prefixes(causal_models, family):
    """A causal search's reads of a text run its context once per batch (prefix trees, as score runs them),
    with the numbers every read run in full gives."""
    model, tok = causal_models[family]
    model = _sharp(model)
    seen = []
    hook = model.base_model.register_forward_pre_hook(
        lambda _, args, kwargs: seen.append(kwargs["input_ids"].numel()), with_kwargs=True
    )
    texts = [CONTEXT + " ___", "A dog ran to the store and then the ___", "___"]
    try:
        got = {}
        for share in (False, True):
            seen.clear()
            got[share] = CausalScorer(model, tok, share_prefixes=share).predict(texts, k=6, word_tokens=3)
            got[share, "tokens"] = sum(seen)
    finally:
        hook.remove()
    for full, shared in zip(got[False], got[True]):
        assert [w.word for w in shared.words] == [w.word for w in full.words]
        np.testing.assert_allclose([w.logprob for w in shared.words], [w.logprob for w in full.words], atol=1e-5)
    assert got[True, "tokens"] < 0.5 * got[False, "tokens"]


def test_a_nan_in_one_text_stays_out_of_the_others_reads(causal_models):
    """A NaN in one text's states reaches the other texts of its tree row (0 * NaN in attention): their reads
    run again alone and equal the plain pass."""
    from pllscore.engine.slots import Read, SlotEngine

    model, tok = causal_models["gpt2-bpe"]
    model = copy.deepcopy(model)
    bad = tok.convert_tokens_to_ids("Ġdog")
    # the token's input embedding is NaN (its weight row is the LM head's too: the embedding's output, then)
    model.get_input_embeddings().register_forward_hook(
        lambda _, args, out: out.masked_fill((args[0] == bad)[..., None], float("nan"))
    )
    context = tok(CONTEXT)["input_ids"]
    nan_text = tok("A dog ran to the")["input_ids"]
    reads = [Read((*ids, extra), len(ids), None, 5) for ids in (context, nan_text) for extra in range(3, 13)]
    got = {}
    for share in (False, True):
        engine = SlotEngine(
            model, causal=True, classes={}, ends=None, share_prefixes=share, pad_token_id=0, vocab_size=len(tok)
        )
        assert (engine._trees(reads, 4096) is not None) == share  # the shared run packs them into one row
        got[share] = engine.read(reads, max_tokens=4096)
    for full, shared in zip(got[False][:10], got[True][:10]):
        assert np.isfinite(shared.logprobs).all()
        np.testing.assert_array_equal(shared.ids, full.ids)
        np.testing.assert_allclose(shared.logprobs, full.logprobs, atol=1e-5)
    assert all(np.isnan(g.logprobs).all() for g in got[True][10:])


def test_texts_batched_together_equal_each_alone(masked_models):
    model, tok = masked_models["bert-wordpiece"]
    scorer = MaskedScorer(model, tok, max_tokens=64)
    texts = [MASKED_TEXT, "She went to the ___ yesterday.", "___ dog ran to the store."]
    together = scorer.predict(texts, k=5)
    for i, text in enumerate(texts):
        (alone,) = scorer.predict(text, k=5)
        assert [w.word for w in alone.words] == [w.word for w in together[i].words]
        np.testing.assert_allclose([w.logprob for w in alone.words], [w.logprob for w in together[i].words], atol=1e-5)


def test_candidates_are_scores_and_cover_their_mass(masked_models, causal_models):
    model, tok = masked_models["bert-wordpiece"]
    (p,) = MaskedScorer(model, tok).predict(MASKED_TEXT, candidates=["mat", "hooligan", "table"])
    left = MASKED_TEXT.index("___")
    for w in p.words:
        want = MaskedScorer(model, tok).score(
            MASKED_TEXT.replace("___", w.word), metric="word-l2r", spans=[(left, left + len(w.word))]
        )[0]
        assert abs(w.logprob - want.total) < 1e-9
    assert [w.word for w in p.words] == ["mat", "hooligan", "table"]
    assert sorted(w.rank for w in p.words) == [1, 2, 3]
    assert abs(p.covered - sum(math.exp(w.logprob) for w in p.words)) < 1e-12
    model, tok = causal_models["gpt2-bpe"]
    (c,) = CausalScorer(model, tok).predict(CONTEXT, candidates=[["mat", "store today"]])
    want = CausalScorer(model, tok).score(f"{CONTEXT} store today", words="whitespace", word_prob="bow")[0]
    assert abs(c.words[1].logprob - (want.words[-2].score + want.words[-1].score)) < 1e-5


def test_token_level_is_the_fill_mask_pipeline_and_a_softmax(shared_bert):
    from transformers import pipeline

    text = "The chef tasted the ___ before serving it."
    (p,) = shared_bert.predict(text, level="token", k=10)
    fill = pipeline("fill-mask", model=shared_bert.model, tokenizer=shared_bert.tokenizer, top_k=10, device="cpu")
    want = fill(text.replace("___", shared_bert.tokenizer.mask_token))
    assert [w.tokens[0] for w in p.words] == [shared_bert.tokenizer.convert_ids_to_tokens(r["token"]) for r in want]
    np.testing.assert_allclose([w.prob for w in p.words], [r["score"] for r in want], atol=1e-6, rtol=0)
    enc = shared_bert.tokenizer(text.replace("___", shared_bert.tokenizer.mask_token), return_tensors="pt")
    with torch.no_grad():
        logits = shared_bert.model(**enc).logits[0]
    at = int((enc["input_ids"][0] == shared_bert.tokenizer.mask_token_id).nonzero()[0, 0])
    probs = torch.softmax(logits[at].double(), -1)
    np.testing.assert_allclose([w.prob for w in p.words], torch.topk(probs, 10).values.numpy(), atol=1e-6, rtol=0)
    assert abs(p.entropy - float(-(probs * probs.log()).sum())) < 1e-5
    assert abs(p.covered - float(torch.topk(probs, 10).values.sum())) < 1e-6


def test_causal_token_level_is_a_softmax(shared_gpt2):
    (p,) = shared_gpt2.predict("The chef tasted the", level="token", k=5)
    ids = shared_gpt2.tokenizer("The chef tasted the", return_tensors="pt")["input_ids"]
    ids = torch.cat([torch.tensor([[shared_gpt2.tokenizer.bos_token_id]]), ids], dim=1)
    with torch.no_grad():
        probs = torch.softmax(shared_gpt2.model(ids).logits[0, -1].double(), -1)
    top = torch.topk(probs, 5)
    assert [w.tokens[0] for w in p.words] == shared_gpt2.tokenizer.convert_ids_to_tokens(top.indices.tolist())
    np.testing.assert_allclose([w.prob for w in p.words], top.values.numpy(), atol=1e-6, rtol=0)


def test_top_level_predict_and_frame(shared_bert):
    p = pllscore.predict(["The chef tasted the ___ before serving it."], shared_bert, k=3)
    frame = p.to_frame(base=2, surprisal=True)
    assert list(frame.columns) == [
        "text_id", "text", "rank", "word", "surprisal_bits", "prob", "n_tokens", "tokens", "covered", "entropy_bits",
        "complete",
    ]  # fmt: skip
    assert len(frame) == 3
    np.testing.assert_allclose(frame["surprisal_bits"], [-w.logprob / math.log(2) for w in p[0].words])


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"k": 0}, "k must be a positive integer"),
        ({"word_tokens": 0}, "word_tokens must be"),
        ({"level": "char"}, "unknown level"),
        ({"candidates": "mat"}, "candidates must be"),
        ({"candidates": [["a"], ["b"]]}, "2 lists of candidates for 1 texts"),
    ],
)
def test_bad_options_are_one_line_errors(masked_models, kwargs, words):
    model, tok = masked_models["bert-wordpiece"]
    with pytest.raises(InputError, match=words) as err:
        MaskedScorer(model, tok).predict(MASKED_TEXT, **kwargs)
    assert "\n" not in str(err.value)


def test_masked_text_without_slot_is_refused(masked_models):
    model, tok = masked_models["bert-wordpiece"]
    with pytest.raises(InputError, match="has no slot"):
        MaskedScorer(model, tok).predict(["The cat sat ___.", "The cat sat."])


def test_encoder_decoder_is_refused_in_one_line(seq2seq_models):
    from pllscore import Seq2SeqScorer

    model, tok = seq2seq_models["t5-unigram"]
    with pytest.raises(InputError, match="encoder-decoder LM") as err:
        Seq2SeqScorer(model, tok).predict("The cat sat on the ___")
    assert "\n" not in str(err.value)
