"""Score corpora on a Ray cluster with Ray Data: one model per actor, sharded Parquet, resumable.

The driver reads every input with pllscore's own reader (:func:`pllscore.io.readers.read_blocks`,
what the local engine reads with, so a file gives the same rows, cells, row numbers and errors
on both engines), one file at a time in file order, cut into fixed blocks of ``block_rows``
input rows that go into Ray's object store, so block ``k`` and its row ids are the same in
every run. An actor pool (``map_batches`` with a class,
one model loaded per actor) scores each block with the local engine and writes
``part-<k>.parquet`` atomically. Ray restarts an actor that dies and retries its block; a
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
from pllscore.io.formats import INPUT_SUFFIXES as _SUFFIXES

__all__ = ["RaySummary", "score_dataset"]

# the columns the driver adds to each block: its number, and each row's id over all inputs
_BLOCK, _ROW = "_pllscore_block", "_pllscore_row"
# and where each row comes from, so that an error names the file and line as the local engine does
_FILE, _LINE = "_pllscore_file", "_pllscore_line"


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


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError("the ray engine needs Ray: pip install 'pllscore[ray]'") from None
    return ray


def expand_inputs(inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """Files from paths, folders (their known text/table files, recursively) and globs; sorted."""
    items = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    files: list[str] = []
    for item in items:
        name = os.fspath(item)
        if os.path.isdir(name):
            found = [str(p) for p in Path(name).rglob("*") if p.is_file() and p.suffix.lower() in _SUFFIXES]
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
        if Path(f).suffix.lower() not in _SUFFIXES:
            raise InputError(f"cannot tell the format of {f!r}; use .txt, .csv, .tsv, .jsonl or .parquet files")
    return sorted(dict.fromkeys(os.path.abspath(f) for f in files))


def _shard(out: Path, block: int) -> Path:
    from pllscore.io.writers import part_name

    return out / part_name(block, "parquet")


class _BlockScorer:
    """Ray Data actor: loads the model once, then scores whole blocks and writes their shards."""

    def __init__(
        self, model: str, load: dict[str, Any], options: Any, settings: dict[str, Any], out: str, threads: int
    ) -> None:
        import torch

        from pllscore.scoring import scorers

        if threads > 0:
            torch.set_num_threads(threads)
        self.scorer = scorers.load(model, **load)  # looked up at call time: tests/distributed/actor_crash.py wraps it
        self.prepared = options.prepare(self.scorer)  # the metrics, the unigram model: once per actor
        self.settings, self.column, self.out = settings, settings["column"], Path(out)

    def __call__(self, batch: Any) -> Any:
        import pandas as pd

        return pd.DataFrame([self._block(int(b), g) for b, g in batch.groupby(_BLOCK, sort=True)])

    def _block(self, block: int, frame: Any) -> dict[str, Any]:
        from pllscore.io.provenance import run_record
        from pllscore.io.readers import InputTable
        from pllscore.io.writers import write_part

        attempts = self.out / "_attempts"
        attempts.mkdir(exist_ok=True)
        attempt = len(list(attempts.glob(f"{block}.*"))) + 1
        (attempts / f"{block}.{attempt}").touch()
        t0 = time.perf_counter()
        rows = frame[_ROW].tolist()
        lines = [None if line < 0 else int(line) for line in frame[_LINE].tolist()]
        data = frame.drop(columns=[_BLOCK, _ROW, _LINE, _FILE]).reset_index(drop=True)
        table = InputTable(
            source=frame[_FILE].iloc[0], frame=data, column=self.column, rows=rows, lines=lines, skipped=[]
        )
        try:  # the local engine's checks and scoring; an error names the file and line
            out = self.prepared.table(table).rows(0, len(rows))
        except PllscoreError as e:  # returned, not raised: Ray's wrappers lose the error's type on the way back
            return {"block": block, "rows": len(rows), "seconds": time.perf_counter() - t0, "attempt": attempt,
                    "provenance": None, "error": str(e)}  # fmt: skip
        record = run_record(self.scorer, self.prepared.metrics)
        meta = {**self.settings, **self.prepared.meta(), **record, "block": block}
        # one atomic file per block (temporary name, fsync, rename): the block's commit point
        write_part(_shard(self.out, block), out, "parquet", metadata={"pllscore": json.dumps(meta, default=str)})
        return {"block": block, "rows": len(rows), "seconds": time.perf_counter() - t0, "attempt": attempt,
                "provenance": json.dumps(record, default=str), "error": None}  # fmt: skip


def score_dataset(
    inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    output_dir: str | os.PathLike[str],
    *,
    model: str,
    metrics: str | Sequence[str] | None = None,
    level: str = "sentence",
    column: str | None = None,
    id_column: str | None = None,
    base: float | str = "e",
    surprisal: bool = False,
    skip_empty: bool = False,
    address: str | None = None,
    workers: int | None = None,
    cpus_per_worker: int = 1,
    gpus_per_worker: float = 0,
    block_rows: int = 1024,
    device: str = "auto",
    dtype: str | None = None,
    max_tokens: int | None = None,
    resume: bool = False,
    force: bool = False,
    long: str = "error",
    stride: int | None = None,
    compile: bool = False,
    share_prefixes: bool = True,
    norm: str | Sequence[str] | None = None,
    unigram: str | os.PathLike[str] | None = None,
    unigram_corpus: str | os.PathLike[str] | None = None,
    context: str | None = None,
    context_column: str | None = None,
    sep: str = " ",
    words: str = "tokenizer",
    words_column: str | None = None,
    word_sep: str = " ",
    mask_by: str = "tokenizer",
    outputs: Sequence[str] = (),
    word_prob: str | None = None,
    convention: str = "paper",
) -> RaySummary:
    """Score files, folders or globs on a Ray cluster; write sharded Parquet into ``output_dir``.

    Args:
        inputs: .txt/.csv/.tsv/.jsonl/.parquet files, folders of them, or globs.
        output_dir: the folder for ``part-<block>.parquet`` shards and ``_meta.json``.
        model: a Hub name or a folder every worker can read.
        metrics, level, column, id_column, base, surprisal, skip_empty: as for :func:`pllscore.score_file`.
        address: ``None`` starts (or joins) a local Ray; ``"auto"`` joins the running cluster;
            ``"ray://host:10001"`` a remote one.
        workers: actors (one model each); default: as many as the cluster's CPUs allow.
        cpus_per_worker, gpus_per_worker: resources per actor.
        block_rows: input rows per block (the unit of work, of resume and of output shards).
        resume: skip blocks whose shard exists; force: delete an existing output first.
        long, stride, compile, share_prefixes: as for :func:`pllscore.load`.
        norm, unigram, unigram_corpus, context, context_column, sep, words, words_column, word_sep, mask_by,
            outputs, word_prob, convention: as for :func:`pllscore.score_file` (a unigram table or corpus
            file must be readable by every worker; each actor counts a corpus once).

    Returns:
        A summary: rows, blocks, seconds, retried blocks. Output columns are those of a local
        ``score_file`` run, ``row`` being the row's index over all input files in sorted order.
    """
    ray = _ray()
    import pandas as pd

    from pllscore.io.provenance import command_line, now
    from pllscore.io.readers import read_blocks
    from pllscore.jobs.table import ScoreOptions
    from pllscore.metrics import resolve_metrics

    options = ScoreOptions(
        metrics=metrics, level=level, id_column=id_column, base=base, surprisal=surprisal, long=long, norm=norm,
        unigram=unigram, unigram_corpus=unigram_corpus, context=context, context_column=context_column, sep=sep,
        words=words, words_column=words_column, word_sep=word_sep, mask_by=mask_by, outputs=tuple(outputs or ()),
        word_prob=word_prob, convention=convention,
    )  # fmt: skip
    options.check()
    if block_rows < 1:
        raise InputError(f"block_rows must be positive, got {block_rows}")
    files = expand_inputs(inputs)
    out = Path(output_dir)
    kind = _model_kind(model)
    asked = options.check_kind(kind, model)
    chosen = ["causal"] if kind == "causal" else list(resolve_metrics(metrics or "word-l2r"))
    # what resume compares: the inputs' content (not their paths), the model's files or revision, and
    # every setting that changes a number or a row
    from pllscore._version import __version__
    from pllscore.io.provenance import content_fingerprint, named_model_identity
    from pllscore.io.writers import check_resume, write_json

    identity = named_model_identity(model)
    settings = {
        "inputs": files, "input_sha256": content_fingerprint(files), "level": level, "column": column,
        "id_column": id_column, "base": base, "surprisal": bool(surprisal), "skip_empty": bool(skip_empty),
        "block_rows": block_rows, "model": identity["name"], "revision": identity["revision"],
        "model_fingerprint": identity["fingerprint"], "metrics": chosen, "dtype": dtype, "long": long,
        "stride": stride, "bos": True if kind == "causal" else None, "pllscore": __version__,
        **_options_record(options, asked),
    }  # fmt: skip
    meta_file = out / "_meta.json"
    if out.exists() and any(out.iterdir()):
        if force:
            import shutil

            shutil.rmtree(out)
        elif not resume:
            raise InputError(f"output folder {os.fspath(out)!r} is not empty; pass --resume to continue it or --force")
        else:
            try:
                old = json.loads(meta_file.read_text())
            except (OSError, json.JSONDecodeError):
                raise InputError(
                    f"cannot resume {os.fspath(out)!r}: its _meta.json is missing or broken; use --force to start over"
                ) from None
            check_resume(old, settings, [k for k in settings if k != "inputs"], repr(os.fspath(out)))
            for tmp in out.glob(".part-*.tmp"):  # shards cut off before their commit
                tmp.unlink()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create output folder {os.fspath(out)!r}: {e.strerror}") from None
    meta = {**settings, "engine": "ray", "started": now(), "command": command_line(), "status": "running"}
    write_json(meta_file, meta)

    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)

    t0 = time.perf_counter()
    todo, manifest, offset, block = [], [], 0, 0
    text_col: str | None = None
    for path in files:
        # the local engine's reader, block by block: the same rows, cells, row numbers and errors
        # (txt and csv/tsv stream; a jsonl or Parquet file is read whole, one file at a time)
        file_offset = offset
        for table in read_blocks(path, column=column, skip_empty=skip_empty, block_rows=block_rows):
            frame = table.frame
            options.check_columns(table)  # the id, context and words columns, before Ray starts
            n_rows = len(table.rows) + len(table.skipped)
            if not n_rows:  # an empty file has no blocks
                continue
            if text_col is not None and table.column != text_col:
                raise InputError(
                    f"the texts of {path} are in column {table.column!r}, those of the files before it in "
                    f"{text_col!r}; give files with the same columns (or --column), or score them separately"
                )
            text_col = table.column
            frame.insert(0, _LINE, [-1 if line is None else line for line in table.lines])
            frame.insert(0, _FILE, table.source)
            frame.insert(0, _ROW, [file_offset + r for r in table.rows])
            frame.insert(0, _BLOCK, block)
            manifest.append({"block": block, "file": path, "first_row": offset, "rows": n_rows, "scored": len(frame)})
            if len(frame) and not _shard(out, block).exists():
                todo.append(ray.put(frame))  # into the object store (it spills to disk); the driver keeps a ref
            offset += n_rows
            block += 1
    settings_actor = {"source": ",".join(files), "column": text_col, "level": level, "id_column": id_column,
                      "base": base, "surprisal": bool(surprisal)}  # fmt: skip
    done_before = block - len(todo) - sum(1 for m in manifest if m["scored"] == 0)
    summaries = pd.DataFrame(columns=["block", "rows", "seconds", "attempt", "provenance", "error"])
    if todo:
        cluster_cpus = int(ray.cluster_resources().get("CPU", 1))
        n_workers = workers or max(1, min(len(todo), cluster_cpus // max(cpus_per_worker, 1)))
        load = {"device": "cuda" if gpus_per_worker else device, "dtype": dtype, "max_tokens": max_tokens,
                "long": long, "stride": stride, "compile": compile, "share_prefixes": share_prefixes}  # fmt: skip
        result = ray.data.from_pandas_refs(todo).map_batches(
            _BlockScorer,
            batch_size=None,  # one whole input block per call
            batch_format="pandas",
            concurrency=n_workers,
            num_cpus=cpus_per_worker,
            num_gpus=gpus_per_worker or None,
            fn_constructor_kwargs={
                "model": model,
                "load": load,
                "options": options,
                "settings": settings_actor,
                "out": str(out),
                "threads": cpus_per_worker,
            },  # fmt: skip
            max_restarts=4,  # an actor that dies is restarted and its block retried
            max_task_retries=4,
        )
        try:
            summaries = result.to_pandas()
        except Exception as e:  # Ray wraps errors raised in actors; surface ours as one line
            ours = _pllscore_cause(e)
            if ours is not None:
                raise InputError(str(ours)) from None
            raise
    failed = summaries[summaries["error"].notna()].sort_values("block") if "error" in summaries else summaries[:0]
    if len(failed):
        others = f" ({len(failed)} blocks failed)" if len(failed) > 1 else ""
        raise InputError(f"{failed['error'].iloc[0]}{others}; the blocks scored are kept, --resume continues")
    missing = [m["block"] for m in manifest if m["scored"] and not _shard(out, m["block"]).exists()]
    if missing:
        raise PllscoreError(f"blocks {missing[:10]} have no output shard after the run; rerun with --resume")
    seconds = time.perf_counter() - t0
    retried = int((summaries["attempt"].astype(int) > 1).sum()) if len(summaries) else 0
    meta.update(
        status="complete", finished=now(), manifest=manifest, rows=offset,
        provenance=json.loads(summaries["provenance"].iloc[0]) if len(summaries) else meta.get("provenance"),
        summary={
            "blocks": block, "blocks_done_before": done_before, "seconds": round(seconds, 3), "retried_blocks": retried,
        },
    )  # fmt: skip
    write_json(meta_file, meta)
    return RaySummary(os.fspath(out), offset, block, done_before, seconds, retried, files)


def _pllscore_cause(error: BaseException) -> PllscoreError | None:
    """pllscore's own error inside Ray's wrappers (a task error around a UDF error around ours), if any."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        if isinstance(e, PllscoreError):
            return e
        seen.add(id(e))
        todo += [getattr(e, "cause", None), e.__cause__, e.__context__]
    return None


def _model_kind(model: str) -> str | None:
    """Masked or causal, from the config alone (the driver never loads weights)."""
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


def _options_record(options: Any, asked: Sequence[str]) -> dict[str, Any]:
    """What resume compares of the options beyond the common settings: contexts, words, convention,
    and (when asked) the norms with the unigram source's content, the per-token outputs, the BOW correction."""
    from pllscore.io.provenance import content_fingerprint
    from pllscore.results.unigram import load_unigram

    out = options.meta()
    norms = options.norms(options.unigram or options.unigram_corpus)
    if norms:
        if options.unigram_corpus is not None and not os.path.isfile(options.unigram_corpus):
            raise InputError(f"unigram corpus {os.fspath(options.unigram_corpus)!r} not found; check the path")
        # a table is read (and checked) here too, before Ray starts
        model = load_unigram(options.unigram) if options.unigram is not None else None
        source = options.unigram_corpus if options.unigram_corpus is not None else options.unigram
        path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
        if path is not None and os.path.isfile(path):
            unigram = {"file": os.path.abspath(path), "sha256": content_fingerprint([path]),
                       "kind": "corpus" if options.unigram_corpus is not None else "counts"}  # fmt: skip
        else:  # wordfreq, or counts given in Python: what the model says of itself (source, size, total)
            unigram = model.describe() if model is not None else {"source": str(source)}
        out.update(norm=list(norms), unigram=unigram)
    per_token = [n for n in asked if n != "word_correction"]
    if per_token:
        out["outputs"] = per_token
    if "word_correction" in asked:
        out["word_prob"] = "bow"
    return out
