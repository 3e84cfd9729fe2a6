"""Crash-safe, append-only, resumable output files with a provenance sidecar.

In: an output path, its format and the run's settings. Out: the output file, written once at
the end, plus ``OUT.meta.json`` with the settings, versions and status.

While a run goes, every finished chunk ``k`` is written as an immutable part file
``OUT.parts/part-<k>.<fmt>``: to a temporary name, fsynced, then renamed with ``os.replace``.
That rename is the chunk's single commit point: a part file exists whole or not at all, and
its name says which rows it holds, so the progress of a run is the number of consecutive parts
from 0 (nothing else to keep in step). No chunk rewrites an earlier one. At the end the parts
are joined into ``OUT`` (text formats: their bytes, the header coming with part 0; Parquet: one
row group per part or per batch of parts, with the run's provenance in the schema metadata)
through a temporary file and ``os.replace``; then the sidecar says ``complete`` and the parts
are removed. A kill at any point leaves a state that ``--resume`` finishes into the same bytes
(text) or rows (Parquet) as an uninterrupted run; ``OUT`` itself appears only when whole.

On Ctrl-C the finished batches of the chunk under way are kept beside the parts, as
``OUT.parts/batches-<k>.npz`` (:meth:`ResumableWriter.keep_batches`; see :mod:`pllscore.engine.batch_log`),
committed the same way; a resumed run reads them back for that chunk, and a committed chunk's are removed.

The Ray engine writes its shards with the same :func:`write_part`.

The atomic part files and their joining are :mod:`pllscore.io.parts`; the settings a resumed run
must share with the first one are :mod:`pllscore.io.resume`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, TextIO

from pllscore.errors import InputError, PllscoreError
from pllscore.io.formats import OUTPUT_FORMATS, output_format
from pllscore.io.parts import (
    batches_name,
    commit_file,
    join_parts,
    meta_path,
    part_index,
    part_name,
    parts_path,
    serialize,
    write_json,
    write_part,
)
from pllscore.io.resume import RESUME_KEYS, check_resume

__all__ = [
    "OUTPUT_FORMATS",
    "RESUME_KEYS",
    "ResumableWriter",
    "StreamWriter",
    "check_resume",
    "meta_path",
    "output_format",
    "part_name",
    "parts_path",
    "write_json",
    "write_part",
]


class StreamWriter:
    """Writes chunks to a text stream (stdout); not resumable."""

    def __init__(self, fmt: str, stream: TextIO | None = None) -> None:
        if fmt == "parquet":
            raise InputError("Parquet cannot be written to stdout; give an output file with -o out.parquet")
        self.fmt, self.stream, self.rows_done, self._header = fmt, stream or sys.stdout, 0, True

    def append(self, frame: Any, rows_done: int) -> None:
        self.stream.write(serialize(frame, self.fmt, self._header))
        self.stream.flush()
        self._header, self.rows_done = False, rows_done

    def finish(self, summary: dict[str, Any]) -> None:
        pass

    def interrupt(self) -> None:
        pass

    def kept_batches(self) -> bytes | None:
        return None

    def keep_batches(self, record: bytes | None) -> bool:
        return False


class ResumableWriter:
    """An output file written as committed parts and joined at the end; continued with ``resume=True``.

    Args:
        path: the output file.
        fmt: csv, tsv, jsonl or parquet.
        meta: the run's settings and provenance (``chunk_size`` among them), for the sidecar.
        rows: how many input rows the run scores (chunk ``k`` holds rows ``k*chunk_size`` on).
        resume: continue an unfinished (or finished) output made with the same settings.
        force: delete an existing output and start over.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        fmt: str,
        meta: dict[str, Any],
        *,
        rows: int,
        resume: bool,
        force: bool,
    ) -> None:
        self.path, self.fmt, self.meta_file = Path(path), fmt, meta_path(path)
        self.parts, self._tmp = parts_path(path), Path(f"{os.fspath(path)}.tmp")
        # temporary files a killed run may leave: of the joined output and of the sidecar
        self._tmps = (self._tmp, self.meta_file.with_name(self.meta_file.name + ".tmp"))
        self.meta = dict(meta)
        self.rows, self.chunk_size = rows, int(meta["chunk_size"])
        self.n_chunks = max(1, -(-rows // self.chunk_size))  # no row: one empty chunk, for the header
        self.chunks_done, self._complete = 0, False
        # an empty parts folder without a sidecar is a run that died before it began: nothing to keep
        there = self.path.exists() or self.meta_file.exists() or any(self.parts.glob("*"))
        if resume and there:
            self._continue(meta)
        elif there and not force:
            what = "already exists" if self.path.exists() else f"already exists, unfinished ({self.parts.name}/)"
            raise InputError(f"output {os.fspath(path)!r} {what}; pass --resume to continue it or --force to overwrite")
        else:
            self._start()

    @property
    def rows_done(self) -> int:
        """Input rows whose chunk is committed."""
        return min(self.chunks_done * self.chunk_size, self.rows)

    def _part(self, k: int) -> Path:
        return self.parts / part_name(k, self.fmt)

    def _batches(self, k: int) -> Path:
        return self.parts / batches_name(k)

    def _fail(self, e: OSError, path: Path | None = None) -> InputError:
        where = os.fspath(path or self.path)
        return InputError(f"cannot write output {where!r}: {e.strerror or e}; choose another path")

    # --- set-up -------------------------------------------------------------------
    def _start(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # old parts go before the new sidecar is written: new settings must never meet old parts
            for old in (self.path, *self._tmps):
                if old.exists():
                    old.unlink()
            if self.parts.exists():
                shutil.rmtree(self.parts)
            self.parts.mkdir()
        except OSError as e:
            raise self._fail(e) from None
        self._save_meta(status="running")

    def _continue(self, meta: dict[str, Any]) -> None:
        try:
            old = json.loads(self.meta_file.read_text())
        except (OSError, json.JSONDecodeError):
            raise InputError(
                f"cannot resume {os.fspath(self.path)!r}: its progress file {self.meta_file.name} is missing "
                "or broken; use --force to start over"
            ) from None
        check_resume(old, meta, RESUME_KEYS, repr(os.fspath(self.path)))
        self.meta["started"] = old.get("started", self.meta.get("started"))
        self.meta["resumed"] = int(old.get("resumed", 0)) + 1
        try:
            if old.get("status") == "complete" and self.path.exists():
                # finished before; at most the removal of the parts was cut short
                self._complete, self.chunks_done = True, self.n_chunks
                self.meta["summary"] = old.get("summary")
            else:
                self.parts.mkdir(exist_ok=True)
                for tmp in self.parts.glob(".*.tmp"):  # parts cut off before their commit
                    tmp.unlink()
                while self.chunks_done < self.n_chunks and self._part(self.chunks_done).exists():
                    self.chunks_done += 1
                for later in self.parts.glob(f"part-*.{self.fmt}"):  # after a gap (never made by pllscore)
                    if part_index(later) >= self.chunks_done:
                        later.unlink()
                for kept in self.parts.glob("batches-*.npz"):  # only the next chunk's batches are of use
                    if part_index(kept) != self.chunks_done:
                        kept.unlink()
            for tmp in self._tmps:
                if tmp.exists():
                    tmp.unlink()
        except OSError as e:
            raise self._fail(e, self.parts) from None
        self._save_meta(status="complete" if self._complete else "running")

    # --- writing ------------------------------------------------------------------
    def append(self, frame: Any, rows_done: int) -> None:
        """Commit the next chunk (``rows_done``: the input rows complete with it)."""
        k = self.chunks_done
        if rows_done != min((k + 1) * self.chunk_size, self.rows):
            raise PllscoreError(f"chunk {k} should end at row {min((k + 1) * self.chunk_size, self.rows)}")
        try:
            write_part(self._part(k), frame, self.fmt, header=k == 0)
        except OSError as e:
            raise self._fail(e, self._part(k)) from None
        self.chunks_done = k + 1
        self._batches(k).unlink(missing_ok=True)

    def kept_batches(self) -> bytes | None:
        """The finished batches an interrupted run kept of the next chunk (:mod:`pllscore.engine.batch_log`), or
        None."""
        try:
            return self._batches(self.chunks_done).read_bytes()
        except OSError:
            return None

    def keep_batches(self, record: bytes | None) -> bool:
        """Keep ``record``, the finished batches of the next chunk, for a resumed run (committed as a part is;
        kept at best: a failure to write it loses them, not the run's parts); whether it was written."""
        if record is None or self._complete:
            return False
        path = self._batches(self.chunks_done)
        try:
            commit_file(path.with_name(f".{path.name}.{os.getpid()}.tmp"), path, lambda f: f.write(record))
        except OSError:
            return False
        return True

    def finish(self, summary: dict[str, Any]) -> None:
        """Join the parts into the output, mark it complete with the run's summary, remove the parts."""
        if not self._complete:
            if self.chunks_done != self.n_chunks:
                raise PllscoreError(f"{self.chunks_done} of {self.n_chunks} chunks are done; cannot finish")
            try:
                self._assemble()
            except OSError as e:
                raise self._fail(e) from None
            self.meta["summary"] = summary
            self._save_meta(status="complete")
            self._complete = True
        try:
            if self.parts.exists():
                shutil.rmtree(self.parts)
        except OSError as e:
            raise self._fail(e, self.parts) from None

    def interrupt(self) -> None:
        """Record that the run stopped early, with the chunks committed (counted on disk: the stop may have come
        between a part's commit and its count); they stay in the parts folder."""
        if not self._complete:
            while self.chunks_done < self.n_chunks and self._part(self.chunks_done).exists():
                self.chunks_done += 1
            self._save_meta(status="interrupted")

    def _assemble(self) -> None:
        parts = [self._part(k) for k in range(self.n_chunks)]
        provenance = {"pllscore": json.dumps(self._provenance(), default=str)}
        join_parts(parts, self.fmt, self.path, self._tmp, provenance)

    # --- provenance -----------------------------------------------------------------
    def _provenance(self) -> dict[str, Any]:
        return {k: v for k, v in self.meta.items() if k not in ("rows_done", "status", "summary")}

    def _save_meta(self, *, status: str) -> None:
        self.meta.update(status=status, rows_done=self.rows_done)
        try:
            write_json(self.meta_file, self.meta)
        except OSError as e:
            raise InputError(
                f"cannot write {os.fspath(self.meta_file)!r}: {e.strerror}; choose another output path"
            ) from None
