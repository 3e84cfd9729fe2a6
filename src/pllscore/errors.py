"""Errors raised by pllscore.

Every message names the bad value and what to do about it, in one line::

    PllscoreError
    ├── InputError            bad text or option (empty text, non-string item, unknown metric)
    │   └── InputTooLongError  text longer than the model allows
    └── ModelError            model cannot be found, loaded or used the way asked
        └── NonFiniteError     the model gave a NaN or infinite log-probability
"""

from __future__ import annotations

__all__ = ["InputError", "InputTooLongError", "ModelError", "NonFiniteError", "PllscoreError"]


class PllscoreError(Exception):
    """Base class of every error pllscore raises on purpose."""


class InputError(PllscoreError, ValueError):
    """The text or an option given to pllscore cannot be used."""


class InputTooLongError(InputError):
    """A text has more tokens than the model's maximum input length.

    ``part``: which part of the text is too long (an encoder-decoder LM's ``"source"`` or ``"text"``), or None
    for the text itself; ``windows``: whether scoring in windows (``long='window'``) is the other fix.
    """

    def __init__(self, index: int, n_tokens: int, limit: int, *, part: str | None = None, windows: bool = True) -> None:
        self.index, self.n_tokens, self.limit, self.part, self.windows = index, n_tokens, limit, part, windows
        what = f"text {index}" if part is None else f"the {part} of text {index}"
        fix = ", or score it in windows with long='window'" if windows else ""
        super().__init__(
            f"{what} is {n_tokens} tokens long (special tokens included) but the model "
            f"allows at most {limit}; shorten or split it{fix}"
        )


class ModelError(PllscoreError):
    """A model cannot be found, loaded, or used for the requested kind of scoring."""


class NonFiniteError(ModelError):
    """A text got a NaN or infinite log-probability (a float16 overflow, NaN weights): never scored as a number.

    ``index`` is the text's position in the call; ``where`` (optional) names it another way, e.g.
    by its sentence, and replaces "text <index>" in the message.
    """

    def __init__(self, index: int, value: float, dtype: str, *, where: str | None = None, suffix: str = "") -> None:
        self.index, self.value, self.dtype = index, value, dtype
        if dtype == "float16":
            fix = "score in float32 (the default) or bfloat16 (float16 overflows past 65504)"
        elif dtype == "bfloat16":
            fix = "score in float32 (the default)"
        else:
            fix = "the model itself gives non-finite logits: check its weights for NaN or inf (a diverged checkpoint?)"
        super().__init__(
            f"{where or f'text {index}'} got a non-finite log-probability ({value}) under dtype {dtype}; {fix}{suffix}"
        )
