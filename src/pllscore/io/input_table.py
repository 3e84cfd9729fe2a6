"""The texts to score: :class:`InputTable`, made from a file's rows once its text column is checked.

The checks are the same whether a file is read whole or in blocks: the text column is picked
(given, guessed, or the only one), every text cell must be a string, and empty or
whitespace-only texts are left out (``skip_empty``) or refused, every one of them listed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pllscore.errors import InputError
from pllscore.io.rows import Piece

__all__ = ["LIST_SOURCE", "InputTable", "TableSource", "input_tables", "numbered", "row_at", "rows_at"]

#: the source name of texts given as a list (``--text``, or a list in Python): messages number them as texts
LIST_SOURCE = "the texts given"


def numbered(numbers: Sequence[int], unit: str) -> str:
    """``"lines 2, 5"``: ``unit`` and the first ten numbers, then how many more."""
    more = f" and {len(numbers) - 10} more" if len(numbers) > 10 else ""
    return f"{unit} {', '.join(map(str, numbers[:10]))}{more}"


class TableSource(str):
    """A table's name, as messages show it, that also knows the line of the file each of its rows starts on.

    It is the name itself wherever a string is wanted; :func:`row_at` names a row by its line.
    """

    lines: tuple[int | None, ...]

    def __new__(cls, name: str, lines: Sequence[int | None]) -> TableSource:
        made = super().__new__(cls, name)
        made.lines = tuple(lines)
        return made


def row_at(source: str, i: int) -> str:
    """Row ``i`` (0-based) of ``source`` as a user finds it: ``"line 9 of data.csv"``, else ``"row 7 of data"``."""
    lines = getattr(source, "lines", ())
    line = lines[i] if i < len(lines) else None
    return f"line {line} of {source}" if line is not None else f"row {i} of {source}"


def rows_at(source: str, rows: Sequence[int]) -> str:
    """Rows (0-based) of ``source`` as :func:`row_at` names one: ``"lines 3, 9"``, else ``"rows 1, 7"``."""
    lines = getattr(source, "lines", ())
    if rows and all(i < len(lines) and lines[i] is not None for i in rows):
        return numbered([lines[i] for i in rows], "lines")  # type: ignore[misc]
    return numbered(rows, "rows")


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
        skipped_lines: their 1-based line numbers in the file (None where the format has no lines).
    """

    source: str
    frame: Any
    column: str
    rows: list[int]
    lines: list[int | None]
    skipped: list[int]
    skipped_lines: list[int | None] = field(default_factory=list)

    @property
    def texts(self) -> list[str]:
        return self.frame[self.column].tolist()

    def where(self, i: int) -> str:
        """``"line 12 of data.csv"`` (or row, for Parquet; text, for texts given as a list) for kept row ``i``."""
        line = self.lines[i]
        if line is not None:
            return f"line {line} of {self.source}"
        return f"{'text' if self.source == LIST_SOURCE else 'row'} {self.rows[i]} of {self.source}"

    def skipped_where(self) -> str:
        """The skipped texts, numbered as the refusal without ``skip_empty`` numbers them: ``"lines 2, 5"``
        (lines of the file), ``"rows 3"`` (0-based rows of a format without lines) or ``"texts 0"`` (a list)."""
        if self.skipped_lines and all(n is not None for n in self.skipped_lines):
            return numbered(self.skipped_lines, "lines")  # type: ignore[arg-type]
        return numbered(self.skipped, "texts" if self.source == LIST_SOURCE else "rows")


def input_tables(
    pieces: Iterator[Piece], column: str | None, source: str, kind: str, skip_empty: bool
) -> Iterator[InputTable]:
    """Pick the text column, check its cells, and drop (or refuse) empty texts, piece by piece.

    The checks are those of a whole-file read: once a piece fails one, the rest of the file is
    still read, so that a bad byte or line further on is reported first (a whole-file read
    meets it before any check), a bad cell before empty texts, and every empty text is listed.
    """
    first = 0  # the input row number of the piece's first row
    failed: InputError | None = None  # a column or cell error, reported once the file is read
    empties: list[int] = []  # line (or row, or text) numbers of empty texts, when they are an error
    unit = "lines"
    for frame, lines in pieces:
        if len(frame.columns) == 0 and len(frame) == 0:  # a JSON Lines file without records: no text, no key
            frame = frame.assign(**{column or "text": []})
        if failed is None:
            try:
                col = _pick_column(frame, column, source, kind)
                empty = _check(frame, col, source, lines, first)
            except InputError as e:
                failed = e
            else:
                if empty and not skip_empty:
                    if not empties:
                        unit = "texts" if source == LIST_SOURCE else "lines" if lines[empty[0]] is not None else "rows"
                    empties += [lines[i] if lines[i] is not None else first + i for i in empty]
                elif not empties:
                    yield _kept(frame, col, source, lines, empty, first)
        first += len(frame)
    if failed is not None:
        raise failed
    if empties:
        raise InputError(
            f"{source} {'have' if source == LIST_SOURCE else 'has'} empty or whitespace-only texts "
            f"({numbered(empties, unit)}); remove them or pass --skip-empty"
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
        skipped_lines=[lines[i] for i in empty],
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
