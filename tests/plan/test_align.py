"""Alignment on real fast tokenizers of each family (tokenizers only, no model)."""

from __future__ import annotations

import functools

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pllscore.plan.align import align
from tests import tokenizers_fixtures as tf
from tests.test_real_world_text import real_text

WORDS = tf.WHOLE_WORDS + ["hooligan", "marauder", "Carnivores", "didn't", "x", "QQ", "zebra", "42"]


@functools.cache
def _tokenizers():
    return {
        "wordpiece": tf.wordpiece(),
        "byte-bpe": tf.byte_bpe(roberta=True),
        "gpt2-bpe": tf.byte_bpe(roberta=False),
        "unigram": tf.unigram(),
    }


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(" ".join)


def _piece_text(tok, family, token_id):
    if family == "wordpiece":
        return tok.convert_ids_to_tokens(token_id).removeprefix("##")
    if family == "unigram":
        return tok.convert_ids_to_tokens(token_id).replace("\u2581", " ")
    return tok.decode([token_id])


@pytest.mark.parametrize("family", ["wordpiece", "byte-bpe", "gpt2-bpe", "unigram"])
@settings(max_examples=40, deadline=None)
@given(text=texts)
def test_offsets_slice_back_to_token_text_and_words_cover_text(family, text):
    tok = _tokenizers()[family]
    enc = tok(text, return_offsets_mapping=True)
    al = align(enc.word_ids(), enc["offset_mapping"], text, enc.tokens())
    for p in al.positions:
        a, b = al.token_spans[p]
        if enc["input_ids"][p] == tok.unk_token_id:
            continue  # an unknown token's piece is "<unk>", not the text it covers
        piece = _piece_text(tok, family, enc["input_ids"][p])
        assert text[a:b].strip() == piece.replace("▁", " ").strip()
    # word spans are non-empty, in order, disjoint, and together hold every non-space character
    spans = al.word_spans
    assert all(a < b for a, b in spans)
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1))
    covered = {i for a, b in spans for i in range(a, b)}
    assert {i for i, ch in enumerate(text) if not ch.isspace()} <= covered
    # every scored position belongs to exactly one word, and words are what word_ids() groups
    assert sorted(p for w in al.words for p in w) == list(al.positions)
    for members in al.words:
        assert len({enc.word_ids()[p] for p in members}) == 1


def test_special_tokens_are_not_positions():
    tok = _tokenizers()["wordpiece"]
    enc = tok("The hooligan wrecked the vehicle.", return_offsets_mapping=True)
    al = align(enc.word_ids(), enc["offset_mapping"], "The hooligan wrecked the vehicle.")
    assert al.positions == tuple(range(1, 9))
    assert al.words[1] == (2, 3, 4)
    assert al.word_spans[1] == (4, 12)


def _assert_spans_consistent(al, text):
    """Spans inside the text and trimmed; words in order, disjoint, and covering their tokens."""
    n = len(text)
    for p in al.positions:
        a, b = al.token_spans[p]
        assert 0 <= a <= b <= n and text[a:b] == text[a:b].strip(), (p, (a, b), text)
    spans = al.word_spans
    assert all(0 <= a <= b <= n and text[a:b] == text[a:b].strip() for a, b in spans), (spans, text)
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1)), (spans, text)
    for p, w in zip(al.positions, al.word_of):
        (a, b), (wa, wb) = al.token_spans[p], spans[w]
        assert wa <= a <= b <= wb, (p, (a, b), (wa, wb), text)
    for w, members in enumerate(al.words):  # a word's span is the hull of its tokens' non-empty spans
        solid = [al.token_spans[p] for p in members if al.token_spans[p][0] < al.token_spans[p][1]]
        if solid:
            assert spans[w] == (min(a for a, _ in solid), max(b for _, b in solid)), (w, spans[w], solid, text)


@pytest.mark.parametrize("family", ["wordpiece", "byte-bpe", "gpt2-bpe", "unigram"])
@settings(max_examples=150, deadline=None, derandomize=True)
@given(text=real_text())
@example(text="the the")
@example(text="a\u00a0b  lead\u2003x")
@example(text="\tthe\t cat  ")
@example(text="ﷺ xﷺy z")
def test_real_world_text_spans_are_inside_ordered_and_cover_their_tokens(family, text):
    tok = _tokenizers()[family]
    enc = tok(text, return_offsets_mapping=True)
    _assert_spans_consistent(align(enc.word_ids(), enc["offset_mapping"], text, enc.tokens()), text)


def test_byte_bpe_token_spans_leave_out_the_space_before_the_word():
    # GPT-2's offsets for "Ġthe" cover the space before it; the word "the" does not
    tok = _tokenizers()["gpt2-bpe"]
    text = "the the"
    enc = tok(text, return_offsets_mapping=True)
    assert enc["offset_mapping"][-1] == (3, 7)
    al = align(enc.word_ids(), enc["offset_mapping"], text, enc.tokens())
    assert al.token_spans[al.positions[-1]] == (4, 7) == al.word_spans[-1]


def test_whitespace_only_tokens_and_markers_get_empty_spans_inside_their_word():
    tok = _tokenizers()["byte-bpe"]
    text = "a\u00a0b  lead"
    enc = tok(text, return_offsets_mapping=True)
    al = align(enc.word_ids(), enc["offset_mapping"], text, enc.tokens())
    # the NBSP is a word of its own (two byte tokens): an empty span where it stands
    assert [text[a:b] for a, b in al.word_spans] == ["a", "", "b", "", "lead"]
    assert al.word_spans[1] == (1, 1) and al.token_spans[2] == al.token_spans[3] == (1, 1)
    _assert_spans_consistent(al, text)


def test_one_character_that_normalises_to_several_words():
    # NFKC turns U+FDFA into four space-separated words, all with the offsets of that one character
    tok = _tokenizers()["unigram"]
    text = "ﷺ x"
    enc = tok(text, return_offsets_mapping=True)
    al = align(enc.word_ids(), enc["offset_mapping"], text, enc.tokens())
    assert al.word_spans == ((0, 1), (1, 1), (1, 1), (1, 1), (2, 3))
    _assert_spans_consistent(al, text)


def test_without_text_spans_are_kept_as_given():
    # the scorer's long-text windows align without the text: offsets are used as they are
    al = align(
        [None, 0, 0, 1, None], [(0, 0), (0, 2), (2, 4), (4, 9), (0, 0)], "", ["<s>", "ab", "cd", "Ġefgh", "</s>"]
    )
    assert al.token_spans[1:4] == ((0, 2), (2, 4), (4, 9)) and al.word_spans == ((0, 4), (4, 9))
