"""The word table of a reading-time study: one row per displayed word (or per word and reader), checked.

A table is read whole (:func:`pllscore.io.readers.read_table`: CSV and TSV cells as text, so a word
``None`` or ``NA`` stays that word) or from the Natural Stories folder (``processed_wordinfo.tsv`` beside
``all_stories.tok``). :func:`read_word_table` returns it sorted: texts in the order they first appear in
the input (Natural Stories: its stories in reading order), words by position, readers in first-seen order.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.io.input_table import row_at

__all__ = ["MISSING", "NATURAL_STORIES", "WordTable", "read_word_table"]

#: the two files that make a folder the Natural Stories data, and its columns
NATURAL_STORIES = {
    "files": ("processed_wordinfo.tsv", "all_stories.tok"),
    "text": "item",
    "position": "zone",
    "word": "word",
    "measure": "meanItemRT",
}
#: measure cells read as missing (the row is not fitted); any other cell that is not a number is an error
MISSING = ("", "NA", "NaN", "nan", "N/A", "null", "None")

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class WordTable:
    """The checked rows: ``frame`` has the columns ``text`` (str), ``position`` (a number), ``word`` (str),
    the ``measures`` (float, NaN where missing) and ``subject`` (str) when there are readers; sorted.
    ``texts``: the text ids in input order; ``source``: what was read; ``rows``: the input row (0-based) of
    each row of ``frame`` (readers' rows averaged into one: the first reader's)."""

    frame: Any
    measures: tuple[str, ...]
    texts: tuple[str, ...]
    subject: bool
    source: str
    rows: tuple[int, ...] = ()

    def words(self) -> Any:
        """One row per displayed word (``text``, ``position``, ``word``), in order: the readers' rows merged."""
        if not self.subject:
            return self.frame[["text", "position", "word"]].reset_index(drop=True)
        return self.frame.drop_duplicates(["text", "position"])[["text", "position", "word"]].reset_index(drop=True)


def is_natural_stories(path: PathLike) -> bool:
    """Whether ``path`` is a folder with the two Natural Stories files."""
    p = Path(path)
    return p.is_dir() and all((p / f).is_file() for f in NATURAL_STORIES["files"])


def read_word_table(
    data: PathLike | Any,
    *,
    measures: Sequence[str] | None = None,
    text_column: str | None = None,
    position_column: str | None = None,
    word_column: str | None = None,
    subject_column: str | None = None,
    allow_gaps: bool = False,
) -> WordTable:
    """Read and check a word table (a file, a Natural Stories folder, or a pandas DataFrame).

    Args:
        data: a CSV, TSV, JSONL or Parquet file, the Natural Stories folder, or a DataFrame.
        measures: the reading-time columns (Natural Stories: ``meanItemRT`` by default).
        text_column, position_column, word_column: the columns of the text id, the word's position in its
            text and the word as displayed (Natural Stories: ``item``, ``zone``, ``word`` by default).
        subject_column: the reader of each row, for per-reader rows.
        allow_gaps: a text's positions may skip numbers (words left out of the table on purpose).

    Raises:
        InputError: a missing column, a non-numeric or fractional position, a non-numeric measure, an empty
            word or text, a word with whitespace inside, duplicate positions in a text (per reader), one
            position shown as two words, or (without ``allow_gaps``) positions that skip a number.
    """
    import pandas as pd

    ns = not isinstance(data, pd.DataFrame) and is_natural_stories(data)
    frame, source, order = _frame(data, ns)
    columns = {
        "text": text_column or (NATURAL_STORIES["text"] if ns else None),
        "position": position_column or (NATURAL_STORIES["position"] if ns else None),
        "word": word_column or (NATURAL_STORIES["word"] if ns else None),
    }
    chosen = list(measures) if measures else ([NATURAL_STORIES["measure"]] if ns else [])
    for role, name in columns.items():
        if name is None:
            raise InputError(f"name the {role} column of {source}: --{role}-column NAME")
    if not chosen:
        raise InputError(f"name the reading-time column(s) of {source}: --measure NAME (repeatable)")
    if len(set(chosen)) < len(chosen):
        raise InputError(f"a measure is named twice: {', '.join(chosen)}")
    needed = [*columns.values(), *chosen, *([subject_column] if subject_column else [])]
    for name in needed:
        if name not in frame.columns:
            cols = ", ".join(map(str, frame.columns))
            raise InputError(f"column {name!r} not in {source}; its columns are: {cols}")
    reserved = {"text", "position", "word", "subject", "length", "zipf"}
    for m in chosen:
        if m in reserved and m not in (columns["text"], columns["position"], columns["word"]):
            raise InputError(f"measure column {m!r} has the name of an output column; rename it")
    out = pd.DataFrame(
        {
            "text": _texts(frame[columns["text"]], source, columns["text"]),
            "position": _positions(frame[columns["position"]], source, columns["position"]),
            "word": _words(frame[columns["word"]], source, columns["word"]),
        }
    )
    if subject_column:
        out["subject"] = _texts(frame[subject_column], source, subject_column)
    for m in chosen:
        out[m] = _numbers(frame[m], source, m)
    if not subject_column:
        _no_readers(out, frame, [*columns.values(), *chosen], source)
    table = _checked(out, tuple(chosen), order, bool(subject_column), source)
    if not allow_gaps:
        _no_gaps(table)
    return table


def _frame(data: PathLike | Any, ns: bool) -> tuple[Any, Any, list[str] | None]:
    """The table as read, what it is called in messages, and (Natural Stories) its stories' reading order."""
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data.copy(), "the table", None
    if ns:
        folder = Path(data)
        frame = _read_tsv(folder / NATURAL_STORIES["files"][0])
        stories = _read_tsv(folder / NATURAL_STORIES["files"][1])
        order = list(dict.fromkeys(stories[NATURAL_STORIES["text"]].astype(str))) if "item" in stories else None
        return frame, os.fspath(folder), order
    from pllscore.io.readers import read_located_table

    if Path(data).is_dir():
        raise InputError(
            f"{os.fspath(data)!r} is a folder without the Natural Stories files "
            f"({', '.join(NATURAL_STORIES['files'])}); give a word table (csv, tsv, jsonl, parquet) or that folder"
        )
    frame, source = read_located_table(data)  # the source knows each row's line in the file
    return frame, source, None


def _read_tsv(path: Path) -> Any:
    import pandas as pd

    try:
        return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, quoting=3)
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read {os.fspath(path)}: {e}") from None


def _cell(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _texts(col: Any, source: str, name: str) -> list[str]:
    values = [_cell(v) for v in col]
    for i, v in enumerate(values):
        if v is None or not v.strip():
            raise InputError(f"{row_at(source, i)} has no {name!r}; every row needs one")
    return values  # type: ignore[return-value]


def _positions(col: Any, source: str, name: str) -> list[float | int]:
    out: list[float | int] = []
    for i, v in enumerate(col):
        try:
            x = float(v) if not isinstance(v, (int, float)) else v
        except (TypeError, ValueError):
            x = math.nan
        if isinstance(x, bool) or not math.isfinite(float(x)):
            raise InputError(f"position {v!r} at {row_at(source, i)} (column {name!r}) is not a number")
        if not float(x).is_integer():
            raise InputError(
                f"position {v!r} at {row_at(source, i)} (column {name!r}) is not a whole number; number the "
                "words of each text 1, 2, 3, ..."
            )
        out.append(int(x))
    return out


def _words(col: Any, source: str, name: str) -> list[str]:
    out = []
    for i, v in enumerate(col):
        w = v if isinstance(v, str) else _cell(v)
        if w is None:
            raise InputError(
                f"{row_at(source, i)} has no word (column {name!r} holds a missing value): a word None, NA or "
                "null read by pandas with its defaults becomes missing; read the table with keep_default_na=False, "
                "or give the file (its cells are read as text)"
            )
        if not w.strip():
            raise InputError(f"{row_at(source, i)} has an empty word (column {name!r}); every row needs its word")
        if any(c.isspace() for c in w.strip()):
            raise InputError(f"word {w!r} at {row_at(source, i)} has whitespace inside; one word per row")
        out.append(w.strip())
    return out


def _numbers(col: Any, source: str, name: str) -> list[float]:
    out = []
    for i, v in enumerate(col):
        if v is None or (isinstance(v, str) and v.strip() in MISSING):
            out.append(math.nan)
            continue
        try:
            if isinstance(v, bool):
                raise ValueError
            x = float(v)
        except (TypeError, ValueError):
            raise InputError(
                f"measure {name!r} is not a number at {row_at(source, i)}: {v!r}; reading times must be numbers "
                f"(leave a cell empty for a missing one)"
            ) from None
        out.append(x)
    return out


def _no_readers(out: Any, frame: Any, used: Sequence[str], source: str) -> None:
    """Refuse rows that repeat a text's position with the same word: per-reader rows given without their reader
    (the column that tells the repeated rows apart is named when there is one)."""
    dup = out.duplicated(["text", "position"], keep=False).to_numpy()
    if not dup.any():
        return
    first = out[dup].iloc[0]
    same = (out["text"] == first["text"]).to_numpy() & (out["position"] == first["position"]).to_numpy()
    if out.loc[same, "word"].nunique() > 1:
        return  # two words at one position: the duplicate check names it
    rows = frame[same]
    apart = [str(c) for c in frame.columns if c not in used and rows[c].astype(str).nunique() == len(rows)]
    hint = f" (perhaps {apart[0]!r})" if apart else ""
    raise InputError(
        f"text {first['text']!r} shows the word {first['word']!r} at position {first['position']} in "
        f"{int(same.sum())} rows of {source}: per-reader rows? name the reader's column with --subject-column{hint}; "
        "otherwise drop the repeated rows"
    )


def _spans(positions: Sequence[int]) -> str:
    """``[4, 7, 8, 9]`` -> ``"4, 7-9"``."""
    runs: list[list[int]] = []
    for p in positions:
        if runs and runs[-1][1] == p - 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    shown = [str(a) if a == b else f"{a}-{b}" for a, b in runs]
    return ", ".join(shown[:8]) + (", ..." if len(shown) > 8 else "")


def _no_gaps(table: WordTable) -> None:
    """Refuse a text whose positions skip a number (a word left out): lags and sentence starts would cross it."""
    words = table.words()
    for text, group in words.groupby("text", sort=False):
        pos = group["position"].to_numpy()
        if len(pos) and pos[-1] - pos[0] + 1 != len(pos):
            present = set(pos.tolist())
            missing = [p for p in range(int(pos[0]), int(pos[-1]) + 1) if p not in present]
            raise InputError(
                f"text {text!r} of {table.source} has no word at position {_spans(missing)} (its positions run "
                f"{pos[0]}-{pos[-1]}); number its words without gaps, or pass allow_gaps=True if words were left "
                "out on purpose (a lag across a gap is then missing)"
            )


def _checked(frame: Any, measures: tuple[str, ...], order: list[str] | None, subject: bool, source: str) -> WordTable:
    if frame.empty:
        raise InputError(f"{source} has no rows")
    seen = list(dict.fromkeys(frame["text"]))
    texts = [t for t in (order or []) if t in set(seen)] + [t for t in seen if t not in set(order or [])]
    rank = {t: i for i, t in enumerate(texts)}
    keys = ["text", "position", "subject"] if subject else ["text", "position"]
    dup = frame.duplicated(keys, keep=False)
    if dup.any():
        row = frame[dup].iloc[0]
        who = f" for reader {row['subject']!r}" if subject else ""
        raise InputError(
            f"text {row['text']!r} has position {row['position']} twice{who} in {source}; "
            "each word of a text needs its own position"
        )
    if subject:
        words = frame.drop_duplicates(["text", "position", "word"])
        clash = words.duplicated(["text", "position"], keep=False)
        if clash.any():
            row = words[clash].iloc[0]
            raise InputError(
                f"text {row['text']!r} shows different words at position {row['position']} in {source}; "
                "readers of one text must see the same words"
            )
    order_cols = ["_t", "position"] + (["_s"] if subject else [])
    frame = frame.assign(_t=frame["text"].map(rank))
    if subject:
        srank = {s: i for i, s in enumerate(dict.fromkeys(frame["subject"]))}
        frame = frame.assign(_s=frame["subject"].map(srank))
    frame = frame.sort_values(order_cols, kind="stable").drop(columns=[c for c in ("_t", "_s") if c in frame])
    rows = tuple(int(i) for i in frame.index)  # the frame was made with one row per input row, in input order
    return WordTable(frame.reset_index(drop=True), measures, tuple(texts), subject, source, rows)
