"""Errors raised by pllscore.

Every message names the bad value and what to do about it, in one line::

    PllscoreError
    ├── InputError            bad text or option (empty text, non-string item, unknown metric)
    │   └── InputTooLongError  text longer than the model allows
    └── ModelError            model cannot be found, loaded or used the way asked
"""

from __future__ import annotations

__all__ = ["InputError", "InputTooLongError", "ModelError", "PllscoreError"]


class PllscoreError(Exception):
    """Base class of every error pllscore raises on purpose."""


class InputError(PllscoreError, ValueError):
    """The text or an option given to pllscore cannot be used."""


class InputTooLongError(InputError):
    """A text has more tokens than the model's maximum input length."""

    def __init__(self, index: int, n_tokens: int, limit: int) -> None:
        self.index, self.n_tokens, self.limit = index, n_tokens, limit
        super().__init__(
            f"text {index} is {n_tokens} tokens long (special tokens included) but the model "
            f"allows at most {limit}; shorten or split it, or score it in windows with long='window'"
        )


class ModelError(PllscoreError):
    """A model cannot be found, loaded, or used for the requested kind of scoring."""
