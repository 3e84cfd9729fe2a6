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

from pllscore.errors import InputError, InputTooLongError, NonFiniteError, PllscoreError
from pllscore.io.readers import InputTable, read_input
from pllscore.io.writers import ResumableWriter, StreamWriter, check_resume, meta_path, output_format
from pllscore.provenance import content_fingerprint, model_identity, now, run_record
from pllscore.scoring.words import WORDS_KEYS, as_words, table_words, words_meta

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
        norm: sentence-score normalisation(s) (:data:`pllscore.results.NORMS`); beside ``<metric>`` and
            ``<metric>_mean``, each of ``per-char``, ``slor``, ``norm-lp`` adds a ``<metric>_<norm>`` column.
        unigram: for ``slor``/``norm-lp``: a tsv/csv of token counts, ``"wordfreq"`` (word-level), or a model
            from :mod:`pllscore.unigram`.
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
    from pllscore.metrics import resolve_metrics
    from pllscore.scorer import as_scorer
    from pllscore.scoring.encoding import check_convention

    out_name = None if output is None or os.fspath(output) == "-" else os.fspath(output)
    fmt = output_format(out_name, format)
    if level not in ("sentence", "word", "token"):
        raise InputError(f"unknown level {level!r}; choose sentence, word or token")
    if resume and out_name is None:
        raise InputError("--resume needs an output file (-o); stdout cannot be resumed")
    if resume and isinstance(input, (str, os.PathLike)) and os.fspath(input) == "-":
        raise InputError("--resume needs the input in a file; stdin cannot be checked against the first run")
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise InputError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    log_base = base if base in ("e", 2, 2.0) else _base(base)

    table = read_input(input, column=column, fmt=input_format, skip_empty=skip_empty)
    if id_column is not None and id_column not in table.frame.columns:
        cols = ", ".join(map(str, table.frame.columns))
        raise InputError(f"id column {id_column!r} not in {table.source}; its columns are: {cols}")
    if (
        out_name is not None
        and table.source != "<stdin>"
        and os.path.abspath(out_name) == os.path.abspath(table.source)
    ):
        raise InputError(f"output {out_name!r} is the input file; choose another output path")

    contexts = _contexts(table, context, context_column)
    given_words = table_words(table, words, words_column, word_sep)
    check_convention(convention)
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
    if scorer.kind == "causal":
        if metrics:
            raise InputError(f"{scorer.name!r} is a causal LM, scored by its log-likelihood; drop the metric option")
        chosen: tuple[str, ...] = ("causal",)
    else:
        chosen = scorer.metric if metrics is None or metrics == [] else resolve_metrics(metrics)
    _check_all(scorer, table, long, contexts, sep, given_words, mask_by, convention)
    from pllscore.results import check_norms
    from pllscore.unigram import load_unigram

    uni = load_unigram(unigram, corpus=unigram_corpus, tokenizer=getattr(scorer, "tokenizer", None))
    norms = tuple(n for n in check_norms(norm, uni) if n not in ("sum", "mean"))  # sum and mean: always there
    if norms and level != "sentence":
        raise InputError(f"--norm {norms[0]} is a sentence score; use --level sentence")
    uni = uni if any(n in ("slor", "norm-lp") for n in norms) else None
    asked = _check_outputs(outputs, word_prob, scorer.kind, level)

    causal = scorer.kind == "causal"
    identity = model_identity(scorer)
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
        **({"norm": list(norms), "unigram": uni.describe() if uni is not None else None} if norms else {}),
        **({"context": context, "context_column": context_column, "sep": sep} if contexts is not None else {}),
        **words_meta(words, words_column, word_sep, mask_by),
        **({"outputs": [n for n in asked if n != "word_correction"]} if set(asked) - {"word_correction"} else {}),
        **({"word_prob": "bow"} if "word_correction" in asked else {}),
        "convention": convention,
    }
    if resume and out_name is not None and meta_path(out_name).exists():  # the norms change the columns
        old = json.loads(meta_path(out_name).read_text())
        old.setdefault("convention", "paper")  # an output written before the option was scored as given
        settings = (
            "norm",
            "unigram",
            "context",
            "context_column",
            "sep",
            *WORDS_KEYS,
            "outputs",
            "word_prob",
            "convention",
        )
        check_resume(old, meta, settings, repr(out_name))
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
    all_texts = table.texts  # once: slicing table.texts per chunk would rebuild the whole list each time
    try:
        for lo in range(start_row, n, chunk_size):
            hi = min(lo + chunk_size, n)
            texts = all_texts[lo:hi]
            kwargs: dict[str, Any] = {} if scorer.kind == "causal" else {"metric": list(chosen)}
            kwargs["convention"] = convention
            if contexts is not None:
                kwargs.update(context=contexts[lo:hi], sep=sep)
            kwargs.update(words=as_words(given_words, lo, hi), word_sep=word_sep, mask_by=mask_by)
            if asked:
                kwargs.update(outputs=[n for n in asked if n != "word_correction"], word_prob=word_prob)
            try:
                results = scorer.score(texts, progress=False, long=long, **kwargs)
            except NonFiniteError as e:  # name the input line, not the position within the chunk
                i = lo + e.index
                kept = f"; the {lo} texts before it are kept (--resume continues)" if lo and out_name else ""
                raise NonFiniteError(i, e.value, e.dtype, where=table.where(i), suffix=kept) from None
            frame = output_rows(results, table, lo, hi, level, id_column, log_base, surprisal, norm=norms, unigram=uni)
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


def _check_outputs(outputs: Sequence[str], word_prob: str | None, kind: str, level: str) -> tuple[str, ...]:
    """What the scorer must fill (:func:`pllscore.scoring.outputs.check_outputs`), refused at a level without it."""
    from pllscore.scoring.outputs import check_outputs

    asked = check_outputs(outputs, word_prob, kind)
    per_token = [n for n in asked if n != "word_correction"]
    if per_token and level == "sentence":
        raise InputError(f"--{per_token[0]} is a per-token output; use --level token or word")
    if "word_correction" in asked and level != "word":
        raise InputError("--word-prob bow changes word scores only (tokens and totals are unchanged); use --level word")
    return asked


def _input_fingerprint(input: Any, table: InputTable) -> str | None:
    """SHA-256 of the input file's bytes, or of a list of texts; None for stdin (which cannot be resumed)."""
    if table.source == "<stdin>":
        return None
    if not isinstance(input, (str, os.PathLike)):
        given = {"texts": table.texts, "rows": table.rows, "skipped": table.skipped}
        return hashlib.sha256(json.dumps(given, ensure_ascii=False).encode()).hexdigest()
    return content_fingerprint([input])


def _base(base: float | str) -> float:
    try:
        value = float(base)
    except (TypeError, ValueError):
        raise InputError(f"base must be e or a number such as 2, got {base!r}") from None
    if value <= 0 or value == 1:
        raise InputError(f"base must be positive and not 1, got {base!r}")
    return value


def _contexts(table: InputTable, context: str | None, column: str | None) -> list[str] | None:
    """Per kept row, its context (from ``context`` or the ``column`` of its row), or None for no context."""
    if context is not None and column is not None:
        raise InputError("give either --context or --context-column, not both")
    if context is not None:
        if not isinstance(context, str):
            raise InputError(f"context must be a string, got {type(context).__name__}")
        return [context] * len(table.rows) if context else None
    if column is None:
        return None
    if column not in table.frame.columns:
        cols = ", ".join(map(str, table.frame.columns))
        raise InputError(f"context column {column!r} not in {table.source}; its columns are: {cols}")
    out = []
    for i, value in enumerate(table.frame[column].tolist()):
        if value is None or (isinstance(value, float) and value != value):  # a missing value: no context
            value = ""
        if not isinstance(value, str):
            raise InputError(f"context column {column!r} at {table.where(i)} is a {type(value).__name__}, not text")
        out.append(value)
    return out


def _check_all(
    scorer: Any,
    table: InputTable,
    long: str,
    contexts: Sequence[str] | None = None,
    sep: str = " ",
    words: str | Sequence[Sequence[str]] = "tokenizer",
    mask_by: str = "tokenizer",
    convention: str = "paper",
) -> None:
    """Fail before any scoring if some text is too long: an error after hours of work helps nobody."""
    step = 4096
    texts = table.texts
    for lo in range(0, len(texts), step):
        given: dict[str, Any] = {} if contexts is None else {"context": contexts[lo : lo + step], "sep": sep}
        # the words were checked against their texts (naming the rows) by _words; here their mode
        given.update(words=words if isinstance(words, str) else "tokenizer", mask_by=mask_by)
        try:
            scorer.check(texts[lo : lo + step], long=long, convention=convention, **given)
        except InputTooLongError as e:
            i = lo + e.index
            raise InputError(
                f"{table.where(i)} is {e.n_tokens} tokens long (special tokens included) but the model allows "
                f"at most {e.limit}; shorten or split it, or score it in windows with --long window"
            ) from None
        except InputError as e:
            raise InputError(f"{table.source}: {e}") from None


def output_rows(
    results: Any,
    table: InputTable,
    lo: int,
    hi: int,
    level: str,
    id_column: str | None,
    base: Any,
    surprisal: bool,
    *,
    norm: Sequence[str] | None = None,
    unigram: Any = None,
) -> Any:
    """The output rows of ``table`` rows ``lo:hi`` (shared by the local and the Ray engine)."""
    import pandas as pd

    from pllscore.results import to_wide_frame

    scores = to_wide_frame(results, level=level, base=base, surprisal=surprisal, norm=norm, unigram=unigram)  # type: ignore[arg-type]
    local = scores.pop("index").to_numpy()
    rows = pd.Series(table.rows[lo:hi]).to_numpy()[local]
    if level == "sentence":
        carried = table.frame.iloc[lo:hi].reset_index(drop=True)
        carried = carried.rename(
            columns={c: f"{c}_input" for c in carried.columns if c in scores.columns or c == "row"}
        )
        front = carried.iloc[local].reset_index(drop=True)
    else:
        front = (
            pd.DataFrame({id_column: table.frame[id_column].iloc[lo:hi].to_numpy()[local]})
            if id_column
            else pd.DataFrame()
        )
    front.insert(0, "row", rows)
    return pd.concat([front, scores.reset_index(drop=True)], axis=1)
