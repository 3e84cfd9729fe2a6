"""One text as the model sees it (:class:`Encoded`), and what its results list per token.

In: a text's tokens as the tokenizer gave them (ids, pieces, offsets, word ids) and where the text begins
in the string encoded. Out: the positions scored at once, and the
:class:`~pllscore.plan.align.Alignment` (words, spans, anchors) when first asked for.

The alignment costs more Python than anything else of a text on the host, and scoring needs only the
scored positions (and, for a masked LM, the words its masks follow); so it is made on first use and kept.
A run that reads only totals never makes it; one that reads tokens or words makes it once per text, as
the results ask (:func:`token_fields`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from pllscore.plan.align import Alignment, Grouping, Span, align, group

__all__ = ["Encoded", "special_flags", "token_fields"]


@dataclass(frozen=True)
class Encoded:
    """One text as the model sees it. Its sequences are tuples of numbers and strings, which the garbage
    collector stops following once it has looked at them: a file's encodings held alive cost it nothing.

    Attributes:
        ids: the token ids, special tokens (and a causal LM's BOS) included.
        pieces: the token strings, one per id.
        offsets: per position, its character span in the encoded string (with a context, the
            joint string).
        word_ids: per position, the id of its word as masks follow it (the tokenizer's, or the
            user's with ``mask_by="words"``); None for a position that is never scored or masked
            (special tokens, BOS, a context's tokens).
        positions: the scored positions, ascending: those whose word id is not None (the
            alignment's, known without making it).
        text: the text, which the alignment's spans index into.
        shift: where the text begins in the encoded string (``offsets`` minus ``shift`` index the text).
        lead: number of special positions before the first content token (context or text).
        trail: number of special positions after the last content token.
        user_words: the alignment regrouped into the user's words when results follow them but
            masks do not (``mask_by="tokenizer"``); None when results follow :attr:`alignment`.
        source: the ids the encoder of an encoder-decoder model reads (its source); None for the
            other kinds.
        specials: the positions of special tokens that are scored all the same (an encoder-decoder
            model's closing EOS); the results list them among the text's tokens, in no word.
        aligned: the alignment when it was made at encoding (the user's words with ``mask_by="words"``),
            else None: :attr:`alignment` makes it from the fields above when first asked for.
    """

    ids: Sequence[int]
    pieces: Sequence[str]
    offsets: Sequence[Span]
    word_ids: Sequence[int | None]
    positions: tuple[int, ...]
    text: str = ""
    shift: int = 0
    lead: int = 0
    trail: int = 0
    user_words: Alignment | None = None
    source: tuple[int, ...] | None = None
    specials: tuple[int, ...] = ()
    aligned: Alignment | None = field(default=None, repr=False)

    @property
    def grouping(self) -> Grouping:
        """Which positions are scored and the words masks follow (:attr:`alignment` without its characters)."""
        return self.aligned if self.aligned is not None else group(self.word_ids)

    @cached_property
    def alignment(self) -> Alignment:
        """Which positions are scored and the words masks follow; spans index into the text."""
        if self.aligned is not None:
            return self.aligned
        s = self.shift
        offsets = [(a - s, b - s) for a, b in self.offsets] if s else self.offsets
        return align(self.word_ids, offsets, self.text, self.pieces)

    @property
    def reported(self) -> Alignment:
        """The alignment whose words the results report: the user's words, else the tokenizer's."""
        return self.user_words if self.user_words is not None else self.alignment

    @property
    def n_words(self) -> int:
        """The number of words the results report, without making the alignment."""
        if self.user_words is not None or self.aligned is not None:
            return len(self.reported.words)
        return len({w for w in self.word_ids if w is not None})


def _order(enc: Encoded) -> list[int]:
    """The positions a result lists: the scored ones and the scored special tokens, in sequence order."""
    return sorted([*enc.positions, *enc.specials]) if enc.specials else list(enc.positions)


def special_flags(enc: Encoded) -> np.ndarray | None:
    """Per token of the result, whether it is a scored special token; None when the text has none."""
    if not enc.specials:
        return None
    specials = set(enc.specials)
    return np.asarray([p in specials for p in _order(enc)])


def token_fields(text: str, enc: Encoded) -> dict[str, Any]:
    """What a :class:`~pllscore.results.scores.SentenceScore` of ``enc`` lists per token and word: ``pieces``,
    ``offsets``, ``word_index``, ``word_spans`` and ``anchors`` (:attr:`Encoded.specials`: word -1, an empty
    span at the text's start or end, anchor -1)."""
    al = enc.reported
    word = dict(zip(al.positions, al.word_of))
    first = al.positions[0]
    spans = {p: (0, 0) if p < first else (len(text), len(text)) for p in enc.specials}
    order = _order(enc)
    return {
        "pieces": tuple(enc.pieces[p] for p in order),
        "offsets": tuple(spans[p] if p in spans else al.token_spans[p] for p in order),
        "word_index": np.asarray([word.get(p, -1) for p in order], dtype=np.int64),
        "word_spans": al.word_spans,
        "anchors": tuple(-1 if p in spans else al.anchors[p] for p in order),
    }
