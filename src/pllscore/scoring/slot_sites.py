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
from pllscore.errors import InputError, InputTooLongError
from pllscore.plan.search import Frame, Request
from pllscore.plan.slots import SLOT, Slot
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
        glued: per text, where its slot is glued to the text around it (``"un___able"``; masked: the
            tokenizer reads a word in the slot as one word with its neighbours; causal: a written slot right
            after a non-space character), else ``""``.
    """

    scorer: Any
    slots: tuple[Slot, ...]
    left: tuple[tuple[int, ...], ...]
    right: tuple[tuple[int, ...], ...]
    frames: tuple[Frame, ...]
    glued: tuple[str, ...] = ()

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
        try:
            encoded = scorer.encode(probes).encoded
        except InputTooLongError as e:  # predict takes no windows
            raise InputError(
                f"text {e.index} with a word in its slot is {e.n_tokens} tokens long (special tokens included) but "
                f"the model allows at most {e.limit}; shorten it"
            ) from None
        left, right, frames, glued = [], [], [], []
        for i, (s, enc) in enumerate(zip(slots, encoded)):
            if scorer.kind == "causal" and not s.left and not enc.lead:
                raise InputError(
                    f"text {i} {s.text!r:.60} gives a causal LM nothing before its slot; give it a context "
                    "or load the model with bos=True"
                )
            start, stop = s.span(_PROBE, sep)
            at = _probe_tokens(enc, start, stop)
            if not at:
                raise InputError(f"text {i} {s.text!r:.60}: no token stands at its slot; put spaces around the slot")
            left.append(tuple(enc.ids[: at[0]]))
            right.append(tuple(enc.ids[at[-1] + 1 :]))
            piece = enc.pieces[at[0]]
            plain = marker is not None and not piece.startswith(marker)
            first = "plain_first" if plain else "first"
            frames.append(Frame(first, scorer.kind == "causal", bool(s.left)))
            merged = _merged(enc, at, start, stop) if scorer.kind != "causal" else _written_after_text(s)
            glued.append(_around(s) if merged else "")
        return cls(scorer, tuple(slots), tuple(left), tuple(right), tuple(frames), tuple(glued))

    def check_apart(self) -> None:
        """Refuse a slot glued to the text around it, where no word can stand on its own: a masked LM's
        tokenizer reads a word there as one with its neighbours (none round-trips); a causal LM's word
        follows its context after a space, which a glued slot does not have."""
        for i, snippet in enumerate(self.glued):
            if not snippet:
                continue
            head = f"text {i} {self.slots[i].text!r:.60}: its slot is glued to the text around it ({snippet!r})"
            if self.causal:
                raise InputError(
                    f"{head}, but a causal LM's word comes after a space; put a space before the slot, or use "
                    "level='token' (the next token right after the text)"
                )
            raise InputError(
                f"{head}, which the tokenizer reads as one word with any word in the slot; put spaces around the "
                "slot, or use level='token' (the fill-mask pipeline's reading)"
            )

    def check_room(self, word_tokens: int) -> None:
        """Refuse a text whose reads, with a word of ``word_tokens`` tokens in its slot, pass the model's limit."""
        limit = self.scorer.max_length
        for i, (left, right) in enumerate(zip(self.left, self.right)):
            n = len(left) + len(right) + word_tokens
            if limit is not None and n > limit:
                raise InputError(
                    f"text {i} is {n - word_tokens} tokens long around its slot (special tokens included); a word of "
                    f"up to {word_tokens} tokens in the slot makes {n}, but the model allows at most {limit}: shorten "
                    "the text or lower word_tokens"
                )

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
        """The read of ``level="token"``: the next token after the context (causal), or the fill-mask
        pipeline's read (masked): the text with the tokenizer's mask token written in the slot, encoded as
        the pipeline encodes it (so a slot glued to its neighbours reads them as the pipeline does:
        ``The [MASK] s are here .``); an MNTP reading reads it one position before the mask."""
        if self.causal:
            left = self.left[text]
            return Read(left, len(left) - 1, None, top, entropy=True)
        tok, slot = self.scorer.tokenizer, self.slots[text]
        start = getattr(self.scorer, "prefix", None)  # an MNTP reading's token before a text, when put there
        ids = [*([] if start is None else [start]), *tok(slot.left + tok.mask_token + slot.right)["input_ids"]]
        at = [j for j, t in enumerate(ids) if t == tok.mask_token_id]
        if len(at) != 1:
            raise InputError(
                f"text {text} {slot.text!r:.60} holds the mask token {tok.mask_token!r} itself; write the slot as "
                f"{SLOT} and leave the mask token out"
            )
        limit = self.scorer.max_length
        if limit is not None and len(ids) > limit:
            raise InputTooLongError(text, len(ids), limit, windows=False)
        return Read(ids, at[0] - self.offset, None, top, entropy=True)

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


def _merged(enc: Any, at: list[int], start: int, stop: int) -> bool:
    """Whether the probe's tokens take in text around it (``The as are``) or share their word with a
    neighbouring token (``un`` ``##a``): then no word stands in the slot on its own."""
    offsets, word_ids, text = enc.offsets, enc.word_ids, enc.text
    for j in at:
        a, b = offsets[j]
        outside = text[a - enc.shift : max(a, start) - enc.shift] + text[min(b, stop) - enc.shift : b - enc.shift]
        if outside.strip():
            return True
    word = {word_ids[j] for j in at}
    neighbours = [j for j in (at[0] - 1, at[-1] + 1) if 0 <= j < len(word_ids)]
    return any(word_ids[j] is not None and word_ids[j] in word for j in neighbours)


def _written_after_text(slot: Slot) -> bool:
    """Whether a causal text's written slot stands right after a non-space character (``un___``)."""
    at = slot.text.find(SLOT)
    return at > 0 and not slot.text[at - 1].isspace()


def _around(slot: Slot) -> str:
    """The slot with the non-space characters it touches (``un___able``)."""
    left = slot.text[: slot.text.find(SLOT)]
    right = slot.text[slot.text.find(SLOT) + len(SLOT) :]
    return f"{left.split()[-1] if left[-1:].strip() else ''}{SLOT}{right.split()[0] if right[:1].strip() else ''}"


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
