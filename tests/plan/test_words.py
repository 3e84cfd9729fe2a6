"""User-defined words (plan/words.py): spans, checks and which word each token belongs to; no model."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pllscore.errors import InputError
from pllscore.plan.align import align
from pllscore.plan.words import assign, check_words, explicit_spans, regroup, word_spans
from tests.plan.test_align import _tokenizers
from tests.test_real_world_text import real_text


def _aligned(family, text):
    tok = _tokenizers()[family]
    enc = tok(text, return_offsets_mapping=True)
    return enc, align(enc.word_ids(), enc["offset_mapping"], text, enc.tokens())


def _texts_of(al, text, word_of, spans):
    return [
        [text[slice(*al.token_spans[p])] for p, w in zip(al.positions, word_of) if w == k] for k in range(len(spans))
    ]


# --- hand-worked examples ---------------------------------------------------------------------


def test_whitespace_words_keep_punctuation_with_their_word():
    text = "The dog, (sadly) barked."
    assert [text[a:b] for a, b in word_spans(text, "whitespace")] == ["The", "dog,", "(sadly)", "barked."]
    assert word_spans(text, "tokenizer") is None
    assert word_spans("  a\tb\n", "whitespace") == [(2, 3), (4, 5)]


def test_wordpiece_tokens_grouped_by_whitespace_words():
    # WordPiece: The | dog | . | She | ran | ! ; whitespace words: "The" "dog." "She" "ran!"
    text = "The dog. She ran!"
    enc, al = _aligned("wordpiece", text)
    spans = word_spans(text, "whitespace")
    word_of = assign(al, spans)
    assert _texts_of(al, text, word_of, spans) == [["The"], ["dog", "."], ["She"], ["ran", "!"]]
    assert word_of == [0, 1, 1, 2, 3, 3]


def test_a_token_merged_across_a_boundary_belongs_to_the_word_where_it_starts():
    # a made-up tokenizer that merged "b c" into one token: the user's words are a, b, c, d
    text = "a b c d"
    al = align(
        [None, 0, 1, 2, None], [(0, 0), (0, 1), (1, 5), (5, 7), (0, 0)], text, ["<s>", "a", "Ġb c", "Ġd", "</s>"]
    )
    spans = word_spans(text, ["a", "b", "c", "d"])
    word_of = assign(al, spans)
    assert word_of == [0, 1, 3]  # "b c" starts in b; c has no token of its own
    regrouped = regroup(al, spans, word_of)
    assert regrouped.words == ((1,), (2,), (), (3,))
    assert regrouped.word_spans == ((0, 1), (2, 3), (4, 5), (6, 7))
    assert regrouped.token_spans[2] == (2, 5)  # the token keeps the characters of both words


def test_lone_markers_and_whitespace_tokens_go_with_the_next_word():
    # SentencePiece: a lone "▁" before a word belongs to the word it marks
    text = "x QQ"
    enc, al = _aligned("unigram", text)
    spans = word_spans(text, "whitespace")
    assert [enc.tokens()[p] for p in al.positions] == ["\u2581", "x", "\u2581", "QQ"]
    assert assign(al, spans) == [0, 0, 1, 1]
    # byte-level BPE: a token of whitespace only (two spaces: "Ġ" then "Ġthe") goes with the next word
    text = "a  the"
    enc, al = _aligned("gpt2-bpe", text)
    assert [enc.tokens()[p] for p in al.positions] == ["a", "Ġ", "Ġthe"]
    assert assign(al, word_spans(text, "whitespace")) == [0, 1, 1]
    # ... and at the end of the text, with the last word
    text = "a the \n"
    enc, al = _aligned("gpt2-bpe", text)
    assert [enc.tokens()[p] for p in al.positions] == ["a", "Ġthe", "Ġ", "Ċ"]
    assert assign(al, word_spans(text, "whitespace")) == [0, 1, 1, 1]


def test_a_token_starting_in_a_separator_belongs_to_the_word_before():
    text = "the-cat"
    enc, al = _aligned("wordpiece", text)
    assert [enc.tokens()[p] for p in al.positions] == ["the", "-", "cat"]
    spans = word_spans(text, ["the", "cat"], "-")
    assert spans == [(0, 3), (4, 7)]
    assert assign(al, spans) == [0, 0, 1]


def test_explicit_words_with_another_separator_or_none():
    assert explicit_spans("ab", ["a", "b"], "") == [(0, 1), (1, 2)]
    assert explicit_spans("New York is big", ["New York", "is", "big"]) == [(0, 8), (9, 11), (12, 15)]


# --- errors ---------------------------------------------------------------------------------


def test_words_that_do_not_give_the_text_are_one_line_naming_text_and_character():
    with pytest.raises(InputError, match=r"words of text 3 joined by ' ' differ from it at character 4") as e:
        explicit_spans("The dog.", ["The", "cat."], index=3)
    assert "\n" not in str(e.value) and "'dog.'" in str(e.value) and "'cat.'" in str(e.value)
    with pytest.raises(InputError, match="at character 8"):  # the words stop short
        explicit_spans("The dog. Yes", ["The", "dog."])
    with pytest.raises(InputError, match="at character 4"):  # two spaces in the text, one between the words
        explicit_spans("The  dog", ["The", "dog"])


@pytest.mark.parametrize(
    ("words", "n", "message"),
    [
        ("spaces", 1, "unknown words 'spaces'"),
        ([["a"]], 2, "1 lists of words for 2 texts"),
        (["a", "b"], 2, "the words of text 0 are a str"),
        ([["a", 3]], 1, "word 1 of text 0 is a int"),
        ([["a", ""]], 1, "word 1 of text 0 is empty"),
        ([[]], 1, "text 0 has an empty list of words"),
        (3, 1, "words must be"),
    ],
)
def test_bad_words_are_one_line_errors(words, n, message):
    with pytest.raises(InputError, match=message) as e:
        check_words(words, n)
    assert "\n" not in str(e.value)


def test_one_list_of_strings_is_the_words_of_a_single_text():
    assert check_words(["a", "b"], 1, single=True) == [["a", "b"]]
    assert check_words("whitespace", 4) == "whitespace"


# --- properties -----------------------------------------------------------------------------

WORDS = ["the", "The", "dog.", "cat,", "(sat)", "hooligan", "didn't", "x", "QQ", "42", "ﷺ", "a\u00a0b", "!?"]
SEPS = [" ", "  ", "\t", "\n", " \n "]


@st.composite
def segmented(draw):
    """A text and its words: words joined by separators (whitespace), or pre-segmented with one separator."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8))
    seps = [draw(st.sampled_from(SEPS)) for _ in words[1:]]
    lead, tail = draw(st.sampled_from(["", " "])), draw(st.sampled_from(["", " ", "\n"]))
    text = lead + "".join(w + s for w, s in zip(words, [*seps, ""])) + tail
    return text


def _check_assignment(al, text, spans, word_of):
    # every scored token in exactly one word
    assert len(word_of) == len(al.positions) and all(0 <= w < len(spans) for w in word_of)
    regrouped = regroup(al, spans, word_of)
    assert sorted(p for g in regrouped.words for p in g) == list(al.positions)
    # word spans inside the text, in order, disjoint
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1))
    # words follow the tokens' order
    assert list(word_of) == sorted(word_of)
    # a token with characters starts in its word, or in the separator right after it
    for p, w in zip(al.positions, word_of):
        a, b = al.token_spans[p]
        if a < b:
            stop = spans[w + 1][0] if w + 1 < len(spans) else len(text)
            assert spans[w][0] <= a < stop or (w == 0 and a < spans[0][0]), (p, (a, b), spans, text)


@pytest.mark.parametrize("family", ["wordpiece", "byte-bpe", "gpt2-bpe", "unigram"])
@settings(max_examples=60, deadline=None, derandomize=True)
@given(text=segmented())
@example(text="ﷺ xﷺy z")
@example(text=" a  lead \n")
def test_whitespace_words_every_token_in_exactly_one_word(family, text):
    _, al = _aligned(family, text)
    spans = word_spans(text, "whitespace")
    assert [text[a:b] for a, b in spans] == text.split()
    _check_assignment(al, text, spans, assign(al, spans))


@pytest.mark.parametrize("family", ["wordpiece", "gpt2-bpe", "unigram"])
@settings(max_examples=60, deadline=None, derandomize=True)
@given(text=real_text(), data=st.data())
def test_explicit_words_on_real_world_text(family, text, data):
    # cut the text anywhere (not only at spaces), so tokens straddle the user's boundaries
    cuts = sorted(data.draw(st.sets(st.integers(1, max(len(text) - 1, 1)), max_size=6)))
    cuts = [c for c in cuts if 0 < c < len(text)]
    bounds = [0, *cuts, len(text)]
    words = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    spans = word_spans(text, words, "")
    assert [text[a:b] for a, b in spans] == words
    _, al = _aligned(family, text)
    if al.positions:
        _check_assignment(al, text, spans, assign(al, spans))
