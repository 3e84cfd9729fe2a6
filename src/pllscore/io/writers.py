"""Append-only, resumable output files with a provenance sidecar.

In: an output path, its format and the run's settings. Out: a file that grows one finished
chunk at a time, plus ``OUT.meta.json`` with the settings, versions and progress.

A chunk is written in one call and flushed before the sidecar records it, so after Ctrl-C
or a kill the file holds whole chunks (text formats may also hold the start of the next
one, which ``resume`` cuts off at the recorded byte offset). Parquet cannot be appended
to, so each chunk rewrites the file atomically; it is always readable.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from pllscore.errors import InputError
from pllscore.io.formats import OUTPUT_FORMATS
from pllscore.io.formats import OUTPUT_SUFFIXES as _SUFFIXES

__all__ = ["OUTPUT_FORMATS", "ResumableWriter", "StreamWriter", "meta_path", "output_format"]

# settings that must match for --resume to continue a file
RESUME_KEYS = ("input", "n_input_rows", "model", "metrics", "level", "format", "column", "id_column", "base",
               "surprisal", "skip_empty", "chunk_size", "dtype", "long")  # fmt: skip


def output_format(path: str | None, given: str | None = None) -> str:
    """The output format from ``given``, else from the extension of ``path``; TSV for stdout."""
    if given is not None:
        if given.lower() not in OUTPUT_FORMATS:
            raise InputError(f"unknown output format {given!r}; choose from {', '.join(OUTPUT_FORMATS)}")
        return given.lower()
    if path is None or path == "-":
        return "tsv"
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        raise InputError(f"cannot tell the output format of {path!r}; use .csv, .tsv, .jsonl or .parquet, or --format")
    return _SUFFIXES[suffix]


def meta_path(path: str | os.PathLike[str]) -> Path:
    """Where the provenance sidecar of ``path`` lives."""
    return Path(f"{os.fspath(path)}.meta.json")


def _serialize(frame: Any, fmt: str, header: bool) -> str:
    if fmt in ("csv", "tsv"):
        return str(frame.to_csv(index=False, header=header, sep="," if fmt == "csv" else "\t", lineterminator="\n"))
    if fmt == "jsonl":
        text = frame.to_json(orient="records", lines=True, force_ascii=False)
        return text if text.endswith("\n") or not text else text + "\n"
    raise ValueError(fmt)


class StreamWriter:
    """Writes chunks to a text stream (stdout); not resumable."""

    def __init__(self, fmt: str, stream: TextIO | None = None) -> None:
        if fmt == "parquet":
            raise InputError("Parquet cannot be written to stdout; give an output file with -o out.parquet")
        self.fmt, self.stream, self.rows_done, self._header = fmt, stream or sys.stdout, 0, True

    def append(self, frame: Any, rows_done: int) -> None:
        self.stream.write(_serialize(frame, self.fmt, self._header))
        self.stream.flush()
        self._header, self.rows_done = False, rows_done

    def finish(self, summary: dict[str, Any]) -> None:
        pass

    def interrupt(self) -> None:
        pass


class ResumableWriter:
    """An output file that records its progress and can be continued with ``resume=True``."""

    def __init__(
        self, path: str | os.PathLike[str], fmt: str, meta: dict[str, Any], *, resume: bool, force: bool
    ) -> None:
        self.path, self.fmt, self.meta_file = Path(path), fmt, meta_path(path)
        self.meta = dict(meta)
        self.rows_done, self._bytes, self._header = 0, 0, True
        if resume and self.path.exists():
            self._continue(meta)
        elif self.path.exists() and not force:
            raise InputError(
                f"output {os.fspath(path)!r} already exists; pass --resume to continue it or --force to overwrite"
            )
        else:
            self._start()

    # --- set-up -------------------------------------------------------------------
    def _start(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.fmt != "parquet":
                self.path.write_bytes(b"")
            elif self.path.exists():
                self.path.unlink()
        except OSError as e:
            raise InputError(
                f"cannot write output {os.fspath(self.path)!r}: {e.strerror}; choose another path"
            ) from None
        self._save_meta(status="running")

    def _continue(self, meta: dict[str, Any]) -> None:
        try:
            old = json.loads(self.meta_file.read_text())
        except (OSError, json.JSONDecodeError):
            raise InputError(
                f"cannot resume {os.fspath(self.path)!r}: its progress file {self.meta_file.name} is missing "
                "or broken; use --force to start over"
            ) from None
        for key in RESUME_KEYS:
            if old.get(key) != meta.get(key):
                raise InputError(
                    f"cannot resume {os.fspath(self.path)!r}: it was made with {key}={old.get(key)!r}, this run has "
                    f"{key}={meta.get(key)!r}; rerun with the same options or use --force to start over"
                )
        self.rows_done = int(old.get("rows_done", 0))
        self._bytes = int(old.get("bytes", 0))
        self.meta["started"] = old.get("started", self.meta.get("started"))
        self.meta["resumed"] = int(old.get("resumed", 0)) + 1
        if self.fmt != "parquet":
            try:
                with open(self.path, "r+b") as f:  # drop a chunk that was cut off mid-write
                    f.truncate(self._bytes)
            except OSError as e:
                raise InputError(f"cannot write output {os.fspath(self.path)!r}: {e.strerror}") from None
        self._header = self.rows_done == 0 or self._bytes == 0
        self._save_meta(status="running")

    # --- writing ------------------------------------------------------------------
    def append(self, frame: Any, rows_done: int) -> None:
        """Add one finished chunk; ``rows_done`` is the number of input rows now complete."""
        if self.fmt == "parquet":
            self._append_parquet(frame)
        else:
            data = _serialize(frame, self.fmt, self._header).encode("utf-8")
            with open(self.path, "ab") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            self._bytes += len(data)
            self._header = self._header and not len(frame)
        self.rows_done = rows_done
        self._save_meta(status="running")

    def _append_parquet(self, frame: Any) -> None:
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.path.exists():
            frame = pd.concat([pd.read_parquet(self.path), frame], ignore_index=True)
        table = pa.Table.from_pandas(frame, preserve_index=False)
        table = table.replace_schema_metadata(
            {**(table.schema.metadata or {}), b"pllscore": json.dumps(self._provenance()).encode()}
        )
        tmp = self.path.with_name(self.path.name + ".tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, self.path)

    def finish(self, summary: dict[str, Any]) -> None:
        """Mark the output complete and record the run's summary."""
        self.meta["summary"] = summary
        if self.fmt == "parquet" and not self.path.exists():
            import pandas as pd

            self._append_parquet(pd.DataFrame())
        self._save_meta(status="complete")

    def interrupt(self) -> None:
        """Record that the run stopped early; the file holds every finished chunk."""
        self._save_meta(status="interrupted")

    # --- provenance -----------------------------------------------------------------
    def _provenance(self) -> dict[str, Any]:
        return {k: v for k, v in self.meta.items() if k not in ("bytes", "rows_done", "status", "summary")}

    def _save_meta(self, *, status: str) -> None:
        self.meta.update(status=status, rows_done=self.rows_done, bytes=self._bytes)
        tmp = self.meta_file.with_name(self.meta_file.name + ".tmp")
        try:
            tmp.write_text(json.dumps(self.meta, indent=2, default=str) + "\n")
            os.replace(tmp, self.meta_file)
        except OSError as e:
            raise InputError(
                f"cannot write {os.fspath(self.meta_file)!r}: {e.strerror}; choose another output path"
            ) from None
