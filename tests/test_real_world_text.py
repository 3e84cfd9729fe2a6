"""Real-world text, tested as properties, on every tokenizer family of tests/conftest.py.

Accents (precomposed and decomposed), stacked and lone combining marks, CJK, emoji with ZWJ
sequences and skin tones, Arabic and Hebrew (with points, harakat and direction marks), an
Arabic ligature that NFKC turns into four words, zero-width characters, NBSP and other
Unicode spaces, tabs and newlines, leading/trailing/repeated spaces, mixed scripts, markup
that spells a special token ("<s>", "[MASK]"), and arbitrary code points. For each text:

* scoring never crashes: a text with no tokens, or only whitespace, gives pllscore's one-line
  ``InputError`` and no other exception;
* every token's and every word's character span lies inside the text; word spans are in
  order and do not overlap; a word's span covers the spans of its tokens; no text
  character is scored as a special token;
* a word's score is the sum of its tokens' scores, the total the sum of the scored tokens';
* scores do not depend on the batch: a list, the same list shuffled under a small
  ``max_tokens`` budget, and each text alone give the same numbers (to 1e-5).

Masked models are scored with ``metric="all"``, so all four metrics are checked.
The file takes about 30 s of CPU (33 s wall alone on 2 cores; 80-85 s beside other test runs).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pllscore import CausalScorer, InputError, MaskedScorer
from tests import tokenizers_fixtures as tf
from tests.conftest import MASKED_FAMILIES

CAUSAL_FAMILIES = ["gpt2-bpe", "llama-unigram"]
ALL_FAMILIES = MASKED_FAMILIES + CAUSAL_FAMILIES
METRICS_ALL = ("original", "word-l2r", "whole-word", "sentence-l2r")
ATOL = 1e-5

# --- what real text is made of --------------------------------------------------------------
ASCII = tf.WHOLE_WORDS + ["hooligan", "marauder", "didn't", "x", "42", "U.S.A.", "e-mail", "(see)", "3.14"]
ACCENTED = [
    "café",  # precomposed é
    "cafe\u0301",  # e + combining acute
    "naïve",
    "nai\u0308ve",
    "Ångström",
    "A\u030angstro\u0308m",
    "São",
    "Sa\u0303o",
    "Straße",
    "œuvre",
    "ﬁn",  # the fi ligature: NFKC makes one character two
    "Zoë's",
    "İstanbul",  # capital I with dot: lower-casing makes it two characters
]
COMBINING = ["a\u0301\u0323", "e\u0301\u0301\u0301", "\u0301", "x\u0336y\u0336", "Z\u0351\u0352\u0353"]
CJK = ["日本語", "のテキスト", "中文", "汉字", "한국어", "カタカナ", "東京タワー", "。", "「引用」", "ｶﾀｶﾅ"]
EMOJI = [
    "👍",
    "👍🏿",  # skin-tone modifier
    "👩🏽\u200d💻",  # ZWJ sequence with a skin tone
    "👨\u200d👩\u200d👧\u200d👦",  # family: three ZWJs
    "🏳\ufe0f\u200d🌈",  # variation selector + ZWJ
    "❤\ufe0f",
    "🇫🇷",  # regional-indicator flag
    "1\ufe0f\u20e3",  # keycap
]
RTL = [
    "שלום",
    "עולם",
    "מַיִם",  # Hebrew with points (combining)
    "مرحبا",
    "بالعالم",
    "مَرْحَبًا",  # Arabic with harakat (combining)
    "\u200fשלום\u200f",  # right-to-left marks
    "\u202bعربي\u202c",  # embedding and pop
    "ﷺ",  # one character that NFKC expands to four words
]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u200e", "\u00ad"]
SPACES = [" ", "  ", "   ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\u3000", "\u202f", " \u200b "]
MIXED = ["Tokyo東京", "abcابج", "123עברית", "e\u0301日", "👍cat", "cat\u200bdog", "a\u00a0b", "x\u200dy"]
# markup and prompts that spell a special token: text, to be scored as given (or refused)
MARKUP = ["<s>", "</s>", "<s>struck</s>", "[MASK]", "<mask>", "[CLS]", "<|endoftext|>", "<pad>"]

any_char = st.characters(exclude_categories=("Cs",))  # every code point a str can hold
word = st.one_of(
    st.sampled_from(ASCII),
    st.sampled_from(ACCENTED),
    st.sampled_from(COMBINING),
    st.sampled_from(CJK),
    st.sampled_from(EMOJI),
    st.sampled_from(RTL),
    st.sampled_from(MIXED),
    st.sampled_from(MARKUP),
    st.text(any_char, min_size=1, max_size=3),
)
glue = st.one_of(st.just(" "), st.sampled_from(SPACES), st.sampled_from(ZERO_WIDTH), st.just(""))
edge = st.one_of(st.just(""), st.sampled_from(SPACES))


@st.composite
def real_text(draw) -> str:
    """A short text: optional leading space, words joined by assorted glue, optional trailing space."""
    words = draw(st.lists(word, min_size=1, max_size=6))
    out = draw(edge) + words[0]
    for w in words[1:]:
        out += draw(glue) + w
    return out + draw(edge)


# texts with nothing to score, or that may have nothing, depending on the tokenizer
blank = st.lists(st.sampled_from(SPACES + ZERO_WIDTH + ["\x00", "\x07", "\x1b", "\u0085"]), max_size=6).map("".join)

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# regressions of plan/align.py, each a list of texts: found by the properties below
ALIGN_REGRESSIONS = [
    ["the the"],  # GPT-2's "Ġthe" spanned the space before it, outside its word "the"
    ["a\u00a0b  lead\u2003x"],  # byte-level NBSP word: token (1, 2) outside the word's (2, 2); "Ġ"/"▁" outside words
    ["ﷺ", "xﷺy z"],  # NFKC makes one character four words: their spans overlapped
]


# --- helpers ----------------------------------------------------------------------------------
@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    # the models are tiny: with 2 cores shared by concurrent test runs, a second intra-op
    # thread made each forward pass 10-20x slower, not faster
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _maker(family, masked_models, causal_models):
    """A function of ``max_tokens`` that makes the family's scorer."""
    if family in causal_models:
        return lambda max_tokens=None: CausalScorer(*causal_models[family], max_tokens=max_tokens)
    return lambda max_tokens=None: MaskedScorer(*masked_models[family], max_tokens=max_tokens)


def _score(scorer, texts):
    return scorer.score(texts, metric="all") if isinstance(scorer, MaskedScorer) else scorer.score(texts)


def _assert_one_line(e: BaseException) -> None:
    msg = str(e)
    assert msg and "\n" not in msg and "\r" not in msg, repr(msg)


def _scorable(scorer, texts: list[str]) -> list[str]:
    """The texts the scorer accepts; each one it refuses must be refused with a one-line InputError."""
    kept = []
    for t in texts:
        try:
            scorer.check([t])
        except InputError as e:
            _assert_one_line(e)
            continue
        kept.append(t)
    return kept


def _forbidden(tokenizer) -> set[str]:
    """Special tokens that no character of a text may be scored as (the unknown token may)."""
    specials = set(tokenizer.all_special_tokens)
    roles = {tokenizer.bos_token, tokenizer.eos_token, tokenizer.cls_token, tokenizer.sep_token}
    roles |= {tokenizer.pad_token, tokenizer.mask_token}
    return specials - ({tokenizer.unk_token} - roles)


def _assert_consistent(r, text: str, forbidden: set[str]) -> None:
    """Spans inside the text, words in order and covering their tokens, sums that add up."""
    n = len(text)
    assert r.text == text
    tokens, words = r.tokens, r.words
    assert r.n_tokens == len(tokens) >= 1 and r.n_words == len(words) >= 1
    assert sum(w.n_tokens for w in words) == r.n_tokens
    assert not forbidden & set(r.pieces), (r.pieces, text)
    for t in tokens:
        a, b = t.span
        assert 0 <= a <= b <= n, (t, text)
        assert 0 <= t.word < r.n_words
    for w in words:
        a, b = w.span
        assert 0 <= a <= b <= n, (w, text)
        assert w.text == text[a:b]
    for left, right in zip(words, words[1:]):
        assert left.span[1] <= right.span[0], (left, right, text)
    for t in tokens:
        wa, wb = words[t.word].span
        assert wa <= t.span[0] and t.span[1] <= wb, (t, words[t.word], text)
    # every token is scored (masked; causal with a BOS), with a log-probability
    scores = r.token_scores
    assert r.n_scored == r.n_tokens
    assert np.all(np.isfinite(scores)) and np.all(scores <= 0.0), (scores, text)
    for j, w in enumerate(words):
        assert w.score == pytest.approx(float(np.sum(scores[r.word_index == j])), abs=1e-9)
        assert not math.isnan(w.score)
    assert r.total == pytest.approx(float(np.sum(scores[r.scored])), abs=1e-9)
    assert r.total == pytest.approx(sum(w.score for w in words), abs=1e-9)


def _check_batch_invariance(make, items: list[str], budget: int, seed: int, forbidden: set[str]) -> None:
    """Consistent results, equal for the list, the list shuffled under ``budget``, and each text alone."""
    scorer = make()
    items = _scorable(scorer, items)
    if not items:
        return
    together = _score(scorer, items)
    masked = isinstance(scorer, MaskedScorer)
    assert len(together) == len(items) * (len(METRICS_ALL) if masked else 1)
    assert together.metrics == (METRICS_ALL if masked else ("causal",))
    for r in together:
        _assert_consistent(r, items[r.index], forbidden)
    ref = {(r.metric, r.index): r for r in together}
    perm = np.random.default_rng(seed).permutation(len(items))
    for r in _score(make(max_tokens=budget), [items[i] for i in perm]):
        want = ref[(r.metric, int(perm[r.index]))]
        assert r.text == want.text and r.pieces == want.pieces
        assert r.offsets == want.offsets and r.word_spans == want.word_spans
        np.testing.assert_allclose(r.logprobs, want.logprobs, atol=ATOL, rtol=0)
    for i, text in enumerate(items):
        for r in _score(scorer, text):
            np.testing.assert_allclose(r.logprobs, ref[(r.metric, i)].logprobs, atol=ATOL, rtol=0)


# --- properties -------------------------------------------------------------------------------
@pytest.mark.parametrize("family", ALL_FAMILIES)
@SETTINGS
@given(items=st.lists(real_text(), min_size=1, max_size=4), budget=st.integers(8, 120), seed=st.integers(0, 2**16))
@example(items=ALIGN_REGRESSIONS[0], budget=8, seed=0)
@example(items=ALIGN_REGRESSIONS[1], budget=8, seed=0)
@example(items=ALIGN_REGRESSIONS[2], budget=8, seed=1)
@example(items=["I <s>struck</s> it", "Fill [MASK] in <mask>, [CLS] <|endoftext|> <pad>"], budget=8, seed=2)
def test_real_text_spans_sums_and_batch_invariance(masked_models, causal_models, family, items, budget, seed):
    make = _maker(family, masked_models, causal_models)
    _check_batch_invariance(make, items, budget, seed, _forbidden(make().tokenizer))


@pytest.mark.parametrize("family", ALL_FAMILIES)
@SETTINGS
@given(text=st.one_of(blank, real_text()), others=st.lists(real_text(), max_size=2), where=st.integers(0, 2))
@example(text="", others=["the cat"], where=1)
@example(text="\u200b\ufeff", others=[], where=0)  # no tokens at all for WordPiece
@example(text=" \t\u00a0\u3000\r\n", others=["the cat", "a dog"], where=1)
def test_blank_or_tokenless_text_gives_one_line_input_error(masked_models, causal_models, family, text, others, where):
    make = _maker(family, masked_models, causal_models)
    scorer = make()
    others = _scorable(scorer, others)
    items = [*others[:where], text, *others[where:]]
    try:
        res = _score(scorer, items)
    except InputError as e:
        _assert_one_line(e)
        assert f"text {items.index(text)} " in str(e)  # the error names the offending text
        assert not _scorable(scorer, [text])
        return
    assert text.strip()  # an empty or whitespace-only text is never scored
    for r in res:
        _assert_consistent(r, items[r.index], _forbidden(scorer.tokenizer))


@pytest.mark.parametrize("which", ["shared_bert", "shared_gpt2"])
@settings(SETTINGS, max_examples=10)
@given(items=st.lists(real_text(), min_size=1, max_size=3), budget=st.integers(16, 200), seed=st.integers(0, 2**16))
@example(items=ALIGN_REGRESSIONS[0], budget=16, seed=0)
def test_trained_models_on_real_text(request, which, items, budget, seed):
    """The trained tiny BERT and GPT-2 of ../shared/models: real vocabularies with non-ASCII pieces."""
    scorer = request.getfixturevalue(which)
    kind = type(scorer)
    make = lambda max_tokens=None: kind(scorer.model, scorer.tokenizer, max_tokens=max_tokens)  # noqa: E731
    _check_batch_invariance(make, items, budget, seed, _forbidden(scorer.tokenizer))
