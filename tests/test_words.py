"""Words the user defines (words=, word_sep=, mask_by=): results follow them; masks follow them with mask_by="words".

References: tests/oracle.py with the word groups computed by tests/oracle.whitespace_groups (or by hand),
never by pllscore's own plan/words.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pllscore
from pllscore import CausalScorer, InputError, MaskedScorer
from tests import oracle
from tests.test_conditional import _Fixed, joint, lm_eval_continuation

ATOL = 1e-5
TEXTS = [
    "The hooligan, sadly, wrecked the vehicle.",
    "She didn't go to the store yesterday!",
    "The cat sat on the mat.",
]
WORD_METRICS = ["word-l2r", "whole-word"]


def _groups(tok, text):
    enc = tok(text, return_offsets_mapping=True)
    offsets = [o for o, w in zip(enc["offset_mapping"], enc.word_ids()) if w is not None]
    return oracle.whitespace_groups(text, offsets)


def _sums(values, groups, n):
    out = np.zeros(n)
    np.add.at(out, groups, values)
    return out


@pytest.mark.parametrize("family", ["bert-wordpiece", "roberta-bpe"])
def test_whitespace_words_mask_by_words_equal_oracle(masked_models, family):
    model, tok = masked_models[family]
    scorer = MaskedScorer(model, tok, max_tokens=64)
    by_words = scorer.score(TEXTS, metric="all", words="whitespace", mask_by="words")
    by_tokenizer = scorer.score(TEXTS, metric="all", words="whitespace")
    n = len(TEXTS)
    for k, metric in enumerate(["original", "word-l2r", "whole-word", "sentence-l2r"]):
        for i, text in enumerate(TEXTS):
            groups = _groups(tok, text)
            want_words = oracle.masked_logprobs(model, tok, text, metric, groups)
            want_tok = oracle.masked_logprobs(model, tok, text, metric)
            got_w, got_t = by_words[k * n + i], by_tokenizer[k * n + i]
            np.testing.assert_allclose(got_w.logprobs, want_words, atol=ATOL, rtol=0, err_msg=f"{family} {metric}")
            np.testing.assert_allclose(got_t.logprobs, want_tok, atol=ATOL, rtol=0, err_msg=f"{family} {metric}")
            # results follow the whitespace words either way
            for got, want in ((got_w, want_words), (got_t, want_tok)):
                assert [w.text for w in got.words] == text.split()
                assert got.word_index.tolist() == groups
                np.testing.assert_allclose(got.word_scores, _sums(want, groups, len(text.split())), atol=1e-4)
    # the metrics that mask by words differ where a word has several tokens: the test can fail
    assert not np.allclose(by_words[n].logprobs, by_tokenizer[n].logprobs)


def test_explicit_words_by_hand_equal_oracle(masked_models):
    # "The cat" and "on the mat." as single words; WordPiece: The cat sat on the mat .
    model, tok = masked_models["bert-wordpiece"]
    text = "The cat sat on the mat."
    words = [["The cat", "sat", "on the mat."]]
    got = MaskedScorer(model, tok).score([text], metric=WORD_METRICS, words=words, mask_by="words")
    groups = [0, 0, 1, 2, 2, 2, 2]
    for r in got:
        want = oracle.masked_logprobs(model, tok, text, r.metric, groups)
        np.testing.assert_allclose(r.logprobs, want, atol=ATOL, rtol=0)
        assert [(w.text, w.span, w.n_tokens) for w in r.words] == [
            ("The cat", (0, 7), 2),
            ("sat", (8, 11), 1),
            ("on the mat.", (12, 23), 4),
        ]
    # one string for one text: one list of its words
    single = MaskedScorer(model, tok).score(text, metric=WORD_METRICS, words=words[0], mask_by="words")
    assert [r.logprobs.tolist() for r in single] == [r.logprobs.tolist() for r in got]


def test_word_sep_joins_pre_segmented_words(masked_models):
    model, tok = masked_models["bert-wordpiece"]
    text = "the-cat-sat"
    got = MaskedScorer(model, tok).score(text, words=["the", "cat", "sat"], word_sep="-", metric="whole-word")[0]
    # the-cat-sat: the | - | cat | - | sat; a "-" starts in a separator: the word before
    assert [(w.text, w.n_tokens) for w in got.words] == [("the", 2), ("cat", 2), ("sat", 1)]
    with pytest.raises(InputError, match=r"words of text 0 joined by ' ' differ from it at character 3"):
        MaskedScorer(model, tok).score(text, words=["the", "cat", "sat"])


def test_context_with_user_words_equals_oracle(masked_models):
    model, tok = masked_models["bert-wordpiece"]
    context, text = "The chef cut the onion.", "She didn't go to the store, sadly."
    got = MaskedScorer(model, tok).score(
        [text], context=context, metric=WORD_METRICS, words="whitespace", mask_by="words"
    )
    enc = tok(joint(context, text), return_offsets_mapping=True)
    ids, wids = enc["input_ids"], enc.word_ids()
    n_text = len(lm_eval_continuation(tok, context, " " + text))
    content = [j for j, w in enumerate(wids) if w is not None]
    text_pos = content[len(content) - n_text :]
    shift = len(context) + 1
    groups = oracle.whitespace_groups(
        text, [(enc["offset_mapping"][j][0] - shift, enc["offset_mapping"][j][1] - shift) for j in text_pos]
    )
    fixed_wids = [None] * len(ids)
    for j, g in zip(text_pos, groups):
        fixed_wids[j] = g
    for r in got:
        want = oracle.masked_logprobs(model, _Fixed(tok, ids, fixed_wids), "", r.metric)
        np.testing.assert_allclose(r.logprobs, want, atol=ATOL, rtol=0)
        assert [w.text for w in r.words] == text.split() and r.word_index.tolist() == groups


def _window_oracle(model, tok, text, metric, limit, groups):
    """Each target in its own [CLS] window [SEP] centred on it (as tests/engine/test_windows.py), masks by groups."""
    ids = tok(text)["input_ids"]
    content, size = ids[1:-1], limit - 2
    out = []
    for t in range(len(content)):
        s = min(max(t - size // 2, 0), len(content) - size)
        w_ids = [ids[0], *content[s : s + size], ids[-1]]
        target = t - s + 1
        word = [j + 1 for j in range(size) if groups[s + j] == groups[t]]
        masked = {"word-l2r": [j for j in word if j >= target], "whole-word": word}[metric]
        x = torch.tensor([w_ids])
        x[0, masked] = tok.mask_token_id
        with torch.inference_mode():
            logits = model(input_ids=x).logits[0, target]
        out.append(torch.log_softmax(logits.double(), -1)[w_ids[target]].item())
    return out


@pytest.mark.parametrize("metric", WORD_METRICS)
def test_windows_mask_by_user_words(masked_models, metric):
    model, tok = masked_models["bert-wordpiece"]
    text = " ".join(["The hooligan, sadly, wrecked the vehicle."] * 8)
    scorer = MaskedScorer(model, tok, long="window", max_tokens=400)
    assert len(tok(text)["input_ids"]) > scorer.max_length
    got = scorer.score(text, metric=metric, words="whitespace", mask_by="words")[0]
    want = _window_oracle(model, tok, text, metric, scorer.max_length, _groups(tok, text))
    np.testing.assert_allclose(got.logprobs, want, atol=ATOL, rtol=0)


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram"])
def test_causal_whitespace_words_sum_the_oracle_tokens(causal_models, family):
    model, tok = causal_models[family]
    scorer = CausalScorer(model, tok)
    plain = scorer.score(TEXTS)
    got = scorer.score(TEXTS, words="whitespace", mask_by="words")  # mask_by does nothing for a causal LM
    for p, g, text in zip(plain, got, TEXTS):
        want = oracle.causal_logprobs(model, tok, text)
        np.testing.assert_allclose(g.logprobs, want, atol=ATOL, rtol=0)
        assert g.logprobs.tolist() == p.logprobs.tolist()
        assert [w.text for w in g.words] == text.split()
        assert math.isclose(np.nansum(g.word_scores), g.total, abs_tol=1e-9)


def test_spans_with_user_words(masked_models):
    model, tok = masked_models["bert-wordpiece"]
    text = "The hooligan, sadly, wrecked the vehicle."
    got = MaskedScorer(model, tok).score([text], spans=[(4, 13)], words="whitespace")[0]
    assert [w.text for w in got.words] == text.split()
    scores = got.word_scores
    assert np.isfinite(scores[1]) and np.isnan(scores[[0, 2, 3, 4, 5]]).all()


def test_a_word_without_a_token_of_its_own_scores_nan(causal_models):
    # the test BPE reads "the cat" as t | he | Ġcat: cut as "th" "e" " ca" "t", the token "he" starts in
    # "th" (so "e" gets none) and "Ġcat" in " ca" (so "t" gets none)
    model, tok = causal_models["gpt2-bpe"]
    scorer = CausalScorer(model, tok)
    text = "the cat"
    plain = scorer.score(text)[0]
    assert plain.pieces == ("t", "he", "Ġcat")
    got = scorer.score(text, words=["th", "e", " ca", "t"], word_sep="")[0]
    assert [(w.text, w.span, w.n_tokens) for w in got.words] == [
        ("th", (0, 2), 2),
        ("e", (2, 3), 0),
        (" ca", (3, 6), 1),
        ("t", (6, 7), 0),
    ]
    lp = plain.logprobs
    np.testing.assert_array_equal(got.word_scores, [lp[0] + lp[1], np.nan, lp[2], np.nan])
    assert math.isclose(np.nansum(got.word_scores), got.total, abs_tol=1e-12)
    assert got.offsets == plain.offsets  # a token keeps its characters, across the user's boundary


def test_scorer_and_load_defaults(masked_models, shared_gpt2):
    model, tok = masked_models["bert-wordpiece"]
    text = "The hooligan, sadly, wrecked the vehicle."
    default = MaskedScorer(model, tok, words="whitespace", mask_by="words").score(text)[0]
    given_ = MaskedScorer(model, tok).score(text, words="whitespace", mask_by="words")[0]
    assert default.logprobs.tolist() == given_.logprobs.tolist() and default.word_spans == given_.word_spans
    # score() overrides the scorer's default
    back = MaskedScorer(model, tok, words="whitespace", mask_by="words").score(
        text, words="tokenizer", mask_by="tokenizer"
    )
    assert back[0].logprobs.tolist() == MaskedScorer(model, tok).score(text)[0].logprobs.tolist()
    r = pllscore.score("The cat, sadly, sat.", shared_gpt2, words="whitespace")[0]
    assert [w.text for w in r.words] == ["The", "cat,", "sadly,", "sat."]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(words="spaces"), "unknown words 'spaces'"),
        (dict(words=[["a"]]), "1 lists of words for 2 texts"),
        (dict(words=[["The", "cat"], ["x"]]), "words of text 0 joined by ' ' differ from it at character 7"),
        (
            dict(words=[["The cat sat on the mat."], ["x"]]),
            "words of text 1 joined by ' ' differ from it at character 0",
        ),
        (dict(words="whitespace", mask_by="word"), "unknown mask_by 'word'"),
        (dict(words=[["a"], ["b"]], word_sep=1), "word_sep must be a string"),
    ],
)
def test_bad_words_are_one_line_input_errors(masked_models, kwargs, message):
    model, tok = masked_models["bert-wordpiece"]
    texts = ["The cat sat on the mat.", "She went to the store."]
    for call in (MaskedScorer(model, tok).score, MaskedScorer(model, tok).check):
        with pytest.raises(InputError, match=message) as e:
            call(texts, **kwargs)
        assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="default words must be"):
        MaskedScorer(model, tok, words=[["a"]])


# --- properties on random texts: every token in exactly one word, spans in the text, sums ---------

PROP_WORDS = ["the", "The", "dog.", "cat,", "(sat)", "hooligan", "didn't", "x", "QQ", "42", "!?", "a\u00a0b"]


@st.composite
def _segmented(draw):
    words = draw(st.lists(st.sampled_from(PROP_WORDS), min_size=1, max_size=7))
    seps = [draw(st.sampled_from([" ", "  ", "\t", "\n"])) for _ in words[1:]]
    text = "".join(w + s for w, s in zip(words, [*seps, ""]))
    # pre-segmented: cut the text anywhere, so tokens straddle the user's boundaries
    cuts = sorted(draw(st.sets(st.integers(1, max(len(text) - 1, 1)), max_size=4)))
    bounds = [0, *[c for c in cuts if 0 < c < len(text)], len(text)]
    return text, [text[a:b] for a, b in zip(bounds, bounds[1:])]


def _check(r, text, n_words):
    assert r.n_words == n_words
    assert all(0 <= a < b <= len(text) for a, b in r.word_spans)
    assert all(r.word_spans[i][1] <= r.word_spans[i + 1][0] for i in range(n_words - 1))
    assert len(r.word_index) == r.n_tokens and ((0 <= r.word_index) & (r.word_index < n_words)).all()
    assert sum(w.n_tokens for w in r.words) == r.n_tokens  # every token in exactly one word
    assert math.isclose(np.nansum(r.word_scores), r.total, rel_tol=1e-12, abs_tol=1e-9)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_segmented())
def test_property_user_words_partition_tokens_and_sum_to_total(masked_models, causal_models, case):
    text, words = case
    bert = MaskedScorer(*masked_models["roberta-bpe"])
    gpt = CausalScorer(*causal_models["gpt2-bpe"])
    for scorer, kw in ((bert, dict(metric="whole-word", mask_by="words")), (gpt, {})):
        plain = scorer.score(text, **kw)[0]
        ws = scorer.score(text, words="whitespace", **kw)[0]
        _check(ws, text, len(text.split()))
        assert [ws.text[a:b] for a, b in ws.word_spans] == text.split()
        given_ = scorer.score(text, words=words, word_sep="", **kw)[0]
        _check(given_, text, len(words))
        assert [given_.text[a:b] for a, b in given_.word_spans] == words
        if scorer is gpt:  # a causal LM's token scores do not depend on the words
            assert ws.logprobs.tolist() == given_.logprobs.tolist() == plain.logprobs.tolist()


# --- explain ---------------------------------------------------------------------------------


def test_explain_follows_the_users_words(masked_models, causal_models):
    from pllscore import explain

    bert, gpt = MaskedScorer(*masked_models["bert-wordpiece"]), CausalScorer(*causal_models["gpt2-bpe"])
    text = "The hooligan, sadly, wrecked the vehicle."
    got = explain(text, bert, causal_model=gpt, metrics=WORD_METRICS, words="whitespace", mask_by="words")
    table = got.table(0)
    assert [w for w in table["word"] if w][:-1] == text.split()
    masked = bert.score(text, metric=WORD_METRICS, words="whitespace", mask_by="words")
    word_rows = table[table["level"] == "word"]
    multi = [w for w in masked[0].words if w.n_tokens > 1]
    np.testing.assert_allclose(word_rows["word_l2r_logprob"], [w.score for w in multi])
    # the causal column is the causal LM's own sum over the same whitespace words
    causal = gpt.score(text, words="whitespace")[0]
    np.testing.assert_allclose(got.causal_word_scores(0), causal.word_scores)
    # by default the table groups by the tokenizer's words (the comma is a word of its own)
    assert "," in explain(text, bert, metrics=WORD_METRICS).table(0)["word"].tolist()


def test_explain_shows_a_word_without_a_token(masked_models, causal_models):
    from pllscore import explain

    bert, gpt = MaskedScorer(*masked_models["bert-wordpiece"]), CausalScorer(*causal_models["gpt2-bpe"])
    # WordPiece: the | cat; cut as "th" "e" " cat", the token "the" starts in "th", so "e" has none
    got = explain("the cat", bert, causal_model=gpt, words=[["th", "e", " cat"]], word_sep="", metrics="original")
    table = got.table(0)
    row = table[table["word"] == "e"].iloc[0]
    assert row["token"] == "(no token)" and np.isnan(row["original_logprob"]) and np.isnan(row["causal_logprob"])
    assert "(no token)" in got.render()
