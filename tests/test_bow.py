"""word_prob="bow": word probabilities for word-beginning-marking tokenizers (Pimentel & Meister, 2024)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pllscore import CausalScorer, InputError
from pllscore.scoring import bow as bow_mod
from pllscore.scoring.bow import BowTokens, bow_adjust
from tests import tokenizers_fixtures as tf

ATOL = 2e-5


def _tiny_bow_tokenizer():
    """Byte-level BPE over a, b, c: a word begins with a or b (" a" -> Ġa); "Ġ" alone exists only for
    the merges (the model below never predicts it, so every string has one tokenization)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {"<|endoftext|>": 0, "Ġ": 1, "a": 2, "b": 3, "c": 4, "Ġa": 5, "Ġb": 6}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[("Ġ", "a"), ("Ġ", "b")]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    special = "<|endoftext|>"
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=special, eos_token=special, unk_token=special)


@pytest.fixture(scope="module")
def tiny_bow():
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = _tiny_bow_tokenizer()
    torch.manual_seed(3)
    config = GPT2Config(vocab_size=7, n_positions=32, n_embd=16, n_layer=2, n_head=2, tie_word_embeddings=False)
    model = GPT2LMHeadModel(config).eval()
    with torch.no_grad():
        model.lm_head = torch.nn.Linear(16, 7, bias=True)
        model.lm_head.weight.mul_(8)  # peaked distributions: the correction is far from 0
        model.lm_head.bias.zero_()
        model.lm_head.bias[0] = 2.0  # EOS is likely: leaving it out of the end set shows
        model.lm_head.bias[1] = float("-inf")  # "Ġ" alone: never predicted
    return model.eval(), tok


@torch.inference_mode()
def _brute_word_logprob(model, tok, prefix: list[int], target: str) -> float:
    """log p(next word = target | prefix) by enumerating continuations token by token.

    Numerator: the probability mass of every continuation whose text begins with ``target`` followed by
    a space, or by the end (EOS). Denominator: that of every continuation that begins a new word (its
    text begins with a space) or ends (EOS); 1 when nothing precedes the word. A branch is cut only when
    its text is no longer a prefix of ``target`` (no extension can match) or decides the match.
    """
    eos = tok.eos_token_id

    def dist(ids):
        return torch.softmax(model(input_ids=torch.tensor([ids])).logits[0, -1].double(), -1)

    def mass(ids: list[int], cont: list[int], p: float) -> float:
        text = tok.decode(cont)
        if len(text) > len(target):
            return p if text.startswith(target) and text[len(target)] == " " else 0.0
        if not target.startswith(text):
            return 0.0
        total = 0.0
        probs = dist(ids)
        for v in range(len(probs)):
            q = p * probs[v].item()
            if q == 0.0:
                continue
            if v == eos:
                total += q if text == target else 0.0
            else:
                total += mass([*ids, v], [*cont, v], q)
        return total

    num = mass(list(prefix), [], 1.0)
    if len(prefix) == 1:  # only BOS: the empty prefix is a complete word sequence
        return math.log(num)
    probs = dist(prefix)
    den = sum(probs[v].item() for v in range(len(probs)) if v == eos or tok.decode([v]).startswith(" "))
    return math.log(num) - math.log(den)


@pytest.mark.parametrize("text", ["ac ba bcc a", "b ac a", "abc bc", " ab ba"])
def test_word_probabilities_equal_brute_force_enumeration(tiny_bow, text):
    model, tok = tiny_bow
    r = CausalScorer(model, tok).score(text, word_prob="bow")[0]
    ids = [tok.eos_token_id] + tok(text)["input_ids"]
    word_ids = [None] + tok(text).word_ids()
    for i, (a, b) in enumerate(r.word_spans):
        prefix = ids[: word_ids.index(i)]
        target = text[a - 1 : b] if a and text[a - 1] == " " else text[a:b]  # the word with its space
        want = _brute_word_logprob(model, tok, prefix, target)
        assert r.word_scores[i] == pytest.approx(want, abs=ATOL), (text, i)
    if text.startswith(" "):  # a first word that begins with a marked token gets no denominator
        assert r.pieces[0] == "Ġa"
    # token scores and the total are the plain chain rule: only word scores change
    plain = CausalScorer(model, tok).score(text)[0]
    assert np.array_equal(plain.logprobs, r.logprobs) and plain.total == r.total
    assert not np.allclose(plain.word_scores, r.word_scores, atol=1e-3)


def test_word_after_a_context_gets_the_denominator(tiny_bow):
    model, tok = tiny_bow
    r = CausalScorer(model, tok).score("ba bcc", context="ac", word_prob="bow")[0]
    prefix = [tok.eos_token_id] + tok("ac")["input_ids"]
    assert r.word_scores[0] == pytest.approx(_brute_word_logprob(model, tok, prefix, " ba"), abs=ATOL)
    prefix2 = prefix + tok(" ba")["input_ids"]
    assert r.word_scores[1] == pytest.approx(_brute_word_logprob(model, tok, prefix2, " bcc"), abs=ATOL)


def test_adjustment_by_hand():
    # tokens: BOS The Ġcat Ġsat . (GPT-2 style); ends[j] = log P(word ends | ids[:j+1])
    class Bow:
        is_bow = np.array([False, False, True, True, False])  # ids 0..4: BOS/EOS, The, Ġcat, Ġsat, .
        ends = np.array([True, False, True, True, False])  # word-beginning tokens and EOS (id 0)

    ids = [0, 1, 2, 3, 4]
    ends = np.log([0.9, 0.6, 0.5, 0.2, 0.7])
    got = bow_adjust(ids, np.array([1, 2, 3, 4]), lead=1, trail=0, ends=ends, bow=Bow())
    want = [
        math.log(0.6),  # The: next (Ġcat) begins a word: + log P(end | BOS The); first word: no denominator
        math.log(0.5) - math.log(0.6),  # Ġcat: + log P(end | .. cat) - log P(end | BOS The)
        0.0 - math.log(0.5),  # Ġsat: "." continues the whitespace word: no end term here
        math.log(0.7),  # .: the text ends: + log P(end | whole text)
    ]
    np.testing.assert_allclose(got, want)


def test_sum_of_words_telescopes_to_total_plus_final_end(shared_gpt2):
    text = "The cat sat on the mat."
    r = shared_gpt2.score(text, word_prob="bow")[0]
    tok, model = shared_gpt2.tokenizer, shared_gpt2.model
    ids = [tok.eos_token_id] + tok(text)["input_ids"]
    with torch.inference_mode():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, -1].double(), -1)
    vocab = tok.get_vocab()
    ends = [i for p, i in vocab.items() if p.startswith("Ġ")] + [tok.eos_token_id]
    final = torch.logsumexp(logp[ends], 0).item()
    # "The" has no Ġ (no denominator), every later word's denominator cancels the end term before it
    assert np.nansum(r.word_scores) == pytest.approx(r.total + final, abs=1e-4)


def test_equals_minicons_bow_correction_with_its_end_set(shared_gpt2, monkeypatch):
    minicons = pytest.importorskip("minicons.scorer", reason="minicons not installed")
    from transformers import AutoTokenizer

    # minicons' end set leaves EOS out: compare with that set
    real_init = BowTokens.__init__

    def without_eos(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        self.ends = self.is_bow.copy()

    monkeypatch.setattr(bow_mod.BowTokens, "__init__", without_eos)
    scorer = CausalScorer(shared_gpt2.model, shared_gpt2.tokenizer, name="tiny-gpt2")
    ref_tok = AutoTokenizer.from_pretrained(shared_gpt2.tokenizer.name_or_path)  # minicons changes its pad token
    lm = minicons.IncrementalLMScorer(shared_gpt2.model, "cpu", tokenizer=ref_tok)
    for text in ["The cat sat on the mat.", "She didn't go to the store yesterday!", "Dogs bark, cats meow."]:
        r = scorer.score(text, word_prob="bow")[0]
        want = lm.compute_stats(lm.prepare_text(text, bos_token=True), bow_correction=True)[0]
        got = r.logprobs + np.nan_to_num(r.word_correction)
        np.testing.assert_allclose(got, want, atol=1e-4, err_msg=text)


def test_errors(masked_models, shared_bert):
    with pytest.raises(InputError, match="word_prob='bow' corrects a causal LM"):
        shared_bert.score("The cat.", word_prob="bow")
    with pytest.raises(InputError, match="marks word beginnings"):
        BowTokens(tf.wordpiece(), 100, "bert")
    with pytest.raises(InputError, match="unknown word_prob 'bos'"):
        shared_bert.score("The cat.", word_prob="bos")


def test_sentencepiece_marker(causal_models):
    _, tok = causal_models["llama-unigram"]
    b = BowTokens(tok, len(tok))
    assert b.marker == "▁" and b.is_bow[tok.convert_tokens_to_ids("▁")]
    assert b.ends[tok.eos_token_id] and not b.is_bow[tok.eos_token_id]


def test_windows_read_the_final_end_term_from_the_last_window(causal_models):
    model, tok = causal_models["gpt2-bpe"]  # 64 positions, byte-level BPE with Ġ
    text = " ".join(["The cat sat on the mat.", "She didn't go to the store yesterday!"] * 4)
    r = CausalScorer(model, tok, stride=20).score(text, long="window", word_prob="bow")[0]
    ids = [tok.eos_token_id] + tok(text, add_special_tokens=False)["input_ids"]
    assert len(ids) > 64
    with torch.inference_mode():  # the last window: the final 64 tokens
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids[-64:]])).logits[0, -1].double(), -1)
    ends = [i for p, i in tok.get_vocab().items() if p.startswith("Ġ")] + [tok.eos_token_id]
    final = torch.logsumexp(logp[ends], 0).item()
    assert np.nansum(r.word_scores) == pytest.approx(r.total + final, abs=1e-4)


def test_whitespace_words_get_the_probability_of_the_whole_word(shared_gpt2):
    # "sat." is Ġsat + "." (two tokenizer words): as one whitespace word its BOW score is the sum of the
    # two tokenizer words' (the end term of "sat" cancels the denominator of "."), and so for every word
    text = "The cat sat. It purred, loudly."
    by_tok = shared_gpt2.score(text, word_prob="bow")[0]
    by_ws = shared_gpt2.score(text, words="whitespace", word_prob="bow")[0]
    assert [w.text for w in by_ws.words] == text.split()
    groups = [[w for w in by_tok.words if ws.span[0] <= w.span[0] and w.span[1] <= ws.span[1]] for ws in by_ws.words]
    expected = [sum(w.score for w in g) for g in groups]
    assert [w.score for w in by_ws.words] == pytest.approx(expected, abs=1e-6)
    assert by_ws.word_scores[2] != pytest.approx(shared_gpt2.score(text, words="whitespace")[0].word_scores[2])
