"""Read texts to score from txt, csv, tsv, jsonl or parquet files, or from stdin.

In: a path (or ``-``) and the name of the text column.
Out: :class:`InputTable`: the texts, the other columns to carry into the output, and the
line number of each row for error messages. Every problem with the file is an
:class:`~pllscore.errors.InputError` that names the file, the line and the fix.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pllscore.errors import InputError

__all__ = ["FORMATS", "InputTable", "detect_format", "read_input", "read_table"]

FORMATS = ("txt", "csv", "tsv", "jsonl", "parquet")
_SUFFIXES = {".txt": "txt", ".text": "txt", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl",
             ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet"}  # fmt: skip


@dataclass(frozen=True)
class InputTable:
    """Texts to score and what travels with them.

    Attributes:
        source: the file name, or ``<stdin>``.
        frame: one row per kept input row; the text column holds strings.
        column: the name of the text column in ``frame``.
        rows: per kept row, its 0-based row number in the input (stable across skips).
        lines: per kept row, its 1-based line number in the file (for messages), or None.
        skipped: input row numbers left out by ``skip_empty``.
    """

    source: str
    frame: Any
    column: str
    rows: list[int]
    lines: list[int | None]
    skipped: list[int]

    @property
    def texts(self) -> list[str]:
        return self.frame[self.column].tolist()

    def where(self, i: int) -> str:
        """``"line 12 of data.csv"`` (or row, for Parquet) for kept row ``i``."""
        line = self.lines[i]
        return f"line {line} of {self.source}" if line is not None else f"row {self.rows[i]} of {self.source}"


def detect_format(path: str | os.PathLike[str], given: str | None = None) -> str:
    """The file format from ``given`` or else from the file's extension."""
    if given is not None:
        if given.lower() not in FORMATS:
            raise InputError(f"unknown format {given!r}; choose from {', '.join(FORMATS)}")
        return given.lower()
    if os.fspath(path) == "-":
        return "txt"
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        raise InputError(
            f"cannot tell the format of {os.fspath(path)!r} from its extension; "
            f"use one of {', '.join(sorted(_SUFFIXES))} or pass --format"
        )
    return _SUFFIXES[suffix]


def read_input(
    path: str | os.PathLike[str] | Sequence[str],
    *,
    column: str | None = None,
    fmt: str | None = None,
    skip_empty: bool = False,
) -> InputTable:
    """Read the texts of a file (or ``-`` for stdin, one text per line).

    Args:
        path: the input file, or ``"-"``.
        column: the text column of a csv/tsv/jsonl/parquet file; by default ``sentence``,
            ``text`` or ``Sentence`` (the first that exists), or the only column.
        fmt: force a format instead of reading it from the extension.
        skip_empty: leave out empty or whitespace-only texts instead of failing.
    """
    import pandas as pd

    if not isinstance(path, (str, os.PathLike)):
        given = list(path)
        frame = pd.DataFrame({"text": given})
        return _finish(frame, column or "text", "<texts>", "list", [None] * len(given), skip_empty)
    name = os.fspath(path)
    kind = detect_format(name, fmt)
    source = "<stdin>" if name == "-" else name
    if name != "-" and not os.path.isfile(name):
        what = "is a folder, not a file" if os.path.isdir(name) else "not found"
        raise InputError(f"input file {name!r} {what}; check the path")

    lines: list[int | None]
    if kind == "parquet":
        try:
            frame = pd.read_parquet(name)
        except Exception as e:  # pyarrow raises many types for a broken file
            raise InputError(f"cannot read {source} as Parquet ({_first_line(e)}); is it a Parquet file?") from e
        lines = [None] * len(frame)
    else:
        raw = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
        text = _decode(raw, source)
        if kind == "txt":
            body = text.split("\n")
            if body and body[-1] == "":
                body.pop()
            frame = pd.DataFrame({"text": [t.rstrip("\r") for t in body]})
            lines = list(range(1, len(body) + 1))
        elif kind == "jsonl":
            frame, lines = _read_jsonl(text, source)
        else:
            frame, lines = _read_delimited(text, source, "," if kind == "csv" else "\t")

    return _finish(frame, column, source, kind, lines, skip_empty)


def _finish(
    frame: Any,
    column: str | None,
    source: str,
    kind: str,
    lines: list[int | None],
    skip_empty: bool,
    first_row: int = 0,
) -> InputTable:
    """Pick the text column, check its cells, and drop (or refuse) empty texts.

    ``first_row`` is the input row number of the frame's first row (for frames cut from a larger
    input); ``rows`` of the result and the row numbers in messages count from it.
    """
    col = _pick_column(frame, column, source, kind)
    texts = frame[col]
    bad_type = [i for i, t in enumerate(texts) if not isinstance(t, str) and not _is_missing(t)]
    if bad_type:
        i = bad_type[0]
        where = f"line {lines[i]}" if lines[i] is not None else f"row {first_row + i}"
        raise InputError(f"{where} of {source}: column {col!r} holds {type(texts.iloc[i]).__name__}, not text")
    empty = [i for i, t in enumerate(texts) if _is_missing(t) or not str(t).strip()]
    if empty and not skip_empty:
        shown = ", ".join(str(lines[i] if lines[i] is not None else first_row + i) for i in empty[:10])
        more = f" and {len(empty) - 10} more" if len(empty) > 10 else ""
        unit = "lines" if lines[empty[0]] is not None else "rows"
        raise InputError(
            f"{source} has empty or whitespace-only texts ({unit} {shown}{more}); remove them or pass --skip-empty"
        )
    keep = [i for i in range(len(frame)) if i not in set(empty)]
    kept = frame.iloc[keep].reset_index(drop=True)
    kept[col] = kept[col].astype(str)
    return InputTable(
        source=source,
        frame=kept,
        column=col,
        rows=[first_row + i for i in keep],
        lines=[lines[i] for i in keep],
        skipped=[first_row + i for i in empty],
    )


def _decode(raw: bytes, source: str) -> str:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise InputError(
            f"line {line} of {source} is not valid UTF-8 (byte 0x{raw[e.start]:02x} at column {col}); "
            "re-save the file as UTF-8"
        ) from None
    return text


def _read_jsonl(text: str, source: str) -> tuple[Any, list[int | None]]:
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


def _read_delimited(text: str, source: str, sep: str) -> tuple[Any, list[int | None]]:
    import pandas as pd

    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, quoting=0)
    except pd.errors.EmptyDataError:
        raise InputError(f"{source} is empty; it needs a header line and at least one row") from None
    except pd.errors.ParserError as e:
        raise InputError(f"cannot parse {source}: {_first_line(e)}; check its quoting and separators") from None
    # line numbers assume one physical line per row (header on line 1); quoted newlines shift them
    return frame, list(range(2, len(frame) + 2))


def _pick_column(frame: Any, column: str | None, source: str, kind: str) -> str:
    columns = [str(c) for c in frame.columns]
    if column is not None:
        if column in columns:
            return column
        if kind == "txt":
            raise InputError(f"{source} is plain text (one text per line) and has no columns; drop --column")
        raise InputError(f"column {column!r} not in {source}; its columns are: {', '.join(columns)}")
    for guess in ("sentence", "text", "Sentence", "Text", "sentences"):
        if guess in columns:
            return guess
    if len(columns) == 1:
        return columns[0]
    raise InputError(f"which column of {source} holds the text? pass --column; its columns are: {', '.join(columns)}")


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else type(e).__name__


def read_table(path: str | os.PathLike[str], *, fmt: str | None = None) -> Any:
    """Read a csv/tsv/jsonl/parquet table whole (all columns as read), with the same checks as :func:`read_input`."""
    name = os.fspath(path)
    kind = detect_format(name, fmt)
    if kind == "txt":
        raise InputError(f"{name!r} is plain text; minimal pairs need a table (csv, tsv, jsonl or parquet)")
    if not os.path.isfile(name):
        raise InputError(f"input file {name!r} not found; check the path")
    if kind == "parquet":
        import pandas as pd

        try:
            return pd.read_parquet(name)
        except Exception as e:  # pyarrow raises many types for a broken file
            raise InputError(f"cannot read {name} as Parquet ({_first_line(e)})") from e
    text = _decode(Path(name).read_bytes(), name)
    return (
        _read_jsonl(text, name) if kind == "jsonl" else _read_delimited(text, name, "," if kind == "csv" else "\t")
    )[0]
