"""Words the user defines: character spans of words, and which of them each token belongs to.

In: a text and the words asked for (``"tokenizer"``, ``"whitespace"`` or a list of strings that,
joined by a separator, give the text), and a tokenizer's :class:`~pllscore.plan.align.Alignment`.
Out: per word its character span, per scored token its word, and the alignment regrouped by them.

A token belongs to the word that holds the character it stands on (:func:`pllscore.plan.align.anchors`,
the one rule for spans, words and regions): the first character at or after its start that is not
whitespace, or, where that character lies in a separator between words, the word before. So
SentencePiece's lone ``"▁"`` belongs to the word it marks, a byte-level BPE token of whitespace only
to the next word (the last word at the end of the text), and a token the tokenizer merged across a
word boundary counts once, for the word where it begins; the next word may then get no token of its
own (its score is NaN, never 0).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from pllscore.errors import InputError
from pllscore.plan.align import Alignment, Span, owners

__all__ = ["MASK_BY", "WORD_MODES", "assign", "check_mask_by", "check_words", "explicit_spans", "regroup", "word_spans"]

#: the named ways to cut a text into words; or give the words themselves
WORD_MODES = ("tokenizer", "whitespace")
#: what the word-based masked metrics (word-l2r, whole-word) mask: the tokenizer's words or the user's
MASK_BY = ("tokenizer", "words")

_NON_SPACE = re.compile(r"\S+")


def check_mask_by(mask_by: str) -> str:
    """``mask_by`` if known, else a one-line :class:`InputError`."""
    if mask_by not in MASK_BY:
        raise InputError(f"unknown mask_by {mask_by!r}; use 'tokenizer' (default, the tokenizer's words) or 'words'")
    return mask_by


def check_words(words: object, n: int, *, single: bool = False) -> str | list[list[str]]:
    """A word mode of :data:`WORD_MODES`, or one list of words per text (``n`` texts), else an :class:`InputError`.

    With ``single`` (the texts were one string), one list of strings is that text's words.
    """
    if isinstance(words, str):
        if words not in WORD_MODES:
            raise InputError(
                f"unknown words {words!r}; use 'tokenizer' (default), 'whitespace', or one list of words per text"
            )
        return words
    if isinstance(words, (bytes, bytearray)) or not isinstance(words, Sequence):
        raise InputError(f"words must be 'tokenizer', 'whitespace' or one list of words per text, got {words!r:.40}")
    lists = list(words)
    if single and lists and all(isinstance(w, str) for w in lists):
        lists = [lists]
    if len(lists) != n:
        raise InputError(f"{len(lists)} lists of words for {n} texts; give one list of words per text")
    out = []
    for i, ws in enumerate(lists):
        if isinstance(ws, (str, bytes)) or not isinstance(ws, Sequence):
            raise InputError(f"the words of text {i} are a {type(ws).__name__} ({ws!r:.40}), not a list of strings")
        for k, w in enumerate(ws):
            if not isinstance(w, str):
                raise InputError(f"word {k} of text {i} is a {type(w).__name__} ({w!r:.40}), not a string")
            if not w:
                raise InputError(f"word {k} of text {i} is empty; drop it (every word needs a character)")
        if not ws:
            raise InputError(f"text {i} has an empty list of words; give its words, or use words='whitespace'")
        out.append(list(ws))
    return out


def explicit_spans(text: str, words: Sequence[str], sep: str = " ", *, index: int = 0) -> list[Span]:
    """Each word's span in ``text``, whose words joined by ``sep`` must be ``text`` exactly.

    Otherwise a one-line :class:`InputError` names the text (``index``) and the first character
    where the two differ.
    """
    joined = sep.join(words)
    if joined != text:
        k = next((j for j, (a, b) in enumerate(zip(text, joined)) if a != b), min(len(text), len(joined)))
        raise InputError(
            f"the words of text {index} joined by {sep!r} differ from it at character {k}: the text has "
            f"{text[k : k + 12]!r}, the words give {joined[k : k + 12]!r}; give words that, joined by word_sep, "
            "are the text exactly"
        )
    spans, at = [], 0
    for w in words:
        spans.append((at, at + len(w)))
        at += len(w) + len(sep)
    return spans


def word_spans(text: str, words: str | Sequence[str], sep: str = " ", *, index: int = 0) -> list[Span] | None:
    """The spans of the user's words in ``text``: ``"whitespace"`` (maximal runs of non-whitespace,
    as ``str.split()``), a list of words (see :func:`explicit_spans`), or None for ``"tokenizer"``."""
    if isinstance(words, str):
        if words == "tokenizer":
            return None
        return [m.span() for m in _NON_SPACE.finditer(text)]
    return explicit_spans(text, words, sep, index=index)


def assign(al: Alignment, spans: Sequence[Span]) -> list[int]:
    """Per scored position of ``al``, the index of the word of ``spans`` that holds the character its token
    stands on (:func:`pllscore.plan.align.anchors`; see the module)."""
    if not spans:
        raise ValueError("no words to assign tokens to")
    return owners([al.anchors[p] for p in al.positions], spans)


def regroup(al: Alignment, spans: Sequence[Span], word_of: Sequence[int]) -> Alignment:
    """``al`` with its scored positions grouped into the words ``spans`` (``word_of``: per scored position, its word).

    Every word of ``spans`` is kept, in order, even one with no token (its group is empty); token
    spans stay the tokenizer's, so a token merged across a boundary keeps its characters in both.
    """
    groups: list[list[int]] = [[] for _ in spans]
    for p, w in zip(al.positions, word_of):
        groups[w].append(p)
    return replace(
        al, word_of=tuple(word_of), words=tuple(tuple(g) for g in groups), word_spans=tuple(tuple(s) for s in spans)
    )
