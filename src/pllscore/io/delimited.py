"""CSV and TSV text to rows (a header line, then one row per record, each with its line in the file), and TSV out.

* CSV: RFC 4180 quoting (a quoted cell may hold commas, doubled quotes and line breaks).
* TSV: no quoting at all. A cell is the exact string between tabs: a quote is a character like
  any other, so ``"Hello," she said.`` is that string, and a lone ``"Hi,`` is read as written.

Every cell is the exact string in the file (no NA, number or date parsing; an empty cell is
``""``). Lines end at ``\\r\\n``, ``\\n`` or a lone ``\\r``; blank lines are no rows. Each row
carries the 1-based line of the file it starts on (the header is line 1, blank lines and line
breaks inside quoted cells counted), so that messages can name the line a user opens.
"""

from __future__ import annotations

import csv
import re
import sys
from collections.abc import Iterator
from typing import Any

from pllscore.errors import InputError

__all__ = ["delimited_pieces", "tsv_text"]

_LINE_END = re.compile(r"(\r\n|\n|\r)")


def delimited_pieces(chunks: Iterator[str], source: str, kind: str, block_rows: int | None) -> Iterator[Any]:
    """``(frame, lines)`` pieces of ``block_rows`` rows (None: one piece; at least one piece, for a header only)."""
    import pandas as pd

    records = _tsv_records(chunks) if kind == "tsv" else _csv_records(chunks, source)
    header_line, header = next(records, (0, None))
    if header is None:
        raise InputError(f"{source} is empty; it needs a header line and at least one row")
    if kind == "csv" and len(header) == 1 and "\t" in header[0]:
        raise InputError(
            f"{source} looks tab-separated (its header holds tabs and no comma); rename it to .tsv "
            "(or separate its columns with commas)"
        )
    columns = _column_names(header)
    size = block_rows or sys.maxsize
    rows: list[list[str | None]] = []
    lines: list[int | None] = []
    given = False
    for line, cells in records:
        if len(cells) > len(columns):
            fix = "separators" if kind == "tsv" else "quoting and separators"
            raise InputError(
                f"line {line} of {source} has {len(cells)} cells but its header (line {header_line}) has "
                f"{len(columns)}; check its {fix}"
            )
        rows.append(cells + [None] * (len(columns) - len(cells)))  # a short row: its last cells missing
        lines.append(line)
        if len(rows) == size:
            yield pd.DataFrame(rows, columns=columns, dtype=object), lines
            rows, lines, given = [], [], True
    if rows or not given:
        yield pd.DataFrame(rows, columns=columns, dtype=object), lines


def _physical_lines(chunks: Iterator[str]) -> Iterator[str]:
    """Each line with its end (``\\r\\n``, ``\\n`` or a lone ``\\r``); the last may have none."""
    tail = ""
    for chunk in chunks:
        parts = _LINE_END.split(tail + chunk)  # text, end, text, end, ..., text
        tail = parts.pop()
        if not tail and parts and parts[-1] == "\r":  # perhaps the first half of a \r\n the next chunk ends
            tail = parts.pop()
            tail = parts.pop() + tail
        for i in range(0, len(parts), 2):
            yield parts[i] + parts[i + 1]
    if tail:
        yield tail


def _tsv_records(chunks: Iterator[str]) -> Iterator[tuple[int, list[str]]]:
    for n, line in enumerate(_physical_lines(chunks), start=1):
        text = line[:-2] if line.endswith("\r\n") else line[:-1] if line.endswith(("\n", "\r")) else line
        if text:
            yield n, text.split("\t")


def _csv_records(chunks: Iterator[str], source: str) -> Iterator[tuple[int, list[str]]]:
    csv.field_size_limit(sys.maxsize)  # a cell may hold a whole story
    consumed: list[str] = []  # the lines of the record being read
    ended = [False]  # whether every line has been read

    def feed() -> Iterator[str]:
        for line in _physical_lines(chunks):
            consumed.append(line)
            yield line
        ended[0] = True

    reader = csv.reader(feed(), strict=False)
    while True:
        start = reader.line_num + 1
        consumed.clear()
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise InputError(f"cannot parse line {reader.line_num} of {source} ({e}); check its quoting") from None
        # the lenient reader reads a quoted cell never closed to the end of the file, silently
        if ended[0] and _unclosed(consumed):
            raise InputError(
                f"line {start} of {source} opens a quoted cell that is never closed; "
                'close it with " (and double each quote inside it: "")'
            )
        if cells:
            yield start, cells


def _unclosed(lines: list[str]) -> bool:
    """Whether a record's lines end inside a quoted cell."""
    try:
        for _ in csv.reader(iter(lines), strict=True):
            pass
    except csv.Error as e:
        return "unexpected end of data" in str(e)
    return False


def _column_names(header: list[str]) -> list[str]:
    """The header's names as pandas gives them: an empty one ``Unnamed: i``, a repeated one ``name.1``, ..."""
    names: list[str] = []
    seen: dict[str, int] = {}
    for i, name in enumerate(header):
        name = name or f"Unnamed: {i}"
        if name in seen:
            seen[name] += 1
            while f"{name}.{seen[name]}" in seen:
                seen[name] += 1
            name = f"{name}.{seen[name]}"
        seen.setdefault(name, 0)
        names.append(name)
    return names


def tsv_text(frame: Any, header: bool) -> str:
    """``frame`` as TSV that a literal reader (this module's, R's ``quote = ""``, pandas' ``quoting=3``) reads back.

    Each cell is written as it is, quotes included. A cell holding a tab or a line break, which a
    TSV cell cannot hold, is the one exception: it is quoted as in CSV (``"a<TAB>b"``); such texts
    are better written as CSV, JSON Lines or Parquet.
    """
    import csv

    from pandas.api.types import is_numeric_dtype

    cells = {c: frame[c] for c in frame.columns if not is_numeric_dtype(frame[c].dtype)}
    odd = {c: v.map(_breaks_tsv) for c, v in cells.items()}
    odd = {c: m for c, m in odd.items() if m.any()}
    names = [str(c) for c in frame.columns]
    if not odd and not (header and any(map(_breaks_tsv, names))):
        return str(frame.to_csv(index=False, header=header, sep="\t", lineterminator="\n", quoting=csv.QUOTE_NONE))
    # stand-ins without tabs or line breaks go through the writer, then become the quoted cells
    mark = next(chr(m) for m in range(0xE000, 0xF8FF) if not _anywhere(chr(m), cells, names))
    quoted: dict[str, str] = {}

    def stand_in(value: str) -> str:
        key = f"{mark}{len(quoted)}{mark}"
        quoted[key] = '"' + value.replace('"', '""') + '"'
        return key

    frame = frame.copy()
    for c, m in odd.items():
        frame.loc[m, c] = frame.loc[m, c].map(stand_in)
    frame.columns = [stand_in(n) if _breaks_tsv(n) else n for n in names]
    text = str(frame.to_csv(index=False, header=header, sep="\t", lineterminator="\n", quoting=csv.QUOTE_NONE))
    return re.sub(f"{mark}[0-9]+{mark}", lambda k: quoted[k.group(0)], text)


def _breaks_tsv(value: Any) -> bool:
    return isinstance(value, str) and ("\t" in value or "\n" in value or "\r" in value)


def _anywhere(char: str, cells: dict[Any, Any], names: list[str]) -> bool:
    return any(char in n for n in names) or any(
        v.map(lambda x: isinstance(x, str) and char in x).any() for v in cells.values()
    )
