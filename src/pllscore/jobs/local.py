"""Score a whole file: read, check every text, score chunk by chunk, write as it goes.

:func:`score_file` is what ``pllscore score INPUT`` runs. Work is done in fixed chunks of
input rows; each finished chunk is committed as a part file (see :mod:`pllscore.io.writers`),
so an interrupted or killed run keeps its work, and ``resume=True`` continues after the last
committed chunk. Because chunks are the same in every run, a resumed output is identical to an
uninterrupted one, and a resume with another input, model or setting is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from pllscore.errors import InputError, NonFiniteError, PllscoreError
from pllscore.io.provenance import content_fingerprint, model_identity, now, run_record
from pllscore.io.readers import InputTable, read_input
from pllscore.io.writers import ResumableWriter, StreamWriter, check_resume, meta_path, output_format
from pllscore.jobs.table import META_KEYS, ScoreOptions
from pllscore.jobs.table import log_base as log_base_of

__all__ = ["Interrupted", "ScoreSummary", "score_file"]

DEFAULT_CHUNK = 256


class Interrupted(PllscoreError):
    """The run was stopped (Ctrl-C); every finished chunk is kept for ``resume=True``."""


@dataclass
class ScoreSummary:
    """What a :func:`score_file` run did."""

    output: str
    rows: int
    scored: int
    skipped: list[int] = field(default_factory=list)
    resumed_from: int = 0
    seconds: float = 0.0
    metrics: tuple[str, ...] = ()

    def line(self) -> str:
        """One line for the terminal."""
        rate = f" ({self.scored / self.seconds:.1f} texts/s)" if self.seconds > 0 and self.scored else ""
        skipped = f", skipped {len(self.skipped)} empty (rows {_short(self.skipped)})" if self.skipped else ""
        resumed = f", resumed after {self.resumed_from}" if self.resumed_from else ""
        done = f"scored {self.scored} of {self.rows} texts in {self.seconds:.1f} s"
        return f"{done}{rate}{resumed}{skipped} -> {self.output}"


def _short(rows: list[int]) -> str:
    return ", ".join(map(str, rows[:10])) + (f" and {len(rows) - 10} more" if len(rows) > 10 else "")


def score_file(
    input: str | os.PathLike[str] | Sequence[str],
    output: str | os.PathLike[str] | None = None,
    *,
    model: Any,
    metrics: str | Sequence[str] | None = None,
    level: str = "sentence",
    format: str | None = None,
    input_format: str | None = None,
    column: str | None = None,
    id_column: str | None = None,
    base: float | str = "e",
    surprisal: bool = False,
    device: str = "auto",
    dtype: str | None = None,
    max_tokens: int | None = None,
    compile: bool = False,
    share_prefixes: bool = True,
    resume: bool = False,
    force: bool = False,
    skip_empty: bool = False,
    progress: bool | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    stream: TextIO | None = None,
    long: str = "error",
    stride: int | None = None,
    norm: str | Sequence[str] | None = None,
    unigram: Any = None,
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
) -> ScoreSummary:
    """Score every text of a file and write the scores, one column per metric.

    Args:
        input: a .txt (one text per line), .csv, .tsv, .jsonl or .parquet file, ``"-"`` for stdin,
            or a list of texts.
        output: the output file (.csv, .tsv, .jsonl or .parquet); None writes TSV to ``stream`` (stdout).
        model: a Hub name, a local folder or a loaded scorer.
        metrics: masked-LM metric(s) or ``"all"``; must be None for a causal LM.
        level: ``"sentence"`` (the input's columns are kept), ``"word"`` or ``"token"``.
        format: output format, by default from the output's extension.
        input_format: input format, by default from the input's extension.
        column: the text column of a table (default: sentence, text or the only column).
        id_column: a column copied to every output row (word and token levels keep only it).
        base: ``"e"`` (nats) or 2 (bits).
        surprisal: write negated scores.
        device, dtype, max_tokens, compile, share_prefixes: passed to :func:`pllscore.load` (speed
            settings: they do not change the numbers, so ``resume`` does not check them).
        resume: continue an existing output after its last finished chunk; refused when the input's
            content, the model (its files or revision) or a setting that changes numbers or rows differs.
        force: overwrite an existing output.
        skip_empty: leave out empty texts (reported in the summary) instead of failing.
        progress: progress bar on stderr (None: only when stderr is a terminal).
        chunk_size: input rows scored and written at a time.
        stream: where output goes when ``output`` is None (default stdout).
        long: ``"error"`` or ``"window"`` for texts longer than the model allows (see :func:`pllscore.load`).
        stride: a causal model's window step in ``"window"`` mode.
        norm: sentence-score normalisation(s) (:data:`pllscore.results.norms.NORMS`); beside ``<metric>`` and
            ``<metric>_mean``, each of ``per-char``, ``slor``, ``norm-lp`` adds a ``<metric>_<norm>`` column.
        unigram: for ``slor``/``norm-lp``: a tsv/csv of token counts, ``"wordfreq"`` (word-level), or a model
            from :mod:`pllscore.results.unigram`.
        unigram_corpus: for ``slor``/``norm-lp``: a text file whose tokens (the model's tokenizer) are counted.
        context: score every text given this context (see :meth:`pllscore.MaskedScorer.score`).
        context_column: score every text given the value of this column in its row (empty: no context).
        sep: what joins a context and its text (default one space).
        words: what word scores and ``level="word"`` rows follow: ``"tokenizer"`` (default) or
            ``"whitespace"`` (see :meth:`pllscore.MaskedScorer.score`).
        words_column: a column holding each row's words, a JSON list of strings (or a list, in JSONL or
            Parquet) that, joined by ``word_sep``, is the row's text.
        word_sep: what joins the words of ``words_column`` (default one space).
        mask_by: what word-l2r and whole-word mask: ``"tokenizer"`` (default) or the user's ``"words"``.
        outputs: per-token outputs (``"entropy"``, ``"rank"``; word and token levels): ``<metric>_entropy``
            and ``<metric>_rank`` columns (at word level, the word's first token's).
        word_prob: ``"bow"`` corrects a causal LM's word scores for word-beginning-marking tokenizers
            (word level; see :mod:`pllscore.scoring.bow`).
        convention: ``"paper"`` (default: each text as given) or ``"lm-eval"`` (as lm-evaluation-harness
            reads it: ``sep + text`` after its prefix token; see :meth:`pllscore.MaskedScorer.score`).

    Raises:
        Interrupted: on Ctrl-C, after recording progress; rerun with ``resume=True``.
    """
    from pllscore.scoring.scorers import as_scorer

    options = ScoreOptions(
        metrics=metrics, level=level, id_column=id_column, base=base, surprisal=surprisal, long=long, norm=norm,
        unigram=unigram, unigram_corpus=unigram_corpus, context=context, context_column=context_column, sep=sep,
        words=words, words_column=words_column, word_sep=word_sep, mask_by=mask_by, outputs=tuple(outputs or ()),
        word_prob=word_prob, convention=convention,
    )  # fmt: skip
    options.check()
    out_name = None if output is None or os.fspath(output) == "-" else os.fspath(output)
    fmt = output_format(out_name, format)
    if resume and out_name is None:
        raise InputError("--resume needs an output file (-o); stdout cannot be resumed")
    if resume and isinstance(input, (str, os.PathLike)) and os.fspath(input) == "-":
        raise InputError("--resume needs the input in a file; stdin cannot be checked against the first run")
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise InputError(f"chunk_size must be a positive integer, got {chunk_size!r}")

    table = read_input(input, column=column, fmt=input_format, skip_empty=skip_empty)
    options.check_columns(table)  # before the model loads: a wrong column name fails at once
    if (
        out_name is not None
        and table.source != "<stdin>"
        and os.path.abspath(out_name) == os.path.abspath(table.source)
    ):
        raise InputError(f"output {out_name!r} is the input file; choose another output path")

    scorer = as_scorer(
        model,
        device=device,
        dtype=dtype,
        max_tokens=max_tokens,
        long=long,
        stride=stride,
        compile=compile,
        share_prefixes=share_prefixes,
    )
    if stride is not None and getattr(scorer, "stride", stride) != stride:
        raise InputError(
            f"the scorer given was loaded with stride={scorer.stride}, not {stride}; pass stride to pllscore.load"
        )
    prepared = options.prepare(scorer)
    job = prepared.table(table)
    chosen = prepared.metrics

    causal = scorer.kind == "causal"
    identity = model_identity(scorer)
    log_base = log_base_of(base)
    meta = {
        "input": os.path.abspath(table.source) if not table.source.startswith("<") else table.source,
        "input_sha256": _input_fingerprint(input, table),
        "n_input_rows": len(table.rows) + len(table.skipped),
        "level": level,
        "format": fmt,
        "column": table.column,
        "id_column": id_column,
        "base": "e" if log_base == "e" else log_base,
        "surprisal": bool(surprisal),
        "skip_empty": bool(skip_empty),
        "chunk_size": chunk_size,
        "long": long,
        "stride": scorer.stride if causal else None,  # type: ignore[union-attr]
        "bos": scorer.bos if causal else None,  # type: ignore[union-attr]
        "started": now(),
        **run_record(scorer, chosen),
        "model": identity["name"],  # a folder by its absolute path
        "model_fingerprint": identity["fingerprint"],
        **prepared.meta(),
    }
    if resume and out_name is not None and meta_path(out_name).exists():  # the norms change the columns
        old = json.loads(meta_path(out_name).read_text())
        old.setdefault("convention", "paper")  # an output written before the option was scored as given
        check_resume(old, meta, META_KEYS, repr(out_name))
    n = len(table.rows)
    writer: ResumableWriter | StreamWriter
    if out_name is None:
        writer = StreamWriter(fmt, stream)
    else:
        writer = ResumableWriter(out_name, fmt, meta, rows=n, resume=resume, force=force)

    from tqdm.auto import tqdm

    start_row = writer.rows_done
    t0 = time.perf_counter()
    bar = tqdm(
        total=n, initial=start_row, unit="text", desc="scoring", disable=None if progress is None else not progress
    )
    try:
        for lo in range(start_row, n, chunk_size):
            hi = min(lo + chunk_size, n)
            try:
                frame = job.rows(lo, hi)
            except NonFiniteError as e:
                kept = f"; the {lo} texts before it are kept (--resume continues)" if lo and out_name else ""
                raise NonFiniteError(e.index, e.value, e.dtype, where=table.where(e.index), suffix=kept) from None
            writer.append(frame, hi)
            bar.update(hi - lo)
        seconds = time.perf_counter() - t0
        writer.finish({"rows": n, "skipped": table.skipped, "seconds": round(seconds, 3)})
    except KeyboardInterrupt:
        writer.interrupt()
        raise Interrupted(
            f"interrupted after {writer.rows_done} of {n} texts; they are kept, rerun with --resume to continue"
        ) from None
    finally:
        bar.close()
    return ScoreSummary(
        output=out_name or "<stdout>",
        rows=n,
        scored=n - start_row,
        skipped=table.skipped,
        resumed_from=start_row,
        seconds=seconds,
        metrics=chosen,
    )


def _input_fingerprint(input: Any, table: InputTable) -> str | None:
    """SHA-256 of the input file's bytes, or of a list of texts; None for stdin (which cannot be resumed)."""
    if table.source == "<stdin>":
        return None
    if not isinstance(input, (str, os.PathLike)):
        given = {"texts": table.texts, "rows": table.rows, "skipped": table.skipped}
        return hashlib.sha256(json.dumps(given, ensure_ascii=False).encode()).hexdigest()
    return content_fingerprint([input])
