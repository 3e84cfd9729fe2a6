"""The file formats pllscore reads and writes, the extensions that name them, and which one a path is.

Inputs: plain text (one text per line), CSV, TSV, JSON Lines and Parquet. Outputs: the same
tables; a ``.txt`` output is written as TSV.
"""

from __future__ import annotations

import os
from pathlib import Path

from pllscore.errors import InputError

__all__ = ["INPUT_FORMATS", "INPUT_SUFFIXES", "OUTPUT_FORMATS", "OUTPUT_SUFFIXES", "detect_format", "output_format"]

INPUT_FORMATS = ("txt", "csv", "tsv", "jsonl", "parquet")
OUTPUT_FORMATS = ("csv", "tsv", "jsonl", "parquet")

INPUT_SUFFIXES = {".txt": "txt", ".text": "txt", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl",
                  ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet"}  # fmt: skip
OUTPUT_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
                   ".parquet": "parquet", ".pq": "parquet"}  # fmt: skip


def detect_format(path: str | os.PathLike[str], given: str | None = None) -> str:
    """The input format from ``given`` or else from the file's extension; stdin (``-``) is plain text."""
    if given is not None:
        if given.lower() not in INPUT_FORMATS:
            raise InputError(f"unknown format {given!r}; choose from {', '.join(INPUT_FORMATS)}")
        return given.lower()
    if os.fspath(path) == "-":
        return "txt"
    suffix = Path(path).suffix.lower()
    if suffix not in INPUT_SUFFIXES:
        raise InputError(
            f"cannot tell the format of {os.fspath(path)!r} from its extension; "
            f"use one of {', '.join(sorted(INPUT_SUFFIXES))} or pass --format"
        )
    return INPUT_SUFFIXES[suffix]


def output_format(path: str | None, given: str | None = None) -> str:
    """The output format from ``given``, else from the extension of ``path``; TSV for stdout. A ``given`` format
    that another known extension of ``path`` contradicts (``out.csv`` as parquet) is refused."""
    suffix = "" if path is None or path == "-" else Path(path).suffix.lower()
    if given is not None:
        if given.lower() not in OUTPUT_FORMATS:
            raise InputError(f"unknown output format {given!r}; choose from {', '.join(OUTPUT_FORMATS)}")
        named = OUTPUT_SUFFIXES.get(suffix)
        # .txt is any text table; another known extension must be the format given
        if named is not None and named != given.lower() and not (suffix == ".txt" and given.lower() != "parquet"):
            raise InputError(
                f"--format {given} contradicts the extension of {path!r} ({named}); "
                f"drop --format, or name the output with .{given.lower()}"
            )
        return given.lower()
    if path is None or path == "-":
        return "tsv"
    if suffix not in OUTPUT_SUFFIXES:
        raise InputError(f"cannot tell the output format of {path!r}; use .csv, .tsv, .jsonl or .parquet, or --format")
    return OUTPUT_SUFFIXES[suffix]
