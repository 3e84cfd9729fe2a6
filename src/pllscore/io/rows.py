"""The rows of an input file as read, before any check: one reader per format, cut into pieces.

Each piece is a DataFrame of consecutive rows and, per row, its 1-based line number in the file
(None where a format has no lines, as Parquet). The text column is not picked or checked here:
see :mod:`pllscore.io.input_table`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

from pllscore.errors import InputError
from pllscore.io.decoding import decoded, open_binary
from pllscore.io.delimited import delimited_pieces

__all__ = ["Piece", "read_pieces"]

Piece = tuple[Any, list[int | None]]  # rows of a file as read, and their line numbers


def read_pieces(name: str, kind: str, source: str, block_rows: int | None) -> Iterator[Piece]:
    """The file's rows, as read, in pieces of ``block_rows`` rows (None: one piece); at least one piece."""
    if kind == "parquet":
        import pandas as pd

        try:
            frame = pd.read_parquet(name)
        except Exception as e:  # pyarrow raises many types for a broken file
            raise InputError(f"cannot read {source} as Parquet ({_first_line(e)}); is it a Parquet file?") from e
        yield from _cut(frame, [None] * len(frame), block_rows)
    elif kind == "jsonl":
        with open_binary(name, source) as f:
            text = "".join(decoded(f, source))
        yield from _cut(*_read_jsonl(text, source), block_rows)
    elif kind == "txt":
        with open_binary(name, source) as f:
            yield from _txt_pieces(decoded(f, source), block_rows)
    else:
        with open_binary(name, source) as f:
            yield from delimited_pieces(decoded(f, source), source, kind, block_rows)


def _txt_pieces(chunks: Iterator[str], block_rows: int | None) -> Iterator[Piece]:
    """One text per line: split at ``\\n`` only, a ``\\r`` before it dropped; no empty last line."""
    import pandas as pd

    size = block_rows or sys.maxsize
    texts: list[str] = []
    start, tail, given = 1, "", False  # start: the line number of texts[0]
    for chunk in chunks:
        body = (tail + chunk).split("\n")
        tail = body.pop()  # after the last line end: the start of the next line
        for t in body:
            texts.append(t.rstrip("\r"))
            if len(texts) == size:
                yield pd.DataFrame({"text": texts}), list(range(start, start + size))
                texts, start, given = [], start + size, True
    if tail:
        texts.append(tail.rstrip("\r"))
    if texts or not given:
        yield pd.DataFrame({"text": texts}), list(range(start, start + len(texts)))


def _read_jsonl(text: str, source: str) -> Piece:
    import pandas as pd

    records, lines = [], []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"line {n} of {source} is not valid JSON ({e.msg}); fix or remove it") from None
        if not isinstance(rec, dict):
            raise InputError(f"line {n} of {source} is a JSON {type(rec).__name__}, not an object with a text field")
        records.append(rec)
        lines.append(n)
    return pd.DataFrame.from_records(records), lines  # type: ignore[return-value]


def _cut(frame: Any, lines: list[int | None], block_rows: int | None) -> Iterator[Piece]:
    if block_rows is None or len(frame) <= block_rows:
        yield frame, lines
        return
    for a in range(0, len(frame), block_rows):
        yield frame.iloc[a : a + block_rows].reset_index(drop=True), lines[a : a + block_rows]


def _first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else type(e).__name__
