"""Alignment on real fast tokenizers of each family (tokenizers only, no model)."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pllscore.plan.align import align
from tests import tokenizers_fixtures as tf

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
