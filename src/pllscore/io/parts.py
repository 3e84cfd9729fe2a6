"""Part files: immutable files written atomically, named by their index, and joined into one output.

Every file pllscore writes goes through one commit point, :func:`commit_file`: the data is written
to a temporary name, fsynced, then renamed with ``os.replace`` (and the folder fsynced), so a
reader, or a run resumed after a kill, sees a file whole or not at all. A run's finished chunks
are part files ``OUT.parts/part-<k>.<fmt>``; :func:`join_parts` joins them into ``OUT``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.io.delimited import tsv_text

__all__ = [
    "batches_name",
    "commit_file",
    "join_parts",
    "logicals_as_text",
    "meta_path",
    "part_index",
    "part_name",
    "parts_path",
    "replacing",
    "serialize",
    "write_json",
    "write_part",
]

# Parquet parts are joined into row groups of about this many rows
_ROW_GROUP = 1 << 16


def meta_path(path: str | os.PathLike[str]) -> Path:
    """Where the provenance sidecar of ``path`` lives."""
    return Path(f"{os.fspath(path)}.meta.json")


def parts_path(path: str | os.PathLike[str]) -> Path:
    """The folder that holds the finished chunks of an unfinished output ``path``."""
    return Path(f"{os.fspath(path)}.parts")


def part_name(index: int, fmt: str) -> str:
    """The file name of part (chunk, block) ``index``."""
    return f"part-{index:06d}.{fmt}"


def batches_name(index: int) -> str:
    """The file name of the finished batches kept of unfinished chunk ``index``."""
    return f"batches-{index:06d}.npz"


def part_index(part: Path) -> int:
    """The chunk index in a part's name (``part-000012.tsv`` -> 12, ``batches-000012.npz`` -> 12); -1 for
    another name."""
    digits = part.name.removeprefix("part-").removeprefix("batches-").split(".", 1)[0]
    return int(digits) if digits.isdigit() else -1


def serialize(frame: Any, fmt: str, header: bool) -> str:
    """``frame`` as csv, tsv or jsonl text (``header``: whether csv/tsv starts with the header line).

    In csv and tsv a logical cell is ``TRUE`` or ``FALSE`` (a missing one empty): what R's ``read.csv``,
    pandas' ``read_csv`` and spreadsheets all read as logical (R keeps pandas' ``True`` as text)."""
    if fmt == "csv":
        return str(logicals_as_text(frame).to_csv(index=False, header=header, lineterminator="\n"))
    if fmt == "tsv":  # cells as they are: TSV has no quoting (see pllscore.io.delimited)
        return tsv_text(logicals_as_text(frame), header)
    if fmt == "jsonl":
        return "".join(
            json.dumps(r, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
            for r in _json_records(frame)
        )
    raise ValueError(fmt)


def logicals_as_text(frame: Any) -> Any:
    """``frame`` with its logical columns (bool, or pandas' nullable boolean) as ``TRUE``/``FALSE`` text, missing
    cells empty; ``frame`` itself when it has none."""
    from pandas.api.types import is_bool_dtype

    logical = [c for c in frame.columns if is_bool_dtype(frame[c].dtype)]
    if not logical:
        return frame
    out = frame.copy()
    for c in logical:
        out[c] = frame[c].map({True: "TRUE", False: "FALSE"}).astype(object).where(frame[c].notna(), None)
    return out


def _json_records(frame: Any) -> list[dict[str, Any]]:
    """The rows of ``frame`` as JSON-ready dicts whose floats are Python floats, written by ``json`` with the
    shortest repr that reads back as the same float64 (pandas' ``to_json`` keeps 10 significant digits).

    Missing values (NaN, None, NaT, NA) and infinities become null, as pandas writes them; a timestamp is its
    epoch milliseconds, as in pandas' ``to_json``; an array cell is a list."""
    cols = [str(c) for c in frame.columns]
    return [dict(zip(cols, map(_json_value, row))) for row in frame.itertuples(index=False, name=None)]


def _json_value(value: Any) -> Any:
    """One cell as a value ``json.dumps`` writes (see :func:`_json_records`)."""
    if isinstance(value, float):  # np.float64 too: a float subclass, written by float's repr
        return float(value) if math.isfinite(value) else None
    if value is None or isinstance(value, (str, bool, int)):
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    import numpy as np
    import pandas as pd

    if isinstance(value, np.ndarray):
        return [_json_value(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return _json_value(value.item())
    if value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, pd.Timestamp):
        return int(value.value // 1_000_000)
    if isinstance(value, pd.Timedelta):
        return int(value.value // 1_000_000)
    return str(value)


def _arrow(frame: Any, metadata: Mapping[str, str] | None) -> Any:
    import pyarrow as pa

    table = pa.Table.from_pandas(frame, preserve_index=False)
    if metadata:
        extra = {k.encode(): v.encode() for k, v in metadata.items()}
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **extra})
    return table


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a no-op where folders cannot be opened, as on Windows)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def commit_file(tmp: Path, path: Path, write: Any) -> None:
    """Write ``tmp`` with ``write(file)``, fsync it, then rename it to ``path``: the commit point."""
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def write_part(
    path: str | os.PathLike[str],
    frame: Any,
    fmt: str,
    *,
    header: bool = True,
    metadata: Mapping[str, str] | None = None,
) -> None:
    """Write ``frame`` to ``path`` as one immutable file, atomically (temporary name, fsync, ``os.replace``).

    ``header``: whether a csv/tsv part starts with the header line. ``metadata``: Parquet schema
    metadata (``{"pllscore": json}``). Readers see the whole file or none of it.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # hidden: Parquet dataset readers skip it
    if fmt == "parquet":
        import pyarrow.parquet as pq

        table = _arrow(frame, metadata)
        commit_file(tmp, path, lambda f: pq.write_table(table, f))
    else:
        data = serialize(frame, fmt, header).encode("utf-8")
        commit_file(tmp, path, lambda f: f.write(data))


def write_json(path: str | os.PathLike[str], data: Mapping[str, Any]) -> None:
    """Write a JSON file atomically (a reader sees the old or the new file, never half of one)."""
    text = (json.dumps(data, indent=2, default=str) + "\n").encode()
    path = Path(path)
    commit_file(path.with_name(path.name + ".tmp"), path, lambda f: f.write(text))


def join_parts(parts: Sequence[Path], fmt: str, path: Path, tmp: Path, metadata: Mapping[str, str]) -> None:
    """Join ``parts`` into ``path`` through ``tmp``, committed once.

    Text formats: the parts' bytes one after another (the header comes with part 0). Parquet:
    one row group per part or per batch of parts, the schema unified over all of them, and
    ``metadata`` added to the schema's.
    """
    if fmt != "parquet":

        def copy(out: Any) -> None:
            for p in parts:
                with open(p, "rb") as f:
                    shutil.copyfileobj(f, out)

        commit_file(tmp, path, copy)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not parts:
        import pandas as pd

        table = _arrow(pd.DataFrame(), metadata)
        commit_file(tmp, path, lambda f: pq.write_table(table, f))
        return
    schemas = [pq.read_schema(p) for p in parts]
    schema = pa.unify_schemas(schemas)  # a column all null in one chunk takes its type from the others
    meta = {**(schemas[0].metadata or {}), **{k.encode(): v.encode() for k, v in metadata.items()}}
    schema = schema.with_metadata(meta)

    def join(out: Any) -> None:
        with pq.ParquetWriter(out, schema) as w:
            batch: list[Any] = []
            rows = 0
            for p in parts:
                batch.append(pq.read_table(p).cast(schema))
                rows += len(batch[-1])
                if rows >= _ROW_GROUP:
                    group = pa.concat_tables(batch)
                    w.write_table(group, row_group_size=max(len(group), 1))
                    batch, rows = [], 0
            if batch:
                group = pa.concat_tables(batch)
                w.write_table(group, row_group_size=max(len(group), 1))

    commit_file(tmp, path, join)


@contextlib.contextmanager
def replacing(out: Path) -> Iterator[Path]:
    """A new folder beside ``out`` to write a run into; once written whole it takes the place of ``out``, whose
    files are all removed (none of an earlier run survives). Where writing fails, ``out`` is left as it was."""
    tag = f"{os.getpid()}-{os.urandom(4).hex()}"
    fresh, old = out.with_name(f".{out.name}.new-{tag}"), out.with_name(f".{out.name}.old-{tag}")
    try:
        fresh.mkdir(parents=True)
    except OSError as e:
        raise InputError(f"cannot create output folder {os.fspath(out)!r}: {e.strerror}") from None
    try:
        yield fresh
        if out.exists():
            out.rename(old)
        fresh.rename(out)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        if old.exists() and not out.exists():
            old.rename(out)  # put the earlier run back
        raise
    shutil.rmtree(old, ignore_errors=True)
