"""Which characters a token belongs to: one rule for spans, words and SyntaxGym regions (plan/align.anchors).

A token stands on the first non-space character at or after its start, inside its own raw offsets where the
normaliser expanded one character into several tokens. References: the issue's hand-worked cases (token counts
and scores read off the tokenizer's raw offsets by hand), and properties over random texts for tokenizers of
the three families (WordPiece, byte-level BPE, Unigram/SentencePiece) that compare two independent readings of
the same tokens: a span's score against a word's, a whole-text span against the total, regions against the total.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pllscore import CausalScorer, MaskedScorer, Seq2SeqScorer
from pllscore.eval.syntaxgym.regions import region_rows
from pllscore.eval.syntaxgym.scores import TokenScores, _text_part
from pllscore.eval.syntaxgym.suite import Condition
from pllscore.plan.align import align, anchors, owners

ATOL = 1e-6


# --- the rule itself, by hand ------------------------------------------------------------------------------
def test_anchor_is_the_first_non_space_character_at_or_after_the_start():
    text = "\nThe  cat \t"
    # "Ċ" (0,1) stands on T; "The" on T; "Ġ" (4,5) on c; "Ġcat" (5,9) on c; trailing "Ġ\t" on the last t
    assert anchors(text, [(0, 1), (1, 4), (4, 5), (5, 9), (9, 11)]) == (1, 1, 6, 6, 8)
    assert anchors("   ", [(0, 1), (2, 3)]) == (0, 2)  # whitespace only: its own start


def test_an_expanded_character_keeps_all_its_tokens():
    # NFKC turns U+FDFA into four words: every token's raw offsets are the one character (4, 5)
    text = "cat \ufdfa x"
    word_ids = [0, 1, 1, 2, 2, 3, 3, 4, 5]
    offsets = [(0, 3), (3, 4), (4, 5), (4, 5), (4, 5), (4, 5), (4, 5), (4, 5), (5, 7)]
    al = align(word_ids, offsets, text)
    assert al.anchors == (0, 4, 4, 4, 4, 4, 4, 4, 6)
    # the trimmed spans move to after the character (spans never overlap); the anchors do not
    assert al.token_spans[3:8] == ((5, 5),) * 5
    assert owners(al.anchors, [(0, 3), (4, 5), (6, 7)]) == [0, 1, 1, 1, 1, 1, 1, 1, 2]


def test_owners_separator_goes_to_the_word_before_and_empty_regions_hold_nothing():
    assert owners([0, 3, 4, 9], [(0, 3), None, (4, 6), (6, 6), (8, 10)]) == [0, 0, 2, 4]


# --- the numbers ---------------------------------------------------------------------------------
def test_t5_lone_marker_belongs_to_the_number_it_marks(seq2seq_models):
    model, tok = seq2seq_models["t5-unigram"]
    scorer = Seq2SeqScorer(model, tok, eos=False)
    for text, span in [
        ("cat 5 dogs", (4, 5)),
        ("The 42 cats and 7.5 dogs", (4, 6)),
        ("The 42 cats and 7.5 dogs", (16, 19)),
    ]:
        enc = tok(text, return_offsets_mapping=True)
        pieces, raw = enc.tokens(), enc["offset_mapping"]
        # by hand: the lone "▁" just before the number and the number's own pieces
        k = next(i for i, (a, b) in enumerate(raw) if a == span[0] and b > a and pieces[i] != "\u2581")
        want_pieces = [pieces[k - 1]] + [p for p, (a, b) in zip(pieces, raw) if span[0] <= a < span[1] and b > a]
        assert pieces[k - 1] == "\u2581"
        alone = scorer.score([text])[0]
        want = sum(t.score for t in alone.tokens if span[0] <= t.span[0] <= span[1] and t.piece in want_pieces)
        got = scorer.score([text], spans=[span])[0]
        assert [t.piece for t in got.tokens if t.scored] == want_pieces
        assert got.total == pytest.approx(want, abs=ATOL)
        word = next(w for w in scorer.score([text], words="whitespace")[0].words if w.span == span)
        assert word.n_tokens == len(want_pieces) and word.score == pytest.approx(want, abs=ATOL)


def test_gpt2_leading_newline_counts_in_a_span_over_the_whole_text(shared_gpt2):
    text = "\nThe cat sat."
    total = shared_gpt2.score([text])[0].total
    assert shared_gpt2.score([text], spans=[(0, len(text))])[0].total == pytest.approx(total, abs=ATOL)
    # the "Ċ" token stands on "T": a span of the first word scores it too
    first = shared_gpt2.score([text], spans=[(1, 4)])[0]
    assert [t.piece for t in first.tokens if t.scored] == ["Ċ", "The"]


@pytest.mark.parametrize("family", ["t5", "gpt2"])
def test_expanded_character_tokens_stay_with_its_whitespace_word(seq2seq_models, shared_gpt2, family):
    text = "cat \ufdfa x"
    if family == "t5":
        scorer = Seq2SeqScorer(*seq2seq_models["t5-unigram"], eos=False)
        tok = seq2seq_models["t5-unigram"][1]
    else:
        scorer, tok = shared_gpt2, shared_gpt2.tokenizer
    enc = tok(text, return_offsets_mapping=True)
    raw = [o for o, w in zip(enc["offset_mapping"], enc.word_ids()) if w is not None]
    # by hand from the raw offsets: tokens starting in "cat", then those up to the character, then the rest
    want = [sum(a < 3 for a, _ in raw), sum(3 <= a < 5 for a, _ in raw), sum(a >= 5 for a, _ in raw)]
    got = scorer.score([text], words="whitespace")[0]
    assert [w.n_tokens for w in got.words] == want
    assert want[1] >= 4  # the character's own tokens, not sent on to "x"
    # and a SyntaxGym region of the character holds them all
    cond = Condition("c", (1, 2, 3), ("cat", "\ufdfa", "x"))
    rows = region_rows(cond, TokenScores(*_text_part(scorer.score([cond.sentence])[0])[:2]), "sum")
    assert [n for *_, n in rows] == want


# --- properties over random texts ------------------------------------------------------------------------
_WORDS = ["cat", "The", "5", "42", "7.5", "dogs", ",", "souvenir", "Hello!", "x", "\ufdfa", "(a)", "don't", "é"]
_SEPS = [" ", "  ", "\n", "\t ", " \n ", "\n\n"]
texts = st.builds(
    lambda lead, words, seps, trail: lead + "".join(w + s for w, s in zip(words[:-1], seps)) + words[-1] + trail,
    st.sampled_from(["", "", "\n", " "]),
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6),
    st.lists(st.sampled_from(_SEPS), min_size=6, max_size=6),
    st.sampled_from(["", "", "\n", " "]),
)


@pytest.fixture(scope="module")
def scorers(masked_models, causal_models, seq2seq_models):
    return {
        "wordpiece-masked": MaskedScorer(*masked_models["bert-wordpiece"], max_tokens=256),
        "unigram-masked": MaskedScorer(*masked_models["xlmr-unigram"], max_tokens=256),
        "bpe-causal": CausalScorer(*causal_models["gpt2-bpe"]),
        "unigram-seq2seq": Seq2SeqScorer(*seq2seq_models["t5-unigram"], eos=False),
    }


FAMILIES = ["wordpiece-masked", "unigram-masked", "bpe-causal", "unigram-seq2seq"]
PROPERTY = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _close(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
@PROPERTY
@given(text=texts)
def test_word_spans_score_their_words_and_the_whole_text_scores_the_total(scorers, family, text):
    scorer = scorers[family]
    whole = scorer.score([text], words="whitespace")[0]
    # a word no token stands on (the tokenizer merged it into the word before) has no score and no span's
    assert all(math.isnan(w.score) for w in whole.words if w.n_tokens == 0)
    words = [w for w in whole.words if w.n_tokens]
    got = scorer.score([text] * (len(words) + 1), spans=[w.span for w in words] + [(0, len(text))])
    for w, r in zip(words, got):
        assert _close(r.total, w.score), (text, w)
    assert _close(got[-1].total, whole.total), text


@pytest.mark.parametrize("family", FAMILIES)
@PROPERTY
@given(words=st.lists(st.sampled_from(_WORDS), min_size=2, max_size=6), sep=st.sampled_from([" ", "|", ", "]))
def test_user_words_spans_score_their_words(scorers, family, words, sep):
    scorer = scorers[family]
    text = sep.join(words)
    whole = scorer.score([text], words=[words], word_sep=sep)[0]
    got = scorer.score([text] * len(words), spans=[w.span if w.n_tokens else (0, len(text)) for w in whole.words])
    # a token that stands on a separator belongs to the word before it, and no span holds it: sum what the
    # tokenizer puts on separators into that word's span by hand
    at = whole.token_anchors
    for k, (w, r) in enumerate(zip(whole.words, got)):
        if not w.n_tokens:
            continue
        on_sep = [
            t.score
            for t, a in zip(whole.tokens, at)
            if w.span[1] <= a < (whole.words[k + 1].span[0] if k + 1 < len(words) else len(text) + 1)
        ]
        want = r.total + sum(on_sep) if on_sep else r.total
        assert _close(want, w.score), (text, w)


@pytest.mark.parametrize("family", FAMILIES)
@PROPERTY
@given(
    contents=st.lists(st.sampled_from([*_WORDS, "", "the cat", " 5 "]), min_size=1, max_size=6).filter(
        lambda cs: any(c.strip() for c in cs)
    )
)
def test_regions_sum_to_the_total(scorers, family, contents):
    scorer = scorers[family]
    cond = Condition("c", tuple(range(1, len(contents) + 1)), tuple(contents))
    result = scorer.score([cond.sentence])[0]
    rows = region_rows(cond, TokenScores(*_text_part(result)[:2]), "sum")
    bits = sum(v for _, _, v, _ in rows)
    scored = result.logprobs[~np.isnan(result.logprobs)]
    assert bits == pytest.approx(-scored.sum() / math.log(2), abs=1e-5)
    assert sum(n for *_, n in rows) == result.n_tokens
