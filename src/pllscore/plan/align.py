"""Tokens <-> words <-> characters, from a fast tokenizer's ``word_ids()`` and offsets.

In: per-token word ids (``None`` for special tokens) and character offsets.
Out: :class:`Alignment`, which says which positions are scored and which words they form.
Spans are half-open ``(start, stop)``, as in the ``tokenizers`` library.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

Span = tuple[int, int]

__all__ = ["Alignment", "Span", "align", "only", "restrict"]


@dataclass(frozen=True)
class Alignment:
    """Which token positions are scored, and how they group into words.

    Attributes:
        length: number of positions in the encoded sequence, special tokens included.
        positions: the scored (non-special) positions, ascending.
        word_of: for each scored position, the index of its word (0-based, dense).
        words: for each word, its token positions, ascending.
        word_spans: for each word, its character span in the text (surrounding spaces trimmed).
        token_spans: for each position, its character span; a token that is only a word-boundary
            marker (SentencePiece's lone "▁") gets an empty span, since it stands for no character.
    """

    length: int
    positions: tuple[int, ...]
    word_of: tuple[int, ...]
    words: tuple[tuple[int, ...], ...]
    word_spans: tuple[Span, ...]
    token_spans: tuple[Span, ...]


# pieces that mark a word boundary and stand for no character of the text
_MARKERS = {"\u2581", "\u0120"}


def align(
    word_ids: Sequence[int | None], offsets: Sequence[Span], text: str = "", pieces: Sequence[str] | None = None
) -> Alignment:
    """Group token positions into words.

    Args:
        word_ids: per position, the tokenizer's word index, or None for a special token.
        offsets: per position, the token's character span in ``text``.
        text: the original string, used only to trim whitespace off word spans.
        pieces: the token strings, used only to find lone word-boundary markers.

    Returns:
        The alignment. Words are numbered in order of first appearance.
    """
    if len(word_ids) != len(offsets):
        raise ValueError(f"{len(word_ids)} word ids but {len(offsets)} offsets")
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
    token_spans = tuple(
        (int(a), int(a)) if pieces is not None and pieces[i] in _MARKERS else (int(a), int(b))
        for i, (a, b) in enumerate(offsets)
    )
    spans = tuple(_trim(text, min(token_spans[p][0] for p in ps), max(token_spans[p][1] for p in ps)) for ps in members)
    return Alignment(
        length=len(word_ids),
        positions=tuple(positions),
        word_of=tuple(word_of),
        words=tuple(tuple(ps) for ps in members),
        word_spans=spans,
        token_spans=token_spans,
    )


def _trim(text: str, start: int, stop: int) -> Span:
    # byte-level BPE offsets may include the space that the token's "Ġ" stands for
    while start < stop and start < len(text) and text[start].isspace():
        start += 1
    while stop > start and stop <= len(text) and text[stop - 1].isspace():
        stop -= 1
    return (start, stop)


def restrict(al: Alignment, span: Span) -> tuple[Alignment, list[bool]]:
    """Keep as scored only the positions whose token overlaps characters ``span``.

    Words keep all their tokens, so masks (e.g. word-l2r's later tokens of the word) are
    unchanged; only which targets are read changes. Returns the restricted alignment and,
    per original scored position, whether it is kept.
    """
    start, stop = span
    keep = [al.token_spans[p][0] < stop and al.token_spans[p][1] > start for p in al.positions]
    return only(al, [p for p, k in zip(al.positions, keep) if k]), keep


def only(al: Alignment, positions: Sequence[int]) -> Alignment:
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
