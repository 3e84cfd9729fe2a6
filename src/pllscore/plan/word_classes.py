"""Which vocabulary items may begin a word and which may continue one, per tokenizer family.

In: the vocabulary's pieces (``convert_ids_to_tokens``), their decoded strings, the special ids.
Out: :class:`WordClasses`, boolean masks over the model's output vocabulary.

A word is what pllscore's word scores call a word. WordPiece marks continuations: a word is a
token without ``##`` followed by ``##`` tokens. Byte-level BPE (``Ġ``) and SentencePiece (``▁``)
mark beginnings: a word is a token with the marker followed by tokens without it, and it ends
where the next word begins. Where the tokenizer writes no marker before a word (GPT-2's first
word of a text), the word begins with an unmarked token (:attr:`WordClasses.plain_first`).
Special tokens and tokens holding whitespace inside them belong to no word. The masks only prune
the search: every word found is also checked by re-tokenising the filled text.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["CLASSES", "WordClasses", "word_classes"]

#: the names of the classes a search asks for (:attr:`WordClasses.masks`)
CLASSES = ("first", "plain_first", "continuation")
_WORDPIECE = "##"


@dataclass(frozen=True)
class WordClasses:
    """Boolean masks over the vocabulary.

    Attributes:
        first: tokens that begin a word where the tokenizer marks beginnings (WordPiece: any
            token without ``##``).
        plain_first: tokens that begin a word where no marker is written (a byte-level BPE's
            first word of a text); for WordPiece the same as ``first``.
        continuation: tokens that continue a word.
        marker: the word-beginning marker (``Ġ``, ``▁``), or ``"##"`` for WordPiece's continuations.
    """

    first: np.ndarray
    plain_first: np.ndarray
    continuation: np.ndarray
    marker: str

    @property
    def masks(self) -> dict[str, np.ndarray]:
        """The masks by name (:data:`CLASSES`)."""
        return {"first": self.first, "plain_first": self.plain_first, "continuation": self.continuation}


def _usable(piece: str | None, string: str, marker: str) -> bool:
    if piece is None:
        return False
    core = string[1:] if string.startswith(" ") else string
    if any(c.isspace() for c in core):
        return False
    # a lone marker (SentencePiece's ▁ before a digit) begins a word that its next token fills
    return bool(core) or piece == marker


def word_classes(
    pieces: Sequence[str | None], strings: Sequence[str], special: Collection[int], marker: str
) -> WordClasses:
    """The classes of a vocabulary of ``len(pieces)`` items (None: an id the tokenizer does not have).

    ``strings``: each piece decoded on its own (a byte-level ``Ċ`` is ``"\\n"``); ``marker``:
    ``"##"`` for WordPiece, else the word-beginning marker.
    """
    n = len(pieces)
    usable = np.array([_usable(p, s, marker) for p, s in zip(pieces, strings)], dtype=bool)
    if special:
        usable[[i for i in special if 0 <= i < n]] = False
    marked = np.array([p is not None and p.startswith(marker) for p in pieces], dtype=bool)
    if marker == _WORDPIECE:
        longer = np.array([p is not None and len(p) > len(marker) for p in pieces], dtype=bool)
        first = usable & ~marked
        return WordClasses(first, first, usable & marked & longer, marker)
    return WordClasses(usable & marked, usable & ~marked, usable & ~marked, marker)
