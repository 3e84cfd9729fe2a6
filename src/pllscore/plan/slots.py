"""The slot of a prediction: where in a text the model's expected word goes.

In: texts as the user writes them. Out: :class:`Slot` (the text around the slot).

A slot is written ``___`` (three underscores). A masked LM's text holds exactly one, anywhere: the
word is predicted from both sides. A causal LM's text is the context and the prediction is its next
word: a slot may be written, but then it must end the text. A run of underscores of another length
is not a slot; a text with no slot where one is needed, two slots, or text after a causal slot is a
one-line :class:`~pllscore.errors.InputError` naming the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pllscore.errors import InputError

__all__ = ["SLOT", "Slot", "find_slots"]

#: how a slot is written in a text
SLOT = "___"
_RUN = re.compile(r"_{3,}")


@dataclass(frozen=True)
class Slot:
    """One text around its slot: the word goes between ``left`` and ``right``.

    For a causal LM ``right`` is empty and ``left`` is the context without its trailing
    whitespace (the word follows it after one space, as ``score(left + " " + word)`` reads it).
    """

    text: str
    left: str
    right: str

    def fill(self, word: str, sep: str = "") -> str:
        """The text with ``word`` in the slot (``sep`` between ``left`` and the word, when ``left`` is not empty)."""
        return f"{self.left}{sep if self.left else ''}{word}{self.right}"

    def span(self, word: str, sep: str = "") -> tuple[int, int]:
        """The character span of ``word`` in :meth:`fill`."""
        start = len(self.left) + (len(sep) if self.left else 0)
        return start, start + len(word)


def _show(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def find_slots(texts: Sequence[str], kind: str) -> list[Slot]:
    """Each text's :class:`Slot` for a model of ``kind`` (``"masked"`` or ``"causal"``), checked."""
    slots = []
    for i, text in enumerate(texts):
        runs = list(_RUN.finditer(text))
        odd = [m.group() for m in runs if m.group() != SLOT]
        if odd:
            raise InputError(
                f"text {i} {_show(text)} has a run of {len(odd[0])} underscores; a slot is written with exactly "
                f"three ({SLOT})"
            )
        if len(runs) > 1:
            raise InputError(f"text {i} {_show(text)} has {len(runs)} slots ({SLOT}); write exactly one")
        if kind == "causal":
            slots.append(_causal(i, text, runs[0] if runs else None))
        elif not runs:
            raise InputError(
                f"text {i} {_show(text)} has no slot: a masked LM predicts the word written {SLOT} (one per text)"
            )
        else:
            slots.append(Slot(text, text[: runs[0].start()], text[runs[0].end() :]))
    return slots


def _causal(i: int, text: str, run: re.Match[str] | None) -> Slot:
    if run is not None and text[run.end() :].strip():
        raise InputError(
            f"text {i} {_show(text)} has text after its slot; a causal LM predicts the next word, so the slot "
            f"({SLOT}) must end the text (or leave it out)"
        )
    context = text if run is None else text[: run.start()]
    return Slot(text, context.rstrip(), "")
