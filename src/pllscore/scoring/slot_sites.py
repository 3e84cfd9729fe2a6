"""Texts' slots as a model reads them: the token ids around each slot, the reads a search asks for,
and the round trip that decides whether a word found is one.

A masked LM reads a word of n tokens as the text with n masks at the slot, the word's first
tokens filled left to right (the ``word-l2r`` chain: what ``score(filled, metric="word-l2r",
spans=[slot])`` gives the word), each read at the first mask still open (an MNTP reading,
:mod:`pllscore.scoring.mntp`: one position before it). A causal LM reads the context (after its BOS) and the word's
first tokens, and the word's probability includes that the next token ends it (``word_prob="bow"``).
The ids around a slot come from encoding the text with a probe word in it, as ``score`` encodes;
a word is kept only if the filled text, encoded the same way, gives exactly those ids around its
tokens (and, masked, its tokens are one of the tokenizer's words).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pllscore.engine.slots import Read
from pllscore.engine.tokenizing import special_ids
from pllscore.errors import InputError
from pllscore.plan.search import Frame, Request
from pllscore.plan.slots import Slot
from pllscore.plan.word_classes import WordClasses, word_classes
from pllscore.scoring.bow import beginning_marker

__all__ = ["Sites", "vocabulary_classes"]

_PROBE = "a"  # a one-token word in every vocabulary, to find where a slot's tokens stand
_CLASSES: weakref.WeakKeyDictionary[Any, dict[int, WordClasses]] = weakref.WeakKeyDictionary()


def vocabulary_classes(tokenizer: Any, vocab_size: int, name: str) -> WordClasses:
    """The tokenizer's :class:`WordClasses` over a model vocabulary of ``vocab_size`` (kept per tokenizer)."""
    try:
        cached = _CLASSES.setdefault(tokenizer, {})
    except TypeError:
        cached = {}
    if vocab_size in cached:
        return cached[vocab_size]
    marker = beginning_marker(tokenizer)
    n = min(vocab_size, len(tokenizer))
    pieces: list[str | None] = list(tokenizer.convert_ids_to_tokens(list(range(n))))
    if marker is None:
        if not any(p and p.startswith("##") for p in pieces):
            raise InputError(
                f"the tokenizer of {name!r} marks neither word beginnings (Ġ, ▁) nor continuations (##), "
                "so a word cannot be told from its tokens; use level='token'"
            )
        marker = "##"
    strings = [tokenizer.convert_tokens_to_string([p]) if p is not None else "" for p in pieces]
    pieces += [None] * (vocab_size - n)
    strings += [""] * (vocab_size - n)
    unk = tokenizer.unk_token_id
    special = set(special_ids(tokenizer)) | ({unk} if unk is not None else set())
    cached[vocab_size] = word_classes(pieces, strings, special, marker)
    return cached[vocab_size]


@dataclass(frozen=True)
class Sites:
    """The slots of a batch of texts for one scorer: what to read for a request, and the round trip.

    Attributes:
        slots: per text, its slot.
        left: per text, the ids before the slot (special tokens and a causal LM's BOS included).
        right: per text, the ids after it (a masked LM's; a causal LM's closing specials, if any).
        frames: per text, the search's :class:`~pllscore.plan.search.Frame`.
    """

    scorer: Any
    slots: tuple[Slot, ...]
    left: tuple[tuple[int, ...], ...]
    right: tuple[tuple[int, ...], ...]
    frames: tuple[Frame, ...]

    @property
    def causal(self) -> bool:
        return self.scorer.kind == "causal"

    @property
    def offset(self) -> int:
        """How far before a masked token its distribution is read (an MNTP reading: 1)."""
        return int(getattr(self.scorer, "read_offset", 0))

    @property
    def sep(self) -> str:
        """What goes between the text before a slot and the word (a causal LM's context is stripped)."""
        return " " if self.causal else ""

    @classmethod
    def build(cls, scorer: Any, slots: Sequence[Slot], marker: str | None) -> Sites:
        """The sites of ``slots`` (``marker``: the tokenizer's word-beginning marker, None for WordPiece)."""
        sep = " " if scorer.kind == "causal" else ""
        probes = [s.fill(_PROBE, sep) for s in slots]
        encoded = scorer.encode(probes).encoded
        left, right, frames = [], [], []
        for i, (s, enc) in enumerate(zip(slots, encoded)):
            if scorer.kind == "causal" and not s.left and not enc.lead:
                raise InputError(
                    f"text {i} {s.text!r:.60} gives a causal LM nothing before its slot; give it a context "
                    "or load the model with bos=True"
                )
            at = _probe_tokens(enc, *s.span(_PROBE, sep))
            if not at:
                raise InputError(f"text {i} {s.text!r:.60}: no token stands at its slot; put spaces around the slot")
            left.append(tuple(enc.ids[: at[0]]))
            right.append(tuple(enc.ids[at[-1] + 1 :]))
            piece = enc.pieces[at[0]]
            plain = marker is not None and not piece.startswith(marker)
            first = "plain_first" if plain else "first"
            frames.append(Frame(first, scorer.kind == "causal", bool(s.left)))
        return cls(scorer, tuple(slots), tuple(left), tuple(right), tuple(frames))

    def read(self, request: Request) -> Read:
        """The :class:`~pllscore.engine.slots.Read` that answers a search's request."""
        left, prefix = self.left[request.text], request.prefix
        if self.causal:
            ids = (*left, *prefix)
            return Read(ids, len(ids) - 1, request.allowed, request.top, end=request.end)
        mask = self.scorer.tokenizer.mask_token_id
        ids = (*left, *prefix, *([mask] * (request.length - len(prefix))), *self.right[request.text])
        return Read(ids, len(left) + len(prefix) - self.offset, request.allowed, request.top)

    def token_read(self, text: int, top: int) -> Read:
        """The read of ``level="token"``: one mask at the slot, or the next token after the context."""
        left = self.left[text]
        if self.causal:
            return Read(left, len(left) - 1, None, top, entropy=True)
        ids = (*left, self.scorer.tokenizer.mask_token_id, *self.right[text])
        return Read(ids, len(left) - self.offset, None, top, entropy=True)

    def word(self, tokens: Sequence[int]) -> str:
        """The text of a word's tokens."""
        text = self.scorer.tokenizer.decode(list(tokens), clean_up_tokenization_spaces=False)
        return str(text).strip()

    def filled(self, text: int, word: str) -> str:
        """The text with ``word`` in its slot, as ``score`` is given it."""
        return self.slots[text].fill(word, self.sep)

    def accept(self, text: int, tokens: tuple[int, ...]) -> bool:
        """Whether the filled text re-tokenises into exactly the ids around the slot and ``tokens``
        (masked: and ``tokens`` make one of the tokenizer's words)."""
        word = self.word(tokens)
        if not word or any(c.isspace() for c in word):
            return False
        try:
            enc = self.scorer.encode([self.filled(text, word)]).encoded[0]
        except InputError:
            return False
        left, right = self.left[text], self.right[text]
        if tuple(enc.ids) != (*left, *tokens, *right):
            return False
        if self.causal:
            return True
        ids = enc.word_ids
        inside = {ids[j] for j in range(len(left), len(left) + len(tokens))}
        if len(inside) != 1 or None in inside:
            return False
        outside = (ids[len(left) - 1] if left else None, ids[len(left) + len(tokens)] if right else None)
        return not inside & set(outside)


def _probe_tokens(enc: Any, start: int, stop: int) -> list[int]:
    """The positions of the probe word's tokens: those over its characters, and before them those of its
    word that stand on whitespace only (SentencePiece's lone ``▁``)."""
    offsets, word_ids, text = enc.offsets, enc.word_ids, enc.text
    at = [j for j, (a, b) in enumerate(offsets) if word_ids[j] is not None and a < stop and b > start]
    while at and at[0] > 0 and word_ids[at[0] - 1] == word_ids[at[0]]:
        a, b = offsets[at[0] - 1]
        if text[a - enc.shift : b - enc.shift].strip():
            break
        at.insert(0, at[0] - 1)
    return at
