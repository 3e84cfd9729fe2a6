"""Word probabilities for tokenizers that mark a word's beginning (``word_prob="bow"``).

With a tokenizer whose tokens carry a word-beginning marker (GPT-2's ``Ġ``, SentencePiece's
``▁``), a word's tokens being next does not mean the word ends there: ``cat`` is also the start
of ``catalogue``. The probability of a word (Pimentel & Meister, 2024, "How to Compute the
Probability of a Word"; Oh & Schuler, 2024) is that of its tokens *and* of the next token ending
it, over the probability that a word ends where it starts::

    log p(w | c) = log p(tokens of w | c) + log P(E | c, w) - log P(E | c)

where E, the end-of-word event, is "the next token is a word-beginning token or EOS" (the text may
end after ``w``; Pimentel & Meister's bow set with eos added). Here this is applied per token: a
token gets ``+ log P(E | tokens up to it)`` when the token after it begins a word (or is EOS, a
special token, or there is none: the text ends), and ``- log P(E | tokens before it)`` when it
begins a word itself and some content (text or context) comes before it. At the very start of a
text with no context, the empty prefix is a complete word sequence with probability 1, so the
first word gets no denominator. Summed over a whitespace-delimited word, the terms give exactly
``log p(w | c)`` above; a word that the tokenizer splits into several of pllscore's words (``sat``
and ``.`` in ``sat.``) has the denominator on its first part and the end term on its last.

minicons (``bow_correction=True``) differs in two ways: its set leaves EOS out, and it never
gives the first scored token a denominator, also after a context.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pllscore.errors import InputError

__all__ = ["WORD_PROBS", "BowTokens", "beginning_marker", "bow_adjust", "check_word_prob"]

#: ``sum``: a word's log-probability is the sum of its tokens'; ``bow``: corrected as above
WORD_PROBS = ("sum", "bow")


def check_word_prob(word_prob: str | None) -> str:
    """The word-probability mode, checked (None: ``"sum"``)."""
    mode = "sum" if word_prob is None else str(word_prob).strip().lower()
    if mode not in WORD_PROBS:
        raise InputError(f"unknown word_prob {word_prob!r}; choose sum (default) or bow")
    return mode


class BowTokens:
    """Which vocabulary items begin a word (``is_bow``) and which end the one before (``ends``: those and EOS)."""

    def __init__(self, tokenizer: Any, vocab_size: int, name: str = "the model") -> None:
        marker = _marker(tokenizer)
        if marker is None:
            raise InputError(
                f"word_prob='bow' needs a tokenizer that marks word beginnings (GPT-2's Ġ, SentencePiece's ▁); "
                f"the tokenizer of {name!r} does not (WordPiece marks continuations): use word_prob='sum'"
            )
        self.marker = marker
        size = max(vocab_size, len(tokenizer))
        is_bow = np.zeros(size, dtype=bool)
        for piece, i in tokenizer.get_vocab().items():
            if piece.startswith(marker):
                is_bow[i] = True
        # added tokens that swallow the space before them begin a word too (as minicons counts them)
        for i, added in getattr(tokenizer, "added_tokens_decoder", {}).items():
            if getattr(added, "lstrip", False) and not getattr(added, "special", False):
                is_bow[i] = True
        ends = is_bow.copy()
        if tokenizer.eos_token_id is not None:
            ends[tokenizer.eos_token_id] = True
        self.is_bow = is_bow
        self.ends = ends
        self.vocab_size = vocab_size

    def end_mask(self) -> np.ndarray:
        """The end-of-word set over the model's output vocabulary, for the readout."""
        return self.ends[: self.vocab_size]


def beginning_marker(tokenizer: Any) -> str | None:
    """The tokenizer's word-beginning marker (``Ġ``, ``▁``), or None where it marks none (WordPiece)."""
    return _marker(tokenizer)


def _marker(tokenizer: Any) -> str | None:
    # as minicons finds it: the first character of the token a lone space encodes to
    try:
        ids = tokenizer(" ", add_special_tokens=False)["input_ids"]
        piece = tokenizer.convert_ids_to_tokens(ids[0])
    except (IndexError, KeyError, TypeError):
        return None
    if not piece or piece in (tokenizer.bos_token, tokenizer.eos_token, tokenizer.unk_token):
        return None
    if piece[0].isascii() and piece[0].isalnum():  # a letter: the space was not marked
        return None
    return piece[0]


def bow_adjust(ids: list[int], positions: Any, lead: int, trail: int, ends: np.ndarray, bow: BowTokens) -> np.ndarray:
    """Per scored position, the correction (nats) that turns token sums into word probabilities.

    ``ends[j]`` is ``log P(E | ids[: j + 1])`` for every position ``j`` of ``ids`` (the last one
    included); ``lead``/``trail`` are the special positions at either end (see
    :class:`~pllscore.scoring.encoding.Encoded`).
    """
    n = len(ids)
    tok = np.asarray(ids, dtype=np.int64)
    pos = np.asarray(positions, dtype=np.int64)
    nxt = np.minimum(pos + 1, n - 1)
    closes = (pos + 1 >= n - trail) | bow.ends[tok[nxt]]
    opens = bow.is_bow[tok[pos]] & (pos > lead)
    fwd = np.where(closes, ends[pos], 0.0)
    back = np.where(opens, ends[np.maximum(pos - 1, 0)], 0.0)
    return fwd - back
