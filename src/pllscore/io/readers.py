"""Read texts to score from txt, csv, tsv, jsonl or parquet files, or from stdin.

In: a path (or ``-``) and the name of the text column.
Out: :class:`InputTable`: the texts, the other columns to carry into the output, and the
line number of each row for error messages. Every problem with the file is an
:class:`~pllscore.errors.InputError` that names the file, the line and the fix.

Both engines read through here: the local engine takes a whole file (:func:`read_input`), the
Ray engine the same rows cut into blocks (:func:`read_blocks`), so a file gives the same rows,
cells, row numbers and errors either way. What a row is:

* ``.txt``: one text per line. Lines end at ``\\n`` only (``\\r`` before it is dropped); a
  UTF-8 byte order mark at the start of the file is dropped; every other character (tabs, form
  feeds, U+0085, U+2028, trailing spaces) stays in the text.
* ``.csv``/``.tsv``: a header line, then one row per record (quoted cells may hold the
  separator, quotes and newlines). Every cell is the exact string in the file: ``NA``,
  ``null``, ``007``, ``2024-01-01`` and ``True`` stay text, an empty cell is ``""``.
* ``.jsonl``: one JSON object per non-blank line; values keep their JSON types, and the
  columns are the keys of the whole file in order of first appearance.
* ``.parquet``: the rows, columns and types of the file.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.io.formats import INPUT_FORMATS as FORMATS
from pllscore.io.formats import INPUT_SUFFIXES as _SUFFIXES

__all__ = ["FORMATS", "InputTable", "detect_format", "read_blocks", "read_input", "read_table"]

_BOM = b"\xef\xbb\xbf"
_READ = 1 << 20  # bytes read from a text file at a time
_Piece = tuple[Any, list[int | None]]  # rows of a file as read, and their line numbers


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
    if not isinstance(path, (str, os.PathLike)):
        import pandas as pd

        given = list(path)
        piece = (pd.DataFrame({"text": given}), [None] * len(given))
        (table,) = _tables(iter([piece]), column or "text", "<texts>", "list", skip_empty)
        return table
    (table,) = read_blocks(path, column=column, fmt=fmt, skip_empty=skip_empty)
    return table


def read_blocks(
    path: str | os.PathLike[str],
    *,
    column: str | None = None,
    fmt: str | None = None,
    skip_empty: bool = False,
    block_rows: int | None = None,
) -> Iterator[InputTable]:
    """Read a file as consecutive blocks of ``block_rows`` input rows each (the last may be shorter).

    The blocks together are exactly what :func:`read_input` returns: the same rows, cells,
    ``rows`` (counted from the file's first row) and line numbers, and the same error for a bad
    file (the first bad byte, line or cell of the file; every empty text listed). Block ``k``
    holds input rows ``k*block_rows`` onwards, skipped empty texts included, so its rows are
    the same in every run. Plain text and csv/tsv are streamed, one block in memory at a time;
    jsonl and Parquet are read whole first, as their columns and column types depend on every
    row. ``block_rows=None`` gives one block with every row (at least one block, even for an
    empty file).
    """
    if block_rows is not None and block_rows < 1:
        raise InputError(f"block_rows must be positive, got {block_rows}")
    name = os.fspath(path)
    kind = detect_format(name, fmt)
    source = "<stdin>" if name == "-" else name
    if name != "-" and not os.path.isfile(name):
        what = "is a folder, not a file" if os.path.isdir(name) else "not found"
        raise InputError(f"input file {name!r} {what}; check the path")
    return _tables(_pieces(name, kind, source, block_rows), column, source, kind, skip_empty)


def read_table(path: str | os.PathLike[str], *, fmt: str | None = None) -> Any:
    """Read a csv/tsv/jsonl/parquet table whole (all columns as read), with the same checks as :func:`read_input`."""
    name = os.fspath(path)
    kind = detect_format(name, fmt)
    if kind == "txt":
        raise InputError(f"{name!r} is plain text; minimal pairs need a table (csv, tsv, jsonl or parquet)")
    if not os.path.isfile(name):
        raise InputError(f"input file {name!r} not found; check the path")
    ((frame, _),) = _pieces(name, kind, name, None)
    return frame


# --- rows as read -------------------------------------------------------------------------


def _pieces(name: str, kind: str, source: str, block_rows: int | None) -> Iterator[_Piece]:
    """The file's rows, as read, in pieces of ``block_rows`` rows (None: one piece); at least one piece."""
    if kind == "parquet":
        import pandas as pd

        try:
            frame = pd.read_parquet(name)
        except Exception as e:  # pyarrow raises many types for a broken file
            raise InputError(f"cannot read {source} as Parquet ({_first_line(e)}); is it a Parquet file?") from e
        yield from _cut(frame, [None] * len(frame), block_rows)
    elif kind == "jsonl":
        with _binary(name, source) as f:
            text = "".join(_decoded(f, source))
        yield from _cut(*_read_jsonl(text, source), block_rows)
    elif kind == "txt":
        with _binary(name, source) as f:
            yield from _txt_pieces(_decoded(f, source), block_rows)
    else:
        sep = "," if kind == "csv" else "\t"
        with _binary(name, source) as f:
            # pandas' parser, read in chunks, can fail where a whole read does not when a lone \r
            # ends lines (old Mac files): such files, and stdin, are read whole and then cut
            stream = block_rows is not None and name != "-" and not _lone_cr(name)
            if stream:
                yield from _delimited_pieces(_decoded(f, source), source, sep, block_rows)
            else:
                ((frame, lines),) = _delimited_pieces(_decoded(f, source), source, sep, None)
        if not stream:
            yield from _cut(frame, lines, block_rows)


def _binary(name: str, source: str) -> Any:
    if name == "-":
        return contextlib.nullcontext(sys.stdin.buffer)
    try:
        return open(name, "rb")
    except OSError as e:
        raise InputError(f"cannot read {source}: {e.strerror}; check its permissions") from None


def _lone_cr(name: str) -> bool:
    """Whether a file has a ``\\r`` not followed by ``\\n``."""
    with open(name, "rb") as f:
        last = b""
        while data := f.read(_READ):
            buf = last + data
            if buf.count(b"\r") != buf.count(b"\r\n") + buf.endswith(b"\r"):
                return True
            last = buf[-1:]
    return last == b"\r"


def _decoded(f: Any, source: str) -> Iterator[str]:
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


def _txt_pieces(chunks: Iterator[str], block_rows: int | None) -> Iterator[_Piece]:
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


class _TextStream(io.TextIOBase):
    """A readable text stream over decoded pieces, for pandas' CSV parser."""

    def __init__(self, chunks: Iterator[str]) -> None:
        super().__init__()
        self._chunks, self._buf = chunks, ""

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        if size is None or size < 0:
            out, self._buf = self._buf + "".join(self._chunks), ""
            return out
        while len(self._buf) < size:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._buf += chunk
        out, self._buf = self._buf[:size], self._buf[size:]
        return out


def _delimited_pieces(chunks: Iterator[str], source: str, sep: str, block_rows: int | None) -> Iterator[_Piece]:
    """A header line, then rows; every cell the exact string in the file (no NA, number or date parsing)."""
    import pandas as pd

    opts: dict[str, Any] = {"sep": sep, "dtype": str, "keep_default_na": False, "quoting": 0}
    first = 0
    try:
        stream = _TextStream(chunks)
        frames = (
            [pd.read_csv(stream, **opts)] if block_rows is None else pd.read_csv(stream, chunksize=block_rows, **opts)
        )
        for frame in frames:
            # line numbers assume one physical line per row (header on line 1); quoted newlines shift them
            yield frame.reset_index(drop=True), list(range(first + 2, first + 2 + len(frame)))
            first += len(frame)
    except pd.errors.EmptyDataError:
        raise InputError(f"{source} is empty; it needs a header line and at least one row") from None
    except pd.errors.ParserError as e:
        raise InputError(f"cannot parse {source}: {_first_line(e)}; check its quoting and separators") from None


def _read_jsonl(text: str, source: str) -> _Piece:
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


def _cut(frame: Any, lines: list[int | None], block_rows: int | None) -> Iterator[_Piece]:
    if block_rows is None or len(frame) <= block_rows:
        yield frame, lines
        return
    for a in range(0, len(frame), block_rows):
        yield frame.iloc[a : a + block_rows].reset_index(drop=True), lines[a : a + block_rows]


# --- checks -------------------------------------------------------------------------------


def _tables(
    pieces: Iterator[_Piece], column: str | None, source: str, kind: str, skip_empty: bool
) -> Iterator[InputTable]:
    """Pick the text column, check its cells, and drop (or refuse) empty texts, piece by piece.

    The checks are those of a whole-file read: once a piece fails one, the rest of the file is
    still read, so that a bad byte or line further on is reported first (a whole-file read
    meets it before any check), a bad cell before empty texts, and every empty text is listed.
    """
    first = 0  # the input row number of the piece's first row
    failed: InputError | None = None  # a column or cell error, reported once the file is read
    empties: list[int] = []  # line (or row) numbers of empty texts, when they are an error
    unit = "lines"
    for frame, lines in pieces:
        if failed is None:
            try:
                col = _pick_column(frame, column, source, kind)
                empty = _check(frame, col, source, lines, first)
            except InputError as e:
                failed = e
            else:
                if empty and not skip_empty:
                    unit = unit if empties or lines[empty[0]] is not None else "rows"
                    empties += [lines[i] if lines[i] is not None else first + i for i in empty]
                elif not empties:
                    yield _kept(frame, col, source, lines, empty, first)
        first += len(frame)
    if failed is not None:
        raise failed
    if empties:
        more = f" and {len(empties) - 10} more" if len(empties) > 10 else ""
        raise InputError(
            f"{source} has empty or whitespace-only texts ({unit} {', '.join(map(str, empties[:10]))}{more}); "
            "remove them or pass --skip-empty"
        )


def _kept(frame: Any, col: str, source: str, lines: list[int | None], empty: list[int], first: int) -> InputTable:
    gone = set(empty)
    keep = [i for i in range(len(frame)) if i not in gone]
    kept = frame.iloc[keep].reset_index(drop=True)
    kept[col] = kept[col].astype(str)
    return InputTable(
        source=source,
        frame=kept,
        column=col,
        rows=[first + i for i in keep],
        lines=[lines[i] for i in keep],
        skipped=[first + i for i in empty],
    )


def _check(frame: Any, col: str, source: str, lines: list[int | None], first: int) -> list[int]:
    """Refuse a text cell that is not a string; return the positions of empty or whitespace-only texts."""
    texts = frame[col]
    for i, t in enumerate(texts):
        if not isinstance(t, str) and not _is_missing(t):
            raise InputError(
                f"{_where(lines, first, i)} of {source}: column {col!r} holds {type(t).__name__}, not text"
            )
    return [i for i, t in enumerate(texts) if _is_missing(t) or not str(t).strip()]


def _where(lines: list[int | None], first: int, i: int) -> str:
    return f"line {lines[i]}" if lines[i] is not None else f"row {first + i}"


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
