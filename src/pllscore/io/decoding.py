"""Bytes to text for the readers: a file (or stdin) decoded as UTF-8 in pieces that end at line ends.

Decoding in pieces gives the same text, and the same error for a bad byte (its line and
column), as decoding the whole file at once, so a large file is never held as bytes and text
together.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from pllscore.errors import InputError

__all__ = ["decoded", "open_binary"]

_BOM = b"\xef\xbb\xbf"
_READ = 1 << 20  # bytes read from a text file at a time


def open_binary(name: str, source: str) -> Any:
    """A context manager over the file ``name`` opened for reading bytes (stdin's bytes for ``-``)."""
    if name == "-":
        return contextlib.nullcontext(sys.stdin.buffer)
    try:
        return open(name, "rb")
    except OSError as e:
        raise InputError(f"cannot read {source}: {e.strerror}; check its permissions") from None


def decoded(f: Any, source: str) -> Iterator[str]:
    """The text of a binary stream, decoded as UTF-8 in pieces that end at line ends; a leading BOM dropped.

    The same text, and the same error, as decoding the whole file at once: UTF-8 has no ``\\n``
    byte inside a character, so cutting after ``\\n`` cuts no character.
    """
    line, first, rest = 1, True, b""
    while True:
        data = f.read(_READ)
        buf = rest + data
        if data:
            cut = buf.rfind(b"\n") + 1
            if not cut:  # no line end yet: read on
                rest = buf
                continue
            buf, rest = buf[:cut], buf[cut:]
        if first:  # the piece starts at the file's first byte and runs to a line end or the end
            first = False
            if buf.startswith(_BOM):
                buf = buf[len(_BOM) :]
        try:
            text = buf.decode("utf-8")
        except UnicodeDecodeError as e:
            at = line + buf.count(b"\n", 0, e.start)
            col = e.start - (buf.rfind(b"\n", 0, e.start) + 1) + 1
            raise InputError(
                f"line {at} of {source} is not valid UTF-8 (byte 0x{buf[e.start]:02x} at column {col}); "
                "re-save the file as UTF-8"
            ) from None
        line += buf.count(b"\n")
        if text:
            yield text
        if not data:
            return
