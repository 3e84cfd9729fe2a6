"""engine/tokenizing.tokenize: the backend's own encodings read directly give what transformers' call gives."""

from __future__ import annotations

import pytest

from pllscore.engine import tokenizing
from tests import tokenizers_fixtures as tf

TEXTS = [
    "The hooligan wrecked the vehicle.",
    "  spaced   out  ",
    "[MASK] <mask> <|endoftext|> [CLS] </s> are text",
    "café naïve 東京 🙂",
    "tabs\tand\nnewlines",
    "",
    "don't",
]

TOKENIZERS = {
    "wordpiece": tf.wordpiece,
    "byte-bpe": lambda: tf.byte_bpe(roberta=False),
    "roberta-bpe": lambda: tf.byte_bpe(roberta=True),
    "unigram": tf.unigram,
    "t5-unigram": tf.t5_unigram,
}


def _lists(tokens) -> list[tuple[list, ...]]:
    return [(list(t.ids), list(t.tokens), list(t.offsets), list(t.word_ids), list(t.type_ids)) for t in tokens]


@pytest.mark.parametrize("family", sorted(TOKENIZERS))
@pytest.mark.parametrize("add", [False, True])
def test_direct_backend_equals_the_call(family, add, monkeypatch):
    tok = TOKENIZERS[family]()
    assert tokenizing._plain_backend(tok) is not None  # transformers 5's plain fast tokenizer: read directly
    direct = _lists(tokenizing.tokenize(tok, TEXTS, add))
    monkeypatch.setattr(tokenizing, "_plain_backend", lambda t: None)
    through_call = _lists(tokenizing.tokenize(tok, TEXTS, add))
    assert direct == through_call
    assert tok.backend_tokenizer.encode_special_tokens is False  # the setting is put back


def test_a_tokenizer_with_its_own_call_goes_through_it():
    class Own(type(tf.wordpiece())):
        def __call__(self, *args, **kwargs):
            return super().__call__(*args, **kwargs)

    tok = tf.wordpiece()
    tok.__class__ = Own
    assert tokenizing._plain_backend(tok) is None
    assert _lists(tokenizing.tokenize(tok, TEXTS[:2], True))[0][1][0] == "[CLS]"


def test_truncation_set_on_the_backend_goes_through_the_call():
    tok = tf.wordpiece()
    tok.backend_tokenizer.enable_truncation(4)
    assert tokenizing._plain_backend(tok) is None
    got = _lists(tokenizing.tokenize(tok, TEXTS[:1], True))  # the call switches truncation off
    assert len(got[0][0]) > 4
    assert tokenizing._plain_backend(tok) is not None
