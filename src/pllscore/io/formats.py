"""The file formats pllscore reads and writes, and the extensions that name them (defined once).

Inputs: plain text (one text per line), CSV, TSV, JSON Lines and Parquet. Outputs: the same
tables; a ``.txt`` output is written as TSV.
"""

from __future__ import annotations

__all__ = ["INPUT_FORMATS", "INPUT_SUFFIXES", "OUTPUT_FORMATS", "OUTPUT_SUFFIXES"]

INPUT_FORMATS = ("txt", "csv", "tsv", "jsonl", "parquet")
OUTPUT_FORMATS = ("csv", "tsv", "jsonl", "parquet")

INPUT_SUFFIXES = {".txt": "txt", ".text": "txt", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl",
                  ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet"}  # fmt: skip
OUTPUT_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
                   ".parquet": "parquet", ".pq": "parquet"}  # fmt: skip
