"""Score corpora on a Ray cluster: one model per actor, sharded Parquet, resumable.

The driver reads every input with pllscore's own reader (:func:`pllscore.io.readers.read_blocks`,
what the local engine reads with, so a file gives the same rows, cells, row numbers and errors
on both engines), one file at a time in file order, cut into fixed blocks of ``block_rows``
input rows that go into Ray's object store, so block ``k`` and its row ids are the same in
every run. The actors of a :class:`~pllscore.jobs.ray_calls.ModelPool` (one model loaded per actor, as for
every Ray command) score the blocks with the local engine (:func:`~pllscore.jobs.ray_actor.score_block`)
and write ``part-<k>.parquet`` atomically. Ray restarts an actor that dies and retries its block; a
rerun into the same folder skips blocks whose shard is already there.
"""

from __future__ import annotations

import glob
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pllscore.errors import InputError, PllscoreError
from pllscore.io.formats import INPUT_SUFFIXES
from pllscore.jobs.ray_actor import BLOCK, FILE, LINE, ROW, BlockJob, score_block, shard_path
from pllscore.jobs.ray_calls import ModelPool, connect, import_ray, release_workers
from pllscore.jobs.run_settings import JobSettings, RunRecord, gather_job
from pllscore.metrics import DEFAULT_METRIC
from pllscore.results.columns import SCHEMA
from pllscore.settings import ModelSettings, RaySettings, RunSettings, TableSettings, TextSettings

__all__ = [
    "RESUME_KEYS", "RaySummary", "expand_inputs", "kind_from_model_name", "release_workers", "score_dataset",
]  # fmt: skip

#: what a resumed Ray run must share with the first one: the inputs' content, the model's files, the
#: library's version and every recorded setting (the block size among them)
RECORD = RunRecord(
    ("input_sha256", "model_fingerprint", "pllscore", "columns"),
    (ModelSettings, TextSettings, TableSettings, RaySettings),
)
RESUME_KEYS = RECORD.keys


@dataclass
class RaySummary:
    """What a :func:`score_dataset` run did."""

    output: str
    rows: int
    blocks: int
    blocks_done_before: int
    seconds: float
    retried_blocks: int
    files: list[str] = field(default_factory=list)

    def line(self) -> str:
        scored = self.blocks - self.blocks_done_before
        rate = f"{self.rows / self.seconds:.1f} rows/s" if self.seconds > 0 else ""
        return (
            f"ray: {self.rows} rows in {len(self.files)} file(s), {scored} of {self.blocks} blocks scored "
            f"({self.blocks_done_before} already done), {self.seconds:.1f} s, {rate}, "
            f"{self.retried_blocks} block(s) retried after failures -> {self.output}/"
        )


def expand_inputs(inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """Files from paths, folders (their known text/table files, recursively) and globs; sorted."""
    items = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    files: list[str] = []
    for item in items:
        name = os.fspath(item)
        if os.path.isdir(name):
            found = [str(p) for p in Path(name).rglob("*") if p.is_file() and p.suffix.lower() in INPUT_SUFFIXES]
            if not found:
                raise InputError(f"folder {name!r} holds no .txt/.csv/.tsv/.jsonl/.parquet files")
            files += found
        elif any(c in name for c in "*?["):
            found = [f for f in glob.glob(name, recursive=True) if os.path.isfile(f)]
            if not found:
                raise InputError(f"no file matches {name!r}")
            files += found
        elif os.path.isfile(name):
            files.append(name)
        else:
            raise InputError(f"input {name!r} not found; give files, folders or globs")
    for f in files:
        if Path(f).suffix.lower() not in INPUT_SUFFIXES:
            raise InputError(f"cannot tell the format of {f!r}; use .txt, .csv, .tsv, .jsonl or .parquet files")
    return sorted(dict.fromkeys(os.path.abspath(f) for f in files))


def score_dataset(
    inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    output_dir: str | os.PathLike[str],
    *,
    model: str | os.PathLike[str] | ModelSettings,
    **options: Any,
) -> RaySummary:
    """Score files, folders or globs on a Ray cluster; write sharded Parquet into ``output_dir``.

    Args:
        inputs: .txt/.csv/.tsv/.jsonl/.parquet files, folders of them, or globs.
        output_dir: the folder for ``part-<block>.parquet`` shards and ``_meta.json``.
        model: a Hub name or a folder every worker can read, or a :class:`~pllscore.settings.ModelSettings`.
        **options: the settings objects, each by its group's name, and any field of them by name, as for
            :func:`pllscore.score_file`:
            text, table, run: as for :func:`pllscore.score_file` (``run``: ``resume`` skips blocks whose shard
                exists, ``force`` deletes an existing output first); a unigram table or corpus file must be
                readable by every worker (each actor counts a corpus once).
            ray: :class:`~pllscore.settings.RaySettings`: ``address`` (None starts or joins a local Ray, ``"auto"``
                the running cluster, ``"ray://host:10001"`` a remote one), ``workers`` (default: as many as the
                cluster's CPUs allow), ``cpus_per_worker``, ``gpus_per_worker`` and ``block_rows`` (input rows
                per block: the unit of work, of resume and of output shards).

    Returns:
        A summary: rows, blocks, seconds, retried blocks. Output columns are those of a local
            ``score_file`` run, ``text_id`` being the row's index over all input files in sorted order.
    """
    job = gather_job(model, options, what="score_dataset", on_ray=True)
    import_ray()  # a one-line error before anything is written
    from pllscore.io.provenance import command_line, now
    from pllscore.io.writers import write_json

    score_options = job.score_options  # checked before Ray starts
    files, out = expand_inputs(inputs), Path(output_dir)
    settings = _settings_record(job, files, score_options)
    _open_output(out, settings, job.run)
    meta = {**settings, "engine": "ray", "started": now(), "command": command_line(), "status": "running"}
    write_json(out / "_meta.json", meta)

    ray_api = connect(job.ray.address)
    t0 = time.perf_counter()
    blocks = _read_blocks(ray_api, files, job, score_options, out)
    summaries = _score_blocks(ray_api, blocks, job, score_options, settings, out)
    failed = summaries[summaries["error"].notna()].sort_values("block") if "error" in summaries else summaries[:0]
    if len(failed):
        others = f" ({len(failed)} blocks failed)" if len(failed) > 1 else ""
        raise InputError(f"{failed['error'].iloc[0]}{others}; the blocks scored are kept, --resume continues")
    manifest = blocks.manifest
    missing = [m["block"] for m in manifest if m["scored"] and not shard_path(out, m["block"]).exists()]
    if missing:
        raise PllscoreError(f"blocks {missing[:10]} have no output shard after the run; rerun with --resume")
    seconds = time.perf_counter() - t0
    retried = int((summaries["attempt"].astype(int) > 1).sum()) if len(summaries) else 0
    done_before = len(manifest) - len(blocks.todo) - sum(1 for m in manifest if m["scored"] == 0)
    meta.update(
        status="complete", finished=now(), manifest=manifest, rows=blocks.rows,
        provenance=json.loads(summaries["provenance"].iloc[0]) if len(summaries) else meta.get("provenance"),
        summary={
            "blocks": len(manifest), "blocks_done_before": done_before, "seconds": round(seconds, 3),
            "retried_blocks": retried,
        },
    )  # fmt: skip
    write_json(out / "_meta.json", meta)
    return RaySummary(os.fspath(out), blocks.rows, len(manifest), done_before, seconds, retried, files)


def _settings_record(job: JobSettings, files: list[str], options: Any) -> dict[str, Any]:
    """What the run records and resume compares: the inputs' content (not their paths), the model's files or
    revision, the version, and every recorded setting as resolved (the model read from its config alone)."""
    from pllscore._version import __version__
    from pllscore.io.provenance import content_fingerprint, named_model_identity

    name = job.model.model
    kind = job.model.kind or kind_from_model_name(name)  # a kind given (mntp) is the one the actors load
    asked = options.check_kind(kind, name)
    chosen = [kind] if kind in ("causal", "seq2seq") else list(job.text.metrics or (DEFAULT_METRIC,))
    norms = options.norms(options.table.unigram or options.table.unigram_corpus)
    identity = named_model_identity(name, job.model.revision)
    return {
        "inputs": files, "input_sha256": content_fingerprint(files), "model_fingerprint": identity["fingerprint"],
        "pllscore": __version__, "columns": SCHEMA,
        **RECORD.settings(
            job, asked, norms, _unigram_record(options.table) if norms else None, model=identity["name"],
            revision=identity["revision"], kind=kind, bos=True if kind == "causal" else None, metrics=chosen,
            eos=job.model.eos if kind == "seq2seq" else None,
        ),
    }  # fmt: skip


def _open_output(out: Path, settings: dict[str, Any], run: RunSettings) -> None:
    """Create the output folder, or continue it (``resume``: same recorded settings) or empty it (``force``)."""
    if out.exists() and any(out.iterdir()):
        if run.force:
            import shutil

            shutil.rmtree(out)
        elif not run.resume:
            raise InputError(f"output folder {os.fspath(out)!r} is not empty; pass --resume to continue it or --force")
        else:
            try:
                old = json.loads((out / "_meta.json").read_text())
            except (OSError, json.JSONDecodeError):
                raise InputError(
                    f"cannot resume {os.fspath(out)!r}: its _meta.json is missing or broken; use --force to start over"
                ) from None
            # outputs written before the kind was recorded: the kind the fingerprinted model's config gives
            # and before autocast was: a reduced dtype was autocast over float32 weights
            autocast = old.get("dtype") not in (None, "float32", "fp32")
            RECORD.check(old, settings, repr(os.fspath(out)), kind=settings["kind"], eos=None, autocast=autocast)
            for tmp in out.glob(".part-*.tmp"):  # shards cut off before their commit
                tmp.unlink()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create output folder {os.fspath(out)!r}: {e.strerror}") from None


@dataclass
class _Blocks:
    """The input cut into blocks: the object-store refs of those still to score, and where each comes from."""

    todo: list[Any] = field(default_factory=list)
    manifest: list[dict[str, Any]] = field(default_factory=list)
    rows: int = 0
    column: str | None = None


def _read_blocks(ray_api: Any, files: list[str], job: JobSettings, options: Any, out: Path) -> _Blocks:
    """Every input file, read with the local engine's reader block by block (the same rows, cells, row numbers
    and errors; txt and csv/tsv stream, a jsonl or Parquet file is read whole, one file at a time)."""
    from pllscore.io.readers import read_blocks

    got, t = _Blocks(), job.table
    for path in files:
        file_offset = got.rows
        for table in read_blocks(path, column=t.column, skip_empty=t.skip_empty, block_rows=job.ray.block_rows):
            frame = table.frame
            options.check_columns(table)  # the id, context and words columns, before Ray starts
            n_rows = len(table.rows) + len(table.skipped)
            if not n_rows:  # an empty file has no blocks
                continue
            if got.column is not None and table.column != got.column:
                raise InputError(
                    f"the texts of {path} are in column {table.column!r}, those of the files before it in "
                    f"{got.column!r}; give files with the same columns (or --column), or score them separately"
                )
            got.column, block = table.column, len(got.manifest)
            frame.insert(0, LINE, [-1 if line is None else line for line in table.lines])
            frame.insert(0, FILE, table.source)
            frame.insert(0, ROW, [file_offset + r for r in table.rows])
            frame.insert(0, BLOCK, block)
            got.manifest.append({"block": block, "file": path, "first_row": got.rows, "rows": n_rows,
                                 "scored": len(frame)})  # fmt: skip
            if len(frame) and not shard_path(out, block).exists():
                got.todo.append(ray_api.put(frame))  # into the object store (it spills to disk)
            got.rows += n_rows
    return got


def _score_blocks(ray_api: Any, blocks: _Blocks, job: JobSettings, options: Any, settings: dict[str, Any],
                  out: Path) -> Any:  # fmt: skip
    """Score the blocks to do on the actors of a model pool (one model per actor); one summary row per block."""
    import uuid

    import pandas as pd
    from tqdm.auto import tqdm

    columns = ["block", "rows", "seconds", "attempt", "provenance", "error"]
    if not blocks.todo:
        return pd.DataFrame(columns=columns)
    t = job.table
    files = sorted({m["file"] for m in blocks.manifest})
    recorded = {"source": ",".join(files), "column": blocks.column, "level": t.level, "id_column": t.id_column,
                "base": t.base, "surprisal": bool(t.surprisal)}  # fmt: skip
    # the actors write there: absolute, since a worker's working folder need not be the driver's (a Ray started
    # elsewhere, a cluster's nodes)
    shared = ray_api.put(BlockJob(uuid.uuid4().hex, options, recorded, os.path.abspath(out)))
    pool = ModelPool(job.model, job.ray, len(blocks.todo), fingerprint=settings["model_fingerprint"])
    shown = None if job.run.progress is None else not job.run.progress
    try:
        got = pool.map(score_block, [(shared, ref) for ref in blocks.todo])
        rows = list(tqdm(got, total=len(blocks.todo), unit="block", desc="ray", disable=shown))
    finally:
        pool.close()
    return pd.DataFrame(rows, columns=columns)


def kind_from_model_name(model: str | os.PathLike[str]) -> str | None:
    """Masked, causal or seq2seq, from a model name's config alone (the driver never loads weights)."""
    from pllscore.engine.gguf import find_gguf

    if find_gguf(model) is not None:  # GGUF files hold causal LMs only, and have no config.json
        return "causal"
    from transformers import AutoConfig

    from pllscore.engine.loading import detect_kind, model_not_found

    try:
        config = AutoConfig.from_pretrained(model)
    except (OSError, ValueError, KeyError) as e:
        raise model_not_found(model, e) from e
    return detect_kind(config)


def _unigram_record(table: Any) -> dict[str, Any]:
    """The unigram counts' source as recorded: a file by its content (the driver never loads the tokenizer
    that counts a corpus), else what the model says of itself (wordfreq, counts given in Python)."""
    from pllscore.io.provenance import content_fingerprint
    from pllscore.results.unigram import load_unigram

    if table.unigram_corpus is not None and not os.path.isfile(table.unigram_corpus):
        raise InputError(f"unigram corpus {os.fspath(table.unigram_corpus)!r} not found; check the path")
    # a table is read (and checked) here too, before Ray starts
    model = load_unigram(table.unigram) if table.unigram is not None else None
    source = table.unigram_corpus if table.unigram_corpus is not None else table.unigram
    path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
    if path is not None and os.path.isfile(path):
        kind = "corpus" if table.unigram_corpus is not None else "counts"
        return {"file": os.path.abspath(path), "sha256": content_fingerprint([path]), "kind": kind}
    return model.describe() if model is not None else {"source": str(source)}
