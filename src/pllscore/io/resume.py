"""Whether a run may continue an earlier one: the settings that must match, and the refusal when one does not."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pllscore.errors import InputError

__all__ = ["RESUME_KEYS", "check_resume"]

# settings that must match for --resume to continue a file: anything that changes a number or a row
RESUME_KEYS = ("input_sha256", "n_input_rows", "model", "revision", "model_fingerprint", "metrics", "level",
               "format", "column", "id_column", "base", "surprisal", "skip_empty", "chunk_size", "dtype", "bos",
               "long", "stride", "pllscore")  # fmt: skip

_HASH = re.compile(r"^([a-z0-9]+:)?([0-9a-f]{32,})$")
_MISSING = object()


def _shown(value: Any) -> str:
    """A setting's value for a message: hashes cut to 12 hex digits, long values cut short."""
    if value is _MISSING:
        return "(not recorded)"
    if isinstance(value, str):
        m = _HASH.match(value)
        if m:
            return f"{m.group(1) or ''}{m.group(2)[:12]}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_resume(old: Mapping[str, Any], new: Mapping[str, Any], keys: Iterable[str], what: str) -> None:
    """Refuse to continue ``what`` when a setting in ``keys`` differs between the first run and this one."""
    for key in keys:
        before, now = old.get(key, _MISSING), new.get(key, _MISSING)
        if before != now:
            raise InputError(
                f"cannot resume {what}: it was made with {key}={_shown(before)}, this run has {key}={_shown(now)}; "
                "rerun with the same input, model and options, or use --force to start over"
            )
