"""Score a whole file: read, check every text, score chunk by chunk, write as it goes.

:func:`score_file` is what ``pllscore score INPUT`` runs. Work is done in fixed chunks of
input rows; each finished chunk is committed as a part file (see :mod:`pllscore.io.writers`),
so an interrupted or killed run keeps its work, and ``resume=True`` continues after the last
committed chunk. Because chunks are the same in every run, a resumed output is identical to an
uninterrupted one, and a resume with another input, model or setting is refused. On Ctrl-C the
finished batches of the chunk under way are kept too (:mod:`pllscore.engine.batch_log`): the resumed
run files them and runs only the chunk's other batches, packed as they were. The progress bar counts
texts and moves with each of the engine's batches (:func:`pllscore.engine.progress.reporting`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from pllscore.engine.batch_log import BatchLog, keeping
from pllscore.engine.progress import reporting
from pllscore.errors import InputError, NonFiniteError, PllscoreError
from pllscore.io.provenance import content_fingerprint, model_identity, now, run_record
from pllscore.io.readers import InputTable, read_input
from pllscore.io.writers import ResumableWriter, StreamWriter, meta_path, output_format
from pllscore.jobs.run_settings import JobSettings, RunRecord, gather_job
from pllscore.jobs.table import TableJob
from pllscore.results.columns import SCHEMA
from pllscore.settings import ModelSettings, RunSettings, TableSettings, TextSettings

__all__ = ["Interrupted", "ScoreSummary", "score_file"]

DEFAULT_CHUNK = RunSettings().chunk_size
#: what a resumed file run must share with the first one: the input's content and the output's format,
#: the model's files, the library's version and every recorded setting
RECORD = RunRecord(
    ("input_sha256", "n_input_rows", "model_fingerprint", "format", "pllscore", "columns"),
    (ModelSettings, TextSettings, TableSettings, RunSettings),
)
RESUME_KEYS = RECORD.keys


class Interrupted(PllscoreError):
    """The run was stopped (Ctrl-C, or SIGTERM on the command line); every finished chunk, and the finished
    batches of the chunk under way, are kept for ``resume=True``. ``stopped_by``: the signal's name when it was
    not Ctrl-C (``"SIGTERM"``)."""

    def __init__(self, message: str, stopped_by: str | None = None) -> None:
        super().__init__(message)
        self.stopped_by = stopped_by


@dataclass
class ScoreSummary:
    """What a :func:`score_file` run did."""

    output: str
    rows: int  # the texts to score: the input's, less those skipped
    scored: int
    skipped: list[int] = field(default_factory=list)
    skipped_where: str = ""  # the skipped texts as the refusal names them ("lines 2, 5"); rows when not given
    resumed_from: int = 0
    seconds: float = 0.0
    metrics: tuple[str, ...] = ()

    def line(self) -> str:
        """One line for the terminal."""
        rate = f" ({self.scored / self.seconds:.1f} texts/s)" if self.seconds > 0 and self.scored else ""
        where = self.skipped_where or f"rows {_short(self.skipped)}"
        skipped = f", skipped {len(self.skipped)} empty ({where})" if self.skipped else ""
        resumed = f", resumed after {self.resumed_from}" if self.resumed_from else ""
        given = self.rows + len(self.skipped)  # the input's texts, the empty ones skipped among them
        done = f"scored {self.scored} of {given} texts in {self.seconds:.1f} s"
        nothing = ""
        if not self.rows:
            held = "no text" if not self.skipped else "empty texts only"
            nothing = f"; the input held {held}: the output has its columns and no row"
        return f"{done}{rate}{resumed}{skipped} -> {self.output}{nothing}"


def _short(rows: list[int]) -> str:
    return ", ".join(map(str, rows[:10])) + (f" and {len(rows) - 10} more" if len(rows) > 10 else "")


def score_file(
    input: str | os.PathLike[str] | Sequence[str] | Any,
    output: str | os.PathLike[str] | None = None,
    *,
    model: Any,
    stream: TextIO | None = None,
    **options: Any,
) -> ScoreSummary:
    """Score every text of a file and write the scores, one column per metric.

    Args:
        input: a .txt (one text per line), .csv, .tsv, .jsonl or .parquet file, ``"-"`` for stdin,
            a list of texts, or a DataFrame (as a table file).
        output: the output file (.csv, .tsv, .jsonl or .parquet); None writes TSV to ``stream`` (stdout).
        model: a Hub name, a local folder, a .gguf file, a loaded scorer, or a
            :class:`~pllscore.settings.ModelSettings` (the model and how it is loaded: device, dtype,
            max_tokens, compile, share_prefixes, long, stride; speed settings never change a number).
        stream: where output goes when ``output`` is None (default stdout).
        **options: the settings objects below, each by its group's name, and any field of them by name
            (``metrics="all"``, ``level="word"``, ``device="cpu"``, ``resume=True``, ...), put into the object
            given or the defaults; an unknown name is refused.
            text: :class:`~pllscore.settings.TextSettings`: ``metrics`` (masked LMs; None for a causal LM),
                ``context``/``context_column``/``sep``, ``words``/``words_column``/``word_sep``/``mask_by``,
                per-token ``outputs`` (entropy, rank), ``word_prob`` (bow) and ``convention`` (paper, lm-eval);
                see :meth:`pllscore.MaskedScorer.score`.
            table: :class:`~pllscore.settings.TableSettings`: ``column``, ``id_column``, ``level`` (sentence keeps
                the input's columns, word, token), ``base``, ``surprisal``, ``norm`` (per-char, slor, norm-lp: a
                ``<metric>_logprob_<norm>`` column each) with ``unigram``/``unigram_corpus``, ``format``,
                ``input_format`` and ``skip_empty`` (empty texts left out and reported instead of refused).
            run: :class:`~pllscore.settings.RunSettings`: ``resume`` (continue after the last finished chunk and batch;
                refused when the input's content, the model or a recorded setting differs), ``force``,
                ``progress`` (None: a bar only when stderr is a terminal) and ``chunk_size``.

    Raises:
        Interrupted: on Ctrl-C, after recording progress (the finished chunks, and the finished batches of the
            chunk under way); rerun with ``resume=True``.
    """
    job = gather_job(model, options, what="score_file")
    return _FileRun(job, input, output).run(stream)


class _FileRun:
    """One :func:`score_file` run: its settings, input, model and output checked before any scoring."""

    def __init__(self, job: JobSettings, input: Any, output: Any) -> None:
        self.settings, self.input = job, input
        options = job.score_options  # checked: a bad option fails before the input is read
        self.out_name = None if output is None or os.fspath(output) == "-" else os.fspath(output)
        self.fmt = output_format(self.out_name, job.table.format)
        if job.run.resume and self.out_name is None:
            raise InputError("--resume needs an output file (-o); stdout cannot be resumed")
        if job.run.resume and isinstance(input, (str, os.PathLike)) and os.fspath(input) == "-":
            raise InputError("--resume needs the input in a file; stdin cannot be checked against the first run")
        t = job.table
        self.table = read_input(input, column=t.column, fmt=t.input_format, skip_empty=t.skip_empty)
        options.check_columns(self.table)  # before the model loads: a wrong column name fails at once
        if self.out_name is not None and self.table.source != "<stdin>":
            if os.path.abspath(self.out_name) == os.path.abspath(self.table.source):
                raise InputError(f"output {self.out_name!r} is the input file; choose another output path")
        self.scorer = _load(job.model)
        self.prepared = options.prepare(self.scorer)
        self.job = self.prepared.table(self.table)

    def meta(self) -> dict[str, Any]:
        """What the run records: the input, the model, every recorded setting as resolved, the versions."""
        job, scorer, table, prepared = self.settings, self.scorer, self.table, self.prepared
        causal = scorer.kind == "causal"
        provenance = run_record(scorer, prepared.metrics)
        identity = model_identity(scorer)
        unigram = prepared.unigram.describe() if prepared.unigram is not None else None
        settings = RECORD.settings(
            job, prepared.asked, prepared.norms, unigram,
            model=identity["name"], revision=scorer.revision, kind=scorer.kind, dtype=provenance["dtype"],
            autocast=provenance["autocast"],
            bos=scorer.bos if causal else None, stride=scorer.stride if causal else None,  # type: ignore[union-attr]
            eos=scorer.eos if scorer.kind == "seq2seq" else None,  # type: ignore[union-attr]
            metrics=list(prepared.metrics), column=table.column,
        )  # fmt: skip
        return {
            "input": os.path.abspath(table.source) if not table.source.startswith("<") else table.source,
            "input_sha256": _input_fingerprint(self.input, table),
            "n_input_rows": len(table.rows) + len(table.skipped),
            "format": self.fmt,
            "columns": SCHEMA,
            "started": now(),
            **provenance,
            **settings,
            "model_fingerprint": identity["fingerprint"],
        }

    def run(self, stream: TextIO | None) -> ScoreSummary:
        """Score chunk by chunk into the output (resuming it when asked); the summary."""
        run, out_name, n = self.settings.run, self.out_name, len(self.table.rows)
        meta = self.meta()
        if run.resume and out_name is not None and meta_path(out_name).exists():
            old = json.loads(meta_path(out_name).read_text())
            # older outputs: no encoder-decoder LM; a reduced dtype was autocast over float32 weights
            RECORD.check(old, meta, repr(out_name), eos=None, autocast=old.get("dtype") not in (None, "float32"))
        writer: ResumableWriter | StreamWriter
        if out_name is None:
            writer = StreamWriter(self.fmt, stream)
        else:
            writer = ResumableWriter(out_name, self.fmt, meta, rows=n, resume=run.resume, force=run.force)
        start_row, t0 = writer.rows_done, time.perf_counter()
        if n:
            _write_chunks(self.job, writer, start_row, n, run, keep=out_name is not None)
        else:  # no text: the output still gets its columns (a CSV/TSV header, a Parquet schema)
            if getattr(writer, "chunks_done", 0) == 0:
                writer.append(self._no_rows(), 0)
            writer.finish({"rows": 0, "skipped": self.table.skipped, "seconds": 0.0})
        seconds = time.perf_counter() - t0
        return ScoreSummary(
            output=out_name or "<stdout>", rows=n, scored=n - start_row, skipped=self.table.skipped,
            skipped_where=self.table.skipped_where(),
            resumed_from=start_row, seconds=seconds, metrics=self.prepared.metrics,
        )  # fmt: skip

    def _no_rows(self) -> Any:
        """The output's columns with no row: a stand-in text ``a`` scored with the run's settings, its rows dropped
        (the columns then are exactly those a text would get, whatever the level, metrics and outputs)."""
        import pandas as pd

        from pllscore.io.input_table import InputTable

        t, text = self.table, self.settings.text
        frame = pd.DataFrame({c: [""] for c in t.frame.columns} or {t.column: [""]})
        frame[t.column] = "a"
        if text.words_column is not None:
            frame[text.words_column] = '["a"]'
        stand_in = InputTable(source=t.source, frame=frame, column=t.column, rows=[0], lines=[None], skipped=[])
        return self.prepared.table(stand_in).rows(0, 1).iloc[:0]


def _load(settings: ModelSettings) -> Any:
    """The scorer of the model settings (a scorer given as is; its stride must be the one asked)."""
    from pllscore.scoring.api import as_scorer

    scorer = as_scorer(settings.model, **settings.load_kwargs())
    stride = settings.stride
    if stride is not None and getattr(scorer, "stride", stride) != stride:
        raise InputError(
            f"the scorer given was loaded with stride={scorer.stride}, not {stride}; pass stride to pllscore.load"
        )
    return scorer


def _write_chunks(job: TableJob, writer: Any, start_row: int, n: int, run: RunSettings, *, keep: bool) -> None:
    """Score rows ``start_row:n`` chunk by chunk into ``writer``; on Ctrl-C keep the chunks done, and the finished
    batches of the chunk under way."""
    from tqdm.auto import tqdm

    t0, table = time.perf_counter(), job.table
    shown = None if run.progress is None else not run.progress
    bar = _TextBar(tqdm(total=n, initial=start_row, unit="text", desc="scoring", disable=shown), start_row)
    kept = 0  # texts of the chunk under way whose finished batches are kept
    try:
        for lo in range(start_row, n, run.chunk_size):
            hi = min(lo + run.chunk_size, n)
            log = BatchLog(writer.kept_batches())
            try:
                with keeping(log), reporting(bar.within(lo, hi)):
                    frame = job.rows(lo, hi, progress=True)  # the engine's batches move this bar, not their own
                writer.append(frame, hi)
            except NonFiniteError as e:
                kept_rows = f"; the {lo} texts before it are kept (--resume continues)" if lo and keep else ""
                raise NonFiniteError(e.index, e.value, e.dtype, where=table.where(e.index), suffix=kept_rows) from None
            except KeyboardInterrupt:
                kept = hi - lo if writer.keep_batches(log.dump()) else 0
                raise
            bar.to(hi)
        writer.finish({"rows": n, "skipped": table.skipped, "seconds": round(time.perf_counter() - t0, 3)})
    except KeyboardInterrupt as e:
        writer.interrupt()
        by = str(e.args[0]) if e.args else None  # the command line's SIGTERM handler names the signal
        more = f" and part of the next {kept}" if kept else ""
        raise Interrupted(
            f"interrupted{f' by {by}' if by else ''} after {writer.rows_done} of {n} texts{more}; they are kept, "
            "rerun with --resume to continue",
            stopped_by=by,
        ) from None
    finally:
        bar.close()


class _TextBar:
    """A file run's bar, in texts: each chunk's share moves with its batches (see :meth:`within`)."""

    def __init__(self, bar: Any, start: int) -> None:
        self.bar, self.n = bar, start  # counted here: a disabled tqdm bar does not count

    def to(self, n: int) -> None:
        """Move to ``n`` texts (never back)."""
        if n > self.n:
            self.bar.update(n - self.n)
            self.n = n

    def within(self, lo: int, hi: int) -> Any:
        """What the engine tells (work done, of a total) while it scores rows ``lo:hi``: the same share of them."""
        return lambda done, total: self.to(lo + (hi - lo) * done // total) if total else None

    def close(self) -> None:
        self.bar.close()


def _input_fingerprint(input: Any, table: InputTable) -> str | None:
    """SHA-256 of the input file's bytes, or of a list of texts (a DataFrame's: with its other columns); None for
    stdin (which cannot be resumed)."""
    if table.source == "<stdin>":
        return None
    if not isinstance(input, (str, os.PathLike)):
        given: dict[str, Any] = {"texts": table.texts, "rows": table.rows, "skipped": table.skipped}
        if hasattr(input, "columns"):  # a DataFrame: its contexts, words, ... are input too
            given["columns"] = {str(c): table.frame[c].tolist() for c in table.frame.columns}
        return hashlib.sha256(json.dumps(given, ensure_ascii=False, default=str).encode()).hexdigest()
    return content_fingerprint([input])
