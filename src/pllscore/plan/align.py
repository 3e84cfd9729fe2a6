"""Tokens <-> words <-> characters, from a fast tokenizer's ``word_ids()`` and offsets.

In: per-token word ids (``None`` for special tokens) and character offsets.
Out: :class:`Alignment`, which says which positions are scored and which words they form.
Spans are half-open ``(start, stop)``, as in the ``tokenizers`` library.

Which characters a token belongs to is decided here, once, for spans, words and regions alike: a
token *stands on* one character of the text, its anchor (:func:`anchors`), and belongs to the span,
word or region that holds that character.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from pllscore.errors import InputError

Span = tuple[int, int]
G = TypeVar("G", bound="Grouping")

__all__ = ["Alignment", "Grouping", "Span", "align", "anchors", "check_span", "group", "only", "owners", "restrict"]


@dataclass(frozen=True)
class Grouping:
    """Which token positions are scored, and how they group into words (:func:`group`): what masks need.

    Attributes:
        length: number of positions in the encoded sequence, special tokens included.
        positions: the scored (non-special) positions, ascending.
        word_of: for each scored position, the index of its word (0-based, dense).
        words: for each word, its token positions, ascending.
    """

    length: int
    positions: tuple[int, ...]
    word_of: tuple[int, ...]
    words: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Alignment(Grouping):
    """A :class:`Grouping` (its fields first) with the characters of its tokens and words (:func:`align`).

    Attributes:
        word_spans: for each word, its character span in the text: the hull of its tokens'
            spans. Word spans are in order and never overlap; a word made only of whitespace
            (byte-level BPE's NBSP or tab) gets an empty span where it stands.
        token_spans: for each position, its character span, inside its word's span, with
            surrounding whitespace trimmed (byte-level BPE's "Ġword" covers the space before
            "word"). A token that stands for no character of the text gets an empty span: a
            lone word-boundary marker (SentencePiece's "▁", byte-level BPE's "Ġ"), or a token of
            whitespace only.

        anchors: for each position, the character of the text its token stands on (see
            :func:`anchors`); what decides which span, word or region the token belongs to.

    Where a tokenizer's normaliser makes several words out of one character (NFKC turns the
    Arabic ligature "ﷺ" into four words), the character goes to the first of them and the
    others get empty spans right after it, so that spans still never overlap; their anchors
    stay on the character.
    """

    word_spans: tuple[Span, ...]
    token_spans: tuple[Span, ...]
    anchors: tuple[int, ...] = ()


# pieces that mark a word boundary and stand for no character of the text
_MARKERS = {"\u2581", "\u0120"}


def align(
    word_ids: Sequence[int | None], offsets: Sequence[Span], text: str = "", pieces: Sequence[str] | None = None
) -> Alignment:
    """Group token positions into words.

    Args:
        word_ids: per position, the tokenizer's word index, or None for a special token.
        offsets: per position, the token's character span in ``text``.
        text: the original string, used to trim whitespace off spans and to keep spans inside
            it; ``""`` when it is not at hand (spans are then used as given, bar the ordering).
        pieces: the token strings, used only to find lone word-boundary markers.

    Returns:
        The alignment. Words are numbered in order of first appearance.
    """
    if len(word_ids) != len(offsets):
        raise ValueError(f"{len(word_ids)} word ids but {len(offsets)} offsets")
    grouped = group(word_ids)
    members = grouped.words
    stands_on = anchors(text, offsets) if text else tuple(int(a) for a, _ in offsets)
    token_spans = [
        _token_span(text, int(a), int(b), pieces is not None and pieces[i] in _MARKERS)
        for i, (a, b) in enumerate(offsets)
    ]
    spans: list[Span] = []
    previous_end = 0
    for ps in members:
        solid = [token_spans[p] for p in ps if token_spans[p][0] < token_spans[p][1]]
        if solid:
            start, stop = min(a for a, _ in solid), max(b for _, b in solid)
        else:  # whitespace or markers only: an empty span where the word begins
            start = stop = min(token_spans[p][0] for p in ps)
        # a word never starts before the previous one ends (one character, several words)
        start = max(start, previous_end)
        stop = max(stop, start)
        spans.append((start, stop))
        previous_end = stop
        for p in ps:
            a, b = token_spans[p]
            token_spans[p] = (min(max(a, start), stop), min(max(b, start), stop))
    return Alignment(
        length=grouped.length,
        positions=grouped.positions,
        word_of=grouped.word_of,
        words=grouped.words,
        word_spans=tuple(spans),
        token_spans=tuple(token_spans),
        anchors=stands_on,
    )


def group(word_ids: Sequence[int | None]) -> Grouping:
    """Group token positions into words by their word ids (None: a special token, not scored); words are
    numbered in order of first appearance. :func:`align` without the characters."""
    dense: dict[int, int] = {}
    positions: list[int] = []
    word_of: list[int] = []
    members: list[list[int]] = []
    for pos, wid in enumerate(word_ids):
        if wid is None:
            continue
        w = dense.setdefault(wid, len(dense))
        if w == len(members):
            members.append([])
        members[w].append(pos)
        positions.append(pos)
        word_of.append(w)
    return Grouping(len(word_ids), tuple(positions), tuple(word_of), tuple(tuple(ps) for ps in members))


def anchors(text: str, offsets: Sequence[Span]) -> tuple[int, ...]:
    """Per token (raw character ``offsets`` in ``text``, as the tokenizer gives them), the character it stands on.

    The rule, used for every span, word and region: a token stands on the first non-space character
    at or after its start. So GPT-2's ``"Ġthe"`` stands on ``t``, SentencePiece's lone ``"▁"`` before
    ``"5"`` on ``5``, and a token of whitespace only (``"Ċ"``) on the next character that is not
    whitespace. The raw offsets are used, not the trimmed spans of :class:`Alignment`: where the
    normaliser expands one character into several tokens, every one of them stands on that character.
    A token after the last non-space character (trailing whitespace) stands on that last character;
    in a text of whitespace only, on its own start.
    """
    n = len(text)
    end = len(text.rstrip())  # one past the last non-space character (0: none)
    out = []
    for a, _ in offsets:
        at = min(max(int(a), 0), n)
        while at < end and text[at].isspace():
            at += 1
        out.append(at if at < end else (end - 1 if end else min(max(int(a), 0), n)))
    return tuple(out)


def owners(points: Sequence[int], spans: Sequence[Span | None]) -> list[int]:
    """Per character index of ``points`` (token anchors), the index of the span of ``spans`` that holds it.

    ``spans`` are in order and do not overlap; ``None`` or an empty span holds nothing. A point
    between two spans (in a separator that is not whitespace) belongs to the span before it, one
    before the first span to the first. Used for user words and SyntaxGym regions alike.
    """
    solid = [(a, r) for r, s in enumerate(spans) if s is not None and s[0] < s[1] for a in (s[0],)]
    if not solid:
        raise ValueError("no span with characters to assign tokens to")
    starts = [a for a, _ in solid]
    return [solid[max(bisect.bisect_right(starts, p) - 1, 0)][1] for p in points]


def _token_span(text: str, start: int, stop: int, marker: bool) -> Span:
    """A token's span inside ``text``, trimmed of whitespace; empty for a marker or whitespace only."""
    if text:
        start, stop = min(max(start, 0), len(text)), min(max(stop, 0), len(text))
        stop = max(stop, start)
    if marker:
        return (start, start)
    if not text:
        return (start, stop)
    a, b = start, stop
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    # whitespace only: empty, where the token begins
    return (a, b) if a < b else (start, start)


def restrict(al: Alignment, span: Span) -> tuple[Alignment, list[bool]]:
    """Keep as scored only the positions whose token stands on a character of ``span`` (its anchor).

    Words keep all their tokens, so masks (e.g. word-l2r's later tokens of the word) are
    unchanged; only which targets are read changes. Returns the restricted alignment and,
    per original scored position, whether it is kept.
    """
    start, stop = span
    keep = [start <= al.anchors[p] < stop for p in al.positions]
    return only(al, [p for p, k in zip(al.positions, keep) if k]), keep


def only(al: G, positions: Sequence[int]) -> G:
    """The alignment with only ``positions`` scored; words keep all their tokens, so masks are unchanged."""
    wanted = {int(p) for p in positions}
    if len(wanted) == len(al.positions):
        return al
    keep = [p in wanted for p in al.positions]
    return replace(
        al,
        positions=tuple(p for p, k in zip(al.positions, keep) if k),
        word_of=tuple(w for w, k in zip(al.word_of, keep) if k),
    )


def check_span(span: Span, text: str, index: int) -> None:
    """Refuse a character span that is not ``(start, stop)`` with ``0 <= start <= stop <= len(text)``."""
    start, stop = (int(x) for x in span)
    if not 0 <= start <= stop <= len(text):
        raise InputError(
            f"span {(start, stop)} of text {index} is outside the text (characters 0 to {len(text)}); "
            "give 0 <= start <= stop <= len(text)"
        )
