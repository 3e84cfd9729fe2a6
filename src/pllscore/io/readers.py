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
* ``.csv``: a header line, then one row per record (quoted cells may hold commas, doubled
  quotes and newlines). ``.tsv``: a header line, then one row per line, cells split at tabs
  and never unquoted (``"Hello," she said.`` is that string). Every cell is the exact string
  in the file: ``NA``, ``null``, ``007``, ``2024-01-01`` and ``True`` stay text, an empty
  cell is ``""``; blank lines are no rows. A ``.csv`` whose header holds tabs and no comma is
  refused (it is a TSV file misnamed).
* ``.jsonl``: one JSON object per non-blank line; values keep their JSON types, and the
  columns are the keys of the whole file in order of first appearance.
* ``.parquet``: the rows, columns and types of the file.

The reading is done in layers, each its own module: :mod:`pllscore.io.formats` names the format,
:mod:`pllscore.io.decoding` turns bytes into text, :mod:`pllscore.io.rows` turns text into rows
per format (:mod:`pllscore.io.delimited` for CSV and TSV), and :mod:`pllscore.io.input_table`
picks and checks the text column.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from pllscore.errors import InputError
from pllscore.io.formats import INPUT_FORMATS as FORMATS
from pllscore.io.formats import detect_format
from pllscore.io.input_table import LIST_SOURCE, InputTable, TableSource, input_tables
from pllscore.io.rows import read_pieces

__all__ = ["FORMATS", "InputTable", "detect_format", "read_blocks", "read_input", "read_located_table", "read_table"]


def read_input(
    path: str | os.PathLike[str] | Sequence[str],
    *,
    column: str | None = None,
    fmt: str | None = None,
    skip_empty: bool = False,
) -> InputTable:
    """Read the texts of a file (or ``-`` for stdin, one text per line).

    Args:
        path: the input file, ``"-"``, a list of texts, or a DataFrame (its text ``column``, the others kept).
        column: the text column of a csv/tsv/jsonl/parquet file; by default ``sentence``,
            ``text`` or ``Sentence`` (the first that exists), or the only column.
        fmt: force a format instead of reading it from the extension.
        skip_empty: leave out empty or whitespace-only texts instead of failing.
    """
    if not isinstance(path, (str, os.PathLike)):
        import pandas as pd

        frame = path.reset_index(drop=True) if isinstance(path, pd.DataFrame) else pd.DataFrame({"text": list(path)})
        piece = (frame, [None] * len(frame))
        (table,) = input_tables(iter([piece]), column or "text", LIST_SOURCE, "list", skip_empty)
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
    return input_tables(read_pieces(name, kind, source, block_rows), column, source, kind, skip_empty)


def read_table(path: str | os.PathLike[str], *, fmt: str | None = None) -> Any:
    """Read a csv/tsv/jsonl/parquet table whole (all columns as read), with the same checks as :func:`read_input`."""
    return read_located_table(path, fmt=fmt)[0]


def read_located_table(path: str | os.PathLike[str], *, fmt: str | None = None) -> tuple[Any, TableSource]:
    """:func:`read_table`, and the file's name knowing each row's line (for :func:`~pllscore.io.input_table.row_at`)."""
    name = os.fspath(path)
    kind = detect_format(name, fmt)
    if kind == "txt":
        raise InputError(f"{name!r} is plain text; this needs a table (csv, tsv, jsonl or parquet)")
    if not os.path.isfile(name):
        raise InputError(f"input file {name!r} not found; check the path")
    ((frame, lines),) = read_pieces(name, kind, name, None)
    return frame, TableSource(name, lines)
