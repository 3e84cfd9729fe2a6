"""A :class:`~pllscore.results.scores.SentenceScore` whose per-token fields are made when first read.

A text's scores are known once the model has run, but its pieces, character spans, words and anchors come
from its alignment, which on a small model costs the host more than the scores, and which a run that reads
only totals never needs. :func:`lazy_score` gives a SentenceScore that holds the scores and a function that
makes the rest: the first read of ``pieces``, ``offsets``, ``word_index``, ``word_spans`` or ``anchors``
calls it once (per copy), and from then on they are ordinary attributes. ``n_tokens`` and ``n_words`` are known
without it. A copy in another unit (``view``) shares the function; a pickled or copied one is a plain
:class:`SentenceScore` with every field made.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from pllscore.results.scores import SentenceScore

__all__ = ["LazyScore", "lazy_score"]

#: the fields the function makes, all at once
TOKEN_FIELDS = ("pieces", "offsets", "word_index", "word_spans", "anchors")
# the other fields, each with its default (MISSING: none)
_GIVEN = tuple((f.name, f.default) for f in dataclasses.fields(SentenceScore) if f.name not in TOKEN_FIELDS)


class _Made:
    """A field of :data:`TOKEN_FIELDS`: on first read, every one of them is made and stored on the instance."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        make, *args = obj.__dict__["_make"]
        made = make(*args)
        for name in TOKEN_FIELDS:  # the instance's own entries win over this descriptor from now on
            obj.__dict__.setdefault(name, made[name])
        return obj.__dict__[self.name]


class LazyScore(SentenceScore):
    """A :class:`SentenceScore` made by :func:`lazy_score` (see the module's docstring)."""

    pieces = _Made()  # type: ignore[assignment]
    offsets = _Made()  # type: ignore[assignment]
    word_index = _Made()  # type: ignore[assignment]
    word_spans = _Made()  # type: ignore[assignment]
    anchors = _Made()  # type: ignore[assignment]

    @property
    def n_tokens(self) -> int:
        return len(self.logprobs)

    @property
    def n_words(self) -> int:
        known = getattr(self, "_n_words", None)
        return known if known is not None else len(self.word_spans)

    def _with(self, **changes: Any) -> SentenceScore:
        out = object.__new__(LazyScore)
        for name, value in {**vars(self), **changes}.items():
            object.__setattr__(out, name, value)
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return (_plain, ({f.name: getattr(self, f.name) for f in dataclasses.fields(SentenceScore)},))


def _plain(values: dict[str, Any]) -> SentenceScore:
    return SentenceScore(**values)


def lazy_score(
    make: Callable[..., dict[str, Any]], args: tuple[Any, ...], *, n_words: int, **values: Any
) -> SentenceScore:
    """A :class:`SentenceScore` of ``values`` (every field but :data:`TOKEN_FIELDS`, as keywords; those left out
    take their defaults), whose :data:`TOKEN_FIELDS` ``make(*args)`` returns when one is first read (once per
    copy); ``n_words`` is ``len(word_spans)``."""
    out = object.__new__(LazyScore)
    # attributes set one by one, never through __dict__: the instance then keeps them inline, without a dict
    # of its own (one object fewer for the garbage collector to follow, per text)
    put = object.__setattr__
    for name, default in _GIVEN:
        if name not in values and default is dataclasses.MISSING:
            raise TypeError(f"lazy_score() needs the field {name!r}")
        put(out, name, values.pop(name) if name in values else default)
    if values:
        raise TypeError(f"lazy_score() got unexpected fields {sorted(values)}")
    put(out, "_make", (make, *args))
    put(out, "_n_words", n_words)
    put(out, "logprobs", np.asarray(out.logprobs, dtype=np.float64))
    return out
