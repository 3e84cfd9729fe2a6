"""The checks on what a scorer is asked to score: texts, contexts, the long-input mode and the convention.

Each returns what it checked, or raises a one-line :class:`~pllscore.errors.InputError` that says what is
wrong and how to fix it. :mod:`pllscore.scoring.encoding` re-exports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pllscore.errors import InputError
from pllscore.settings.fields import CONVENTIONS, LONG_MODES, check_choice

__all__ = ["CONVENTIONS", "LONG_MODES", "check_contexts", "check_convention", "check_long", "check_texts"]


def check_long(long: str) -> str:
    """``long`` if it is a known long-input mode (:data:`LONG_MODES`: what a scorer does with a text longer than
    the model allows), else an :class:`InputError`."""
    return check_choice("long", long)


def check_convention(convention: str) -> str:
    """``convention`` if it is a known one (:data:`CONVENTIONS`: the text as given, the paper's code, or as
    lm-evaluation-harness reads a continuation), else an :class:`InputError`."""
    return check_choice("convention", convention)


def check_texts(texts: str | Iterable[str], *, blank: bool = False) -> list[str]:
    """The texts as a list, or the :class:`InputError` naming the first one that cannot be scored.

    ``blank``: a text of whitespace only is allowed (lm-eval's continuation ``"\\n"``); an empty one never is.
    """
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
        if not t.strip() and not (blank and t):
            what = "empty" if not t else "whitespace only"
            raise InputError(f"text {i} is {what}; remove it or give it some words")
    return out


def check_contexts(context: str | Sequence[str] | None, n: int, sep: str) -> list[str] | None:
    """One context per text (None: no text has one), or the one-line :class:`InputError` saying what is wrong.

    ``context`` is one string for all ``n`` texts or a list of one string per text; ``""`` is no
    context (plain scoring).
    """
    if not isinstance(sep, str):
        raise InputError(f"sep must be a string (the separator between a context and its text), got {sep!r:.40}")
    if context is None:
        return None
    if isinstance(context, str):
        contexts = [context] * n
    elif isinstance(context, (bytes, bytearray)) or not isinstance(context, Iterable):
        raise InputError(f"context must be a string or a list of strings (one per text), got {type(context).__name__}")
    else:
        contexts = list(context)
        if len(contexts) != n:
            raise InputError(
                f"{len(contexts)} contexts for {n} texts; give one context per text, or one string for all"
            )
        for i, c in enumerate(contexts):
            if not isinstance(c, str):
                raise InputError(
                    f'context {i} is a {type(c).__name__} ({c!r:.40}), not a string; convert it with str() or use "" '
                    "for none"
                )
    return contexts if any(contexts) else None
