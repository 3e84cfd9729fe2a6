"""Reading and checking an n-best table: a file or DataFrame in, a checked DataFrame out.

A checked table has one row per hypothesis: an utterance id, a non-empty hypothesis text, a
finite float64 first-pass score and, when named, one reference and one split (dev or test) per
utterance. Every problem is an :class:`~pllscore.InputError` naming the row and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from pllscore.errors import InputError
from pllscore.io.input_table import row_at

__all__ = ["ADDED", "SPLITS", "NbestColumns", "check_nbest", "checked", "read_checked", "read_nbest", "refuse_unknown"]

SPLITS = ("dev", "test")
ADDED = ("lm_logprob", "n_tokens", "combined", "chosen")  # the columns rescoring adds
_AUTO = "ref"  # the reference column used when the table has one and none is named


@dataclass(frozen=True)
class NbestColumns:
    """The columns of an n-best table: the utterance id, the hypothesis, the first-pass score and, when
    named, the reference (None: no evaluation), the dev/test split (None: one split) and the source sentence
    each hypothesis is scored given (None: none; the MT case, e.g. with an encoder-decoder LM).

    The public functions take them as keywords (``utt_column=``, ``text_column=``, ``score_column=``,
    ``ref_column=``, ``split_column=``, ``source_column=``) and make one of these with :meth:`of`; the steps
    inside take it whole.
    """

    utt: str = "utt_id"
    text: str = "hyp"
    score: str = "score"
    ref: str | None = None
    split: str | None = None
    source: str | None = None

    @classmethod
    def take(cls, options: dict[str, Any], **defaults: str | None) -> NbestColumns:
        """The columns named by the ``<field>_column`` keys of ``options`` (removed from it), else ``defaults``."""
        return cls(**{f.name: options.pop(f"{f.name}_column", defaults.get(f.name, f.default)) for f in fields(cls)})

    @classmethod
    def of(cls, options: Mapping[str, Any], what: str, **defaults: str | None) -> NbestColumns:
        """:meth:`take` of every key of ``options``; a key that names no column is refused (``what``: the caller)."""
        rest = dict(options)
        columns = cls.take(rest, **defaults)
        refuse_unknown(rest, what)
        return columns

    def keywords(self) -> dict[str, str | None]:
        """The columns as the keywords the public functions take (``utt_column=...``)."""
        return {f"{f.name}_column": getattr(self, f.name) for f in fields(self)}


def refuse_unknown(options: Mapping[str, Any], what: str) -> None:
    """A keyword left over is refused as Python refuses an unexpected keyword argument of ``what``."""
    if options:
        raise TypeError(f"{what}() got an unexpected keyword argument {next(iter(options))!r}")


def read_nbest(source: Any, *, fmt: str | None = None, **columns: str | None) -> tuple[Any, str | None]:
    """Read an n-best table (csv, tsv, jsonl, parquet, or a DataFrame) and check it with :func:`check_nbest`.

    ``columns`` are those of :func:`check_nbest`. Returns the checked frame and the name of its reference
    column: ``ref_column``, else ``ref`` when the table has that column, else None (no evaluation).
    """
    frame, named = read_checked(source, NbestColumns.of(columns, "read_nbest"), fmt)
    return frame, named.ref


def read_checked(source: Any, columns: NbestColumns, fmt: str | None = None) -> tuple[Any, NbestColumns]:
    """:func:`read_nbest` with the columns given whole; returns them with the reference column found."""
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        frame, name = source, "the n-best table"
    else:
        from pllscore.io.readers import read_located_table

        frame, name = read_located_table(source, fmt=fmt)  # the name knows each row's line
    for col in ADDED:
        if col in frame.columns:
            raise InputError(f"{name} already has a column {col!r}, which rescoring writes; rename that column")
    if columns.ref is None and _AUTO in frame.columns:
        columns = replace(columns, ref=_AUTO)
    return checked(frame, columns, name), columns


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pd.NA
    except (TypeError, ValueError):
        return False


def _blank(value: Any) -> bool:
    return _missing(value) or (isinstance(value, str) and not value.strip())


def check_nbest(frame: Any, *, source: str = "the n-best table", **columns: str | None) -> Any:
    """Check an n-best table and return a copy whose first-pass score column is float64.

    ``columns``: ``utt_column`` (default ``utt_id``), ``text_column`` (``hyp``), ``score_column``
    (``score``), and the optional ``ref_column``, ``split_column`` and ``source_column`` (None: not checked). Raises
    :class:`~pllscore.InputError` (one line: the problem, where, and the fix) for a missing
    column, an empty table, a missing utterance id, an
    utterance with no hypotheses, an empty or non-text hypothesis, a first-pass score that is
    not a finite number, a missing or inconsistent reference, and a split value other than dev
    or test (or two splits for one utterance).
    """
    return checked(frame, NbestColumns.of(columns, "check_nbest"), source)


def checked(frame: Any, columns: NbestColumns, source: str) -> Any:
    """:func:`check_nbest` with the columns given whole."""
    utt, ref, split = columns.utt, columns.ref, columns.split
    frame = frame.reset_index(drop=True).copy()
    needed = [(utt, "--utt-column"), (columns.text, "--text-column"), (columns.score, "--score-column")]
    if ref is not None:
        needed.append((ref, "--ref-column"))
    if split is not None:
        needed.append((split, "--split-column"))
    if columns.source is not None:
        needed.append((columns.source, "--source-column"))
    _check_columns(frame, needed, source)
    _check_ids(frame, utt, source)
    _check_hypotheses(frame, utt, columns.text, source)
    frame[columns.score] = _first_pass_scores(frame, utt, columns.score, source)
    if ref is not None:
        _check_per_utterance(frame, utt, ref, source, "reference", "--ref-column")
    if split is not None:
        _check_per_utterance(frame, utt, split, source, "split", "--split-column")
        _check_splits(frame, utt, split, source)
    if columns.source is not None:
        _check_per_utterance(frame, utt, columns.source, source, "source", "--source-column")
    return frame


def _row(frame: Any, utt_column: str, source: str, i: int) -> str:
    """Where row ``i`` is, for an error: its line in the file (or its row), the table and its utterance."""
    return f"{row_at(source, i)} (utterance {frame[utt_column].iloc[i]!r})"


def _check_columns(frame: Any, needed: list[tuple[str, str]], source: str) -> None:
    """Every named column is there (each with the flag that names it), and there is a row."""
    columns = [str(c) for c in frame.columns]
    listed = ", ".join(columns) if columns else "(none)"
    for col, flag in needed:
        if col not in columns:
            raise InputError(f"{source} has no column {col!r} (its columns are: {listed}); name the column with {flag}")
    if len(frame) == 0:
        raise InputError(f"{source} has no rows; it needs at least one hypothesis")


def _check_ids(frame: Any, utt_column: str, source: str) -> None:
    """Every row has an utterance id."""
    for i, u in enumerate(frame[utt_column]):
        if _blank(u):
            raise InputError(f"{row_at(source, i)} has no utterance id in column {utt_column!r}; fill it in")


def _check_hypotheses(frame: Any, utt_column: str, text_column: str, source: str) -> None:
    """Every hypothesis is non-empty text (an utterance with only empty ones is named as such)."""
    import pandas as pd

    hyps = frame[text_column]
    for i, h in enumerate(hyps):
        if not _blank(h) and not isinstance(h, str):
            raise InputError(
                f"{_row(frame, utt_column, source, i)}: column {text_column!r} holds {type(h).__name__}, not text; "
                "quote it as text"
            )
    empty = np.array([_blank(h) for h in hyps], dtype=bool)
    if empty.any():
        all_empty = pd.Series(empty).groupby(frame[utt_column].to_numpy(), sort=False).all()
        if all_empty.any():
            u = all_empty[all_empty].index[0]
            raise InputError(
                f"utterance {u!r} in {source} has no hypotheses (its {text_column!r} cells are empty); "
                "give it at least one hypothesis or remove its rows"
            )
        i = int(np.flatnonzero(empty)[0])
        raise InputError(
            f"{_row(frame, utt_column, source, i)}: the hypothesis is empty and an LM cannot score empty text; "
            f"remove the row ({int(empty.sum())} such rows in all)"
        )


def _first_pass_scores(frame: Any, utt_column: str, score_column: str, source: str) -> Any:
    """The first-pass scores as float64 (numbers written as text are read); each must be a finite number."""
    import pandas as pd

    raw = frame[score_column]
    numbers = pd.to_numeric(raw.map(lambda v: v.strip() if isinstance(v, str) else v), errors="coerce")
    bad = ~np.isfinite(numbers.to_numpy(np.float64)) | raw.map(lambda v: isinstance(v, bool)).to_numpy(bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{_row(frame, utt_column, source, i)}: the first-pass score {raw.iloc[i]!r} in column {score_column!r} "
            f"is not a finite number; fix it, or name the score column with --score-column "
            f"({int(bad.sum())} such rows in all)"
        )
    return numbers.astype("float64")


def _check_splits(frame: Any, utt_column: str, split_column: str, source: str) -> None:
    """Every split value is dev or test."""
    for i, s in enumerate(frame[split_column]):
        if s not in SPLITS:
            raise InputError(
                f"{_row(frame, utt_column, source, i)}: split {s!r} in column {split_column!r} is neither dev nor "
                "test; mark each utterance dev (to tune lambda and beta on) or test"
            )


def _check_per_utterance(frame: Any, utt_column: str, column: str, source: str, what: str, flag: str) -> None:
    """Every row of an utterance has the same, non-empty value in ``column``."""
    values = frame[column]
    for i, v in enumerate(values):
        if _blank(v) or not isinstance(v, str):
            shown = "empty" if _blank(v) else f"{type(v).__name__}, not text"
            raise InputError(
                f"{_row(frame, utt_column, source, i)}: the {what} in column {column!r} "
                f"is {shown}; give every utterance one, or name another column with {flag}"
            )
    distinct = values.groupby(frame[utt_column].to_numpy(), sort=False).nunique()
    if (distinct > 1).any():
        u = distinct[distinct > 1].index[0]
        raise InputError(
            f"utterance {u!r} in {source} has {int(distinct[u])} different {what}s in column {column!r}; "
            f"an utterance has one {what}, the same on each of its rows"
        )
