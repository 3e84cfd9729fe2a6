"""Texts -> token ids and alignments: the checks on texts and the encoding every scorer shares.

In: texts (and the scorer's tokenizer and settings). Out: one :class:`Encoded` per text, whose
:class:`~pllscore.plan.align.Alignment` says which positions are the text's tokens (the ones
scored) and how they group into words, with character spans that index into the text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pllscore.engine.loading import check_token_types, encode_text, literal_specials, special_ids, text_only_tokenizer
from pllscore.errors import InputError, InputTooLongError
from pllscore.plan.align import Alignment, Span, align, restrict

__all__ = ["LONG_MODES", "Encoded", "check_long", "check_texts", "encode", "targets"]

#: what a scorer does with a text longer than the model allows
LONG_MODES = ("error", "window")


@dataclass(frozen=True)
class Encoded:
    """One text as the model sees it.

    Attributes:
        ids: the token ids, special tokens (and a causal LM's BOS) included.
        pieces: the token strings, one per id.
        offsets: per position, its character span in the encoded string.
        alignment: which positions are scored and their words; spans index into the text.
        word_ids: per position, the tokenizer's word id; None for a position that is never
            scored or masked (special tokens, BOS).
        lead: number of special positions before the first content token.
        trail: number of special positions after the last content token.
    """

    ids: list[int]
    pieces: list[str]
    offsets: list[Span]
    alignment: Alignment
    word_ids: list[int | None]
    lead: int = 0
    trail: int = 0


def check_long(long: str) -> str:
    """``long`` if it is a known long-input mode, else an :class:`InputError`."""
    if long not in LONG_MODES:
        raise InputError(f"unknown long-input mode {long!r}; use 'error' (default) or 'window'")
    return long


def check_texts(texts: str | Iterable[str]) -> list[str]:
    """The texts as a list, or the :class:`InputError` naming the first one that cannot be scored."""
    if isinstance(texts, str):
        texts = [texts]
    elif isinstance(texts, (bytes, bytearray)) or not isinstance(texts, Iterable):
        raise InputError(f"texts must be a string or a list of strings, got {type(texts).__name__}")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise InputError(
                f"text {i} is a {type(t).__name__} ({t!r:.40}), not a string; convert it with str() or drop it"
            )
        if not t.strip():
            what = "empty" if not t else "whitespace only"
            raise InputError(f"text {i} is {what}; remove it or give it some words")
    return out


def encode(
    tokenizer: Any,
    texts: list[str],
    *,
    name: str,
    max_length: int | None,
    add_special_tokens: bool,
    prefix: int | None = None,
    allow_long: bool = False,
) -> list[Encoded]:
    """Encode ``texts`` as given, one :class:`Encoded` each.

    A text is scored as given: a literal ``"[MASK]"`` or ``"<|endoftext|>"`` in it is text, not a
    special token (``split_special_tokens``); a vocabulary that lists special tokens as pieces gets
    a copy that cannot read them from text; a text that still yields one is refused. ``prefix``
    (a causal LM's BOS) is put before the ids. A text longer than ``max_length`` is an
    :class:`InputTooLongError` unless ``allow_long``.
    """
    specials = special_ids(tokenizer)
    enc = encode_text(tokenizer, texts, add_special_tokens)
    if any(literal_specials(enc["input_ids"][i], enc.word_ids(i), specials) for i in range(len(texts))):
        alt = text_only_tokenizer(tokenizer)
        enc = enc if alt is None else encode_text(alt, texts, add_special_tokens)
    check_token_types(enc.get("token_type_ids"), name)
    out = []
    for i, text in enumerate(texts):
        ids = list(enc["input_ids"][i])
        literal = literal_specials(ids, enc.word_ids(i), specials)
        if literal:
            a, b = enc["offset_mapping"][i][literal[0]]
            raise InputError(
                f"text {i} contains {text[a:b]!r}, which the tokenizer of {name!r} reads only as its special "
                f"token {tokenizer.convert_ids_to_tokens(ids[literal[0]])!r}; pllscore scores text as given, "
                "so reword or remove it"
            )
        pieces = list(enc.tokens(i))
        offsets = [tuple(o) for o in enc["offset_mapping"][i]]
        word_ids: list[int | None] = list(enc.word_ids(i))
        if prefix is not None:
            ids, pieces = [prefix, *ids], [tokenizer.convert_ids_to_tokens(prefix), *pieces]
            offsets, word_ids = [(0, 0), *offsets], [None, *word_ids]
        if max_length is not None and len(ids) > max_length and not allow_long:
            raise InputTooLongError(i, len(ids), max_length)
        al = align(word_ids, offsets, text, pieces)  # type: ignore[arg-type]
        if not al.positions:
            raise InputError(f"text {i} ({text!r:.40}) has no tokens after tokenization; remove it")
        out.append(_encoded(ids, pieces, offsets, al, word_ids))  # type: ignore[arg-type]
    return out


def _encoded(
    ids: list[int], pieces: list[str], offsets: list[Span], al: Alignment, word_ids: list[int | None]
) -> Encoded:
    content = [j for j, w in enumerate(word_ids) if w is not None]
    lead = content[0] if content else 0
    trail = len(ids) - 1 - content[-1] if content else 0
    return Encoded(ids, pieces, offsets, al, word_ids, lead, trail)


def targets(encoded: Sequence[Encoded], spans: Sequence[Span | None] | None) -> list[np.ndarray | None]:
    """Per text, which of its tokens to score (None: all), from character spans."""
    if spans is None:
        return [None] * len(encoded)
    if len(spans) != len(encoded):
        raise InputError(f"{len(spans)} spans for {len(encoded)} texts; give one span (or None) per text")
    out: list[np.ndarray | None] = []
    for i, (e, span) in enumerate(zip(encoded, spans)):
        if span is None:
            out.append(None)
            continue
        keep = np.asarray(restrict(e.alignment, (int(span[0]), int(span[1])))[1], dtype=bool)
        if not keep.any():
            raise InputError(f"span {tuple(span)} of text {i} covers none of its tokens; check the character offsets")
        out.append(keep)
    return out
