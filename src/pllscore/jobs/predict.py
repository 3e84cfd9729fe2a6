"""Predict a whole file: read the texts, predict each slot chunk by chunk, write as it goes.

:func:`predict_file` is what ``pllscore predict INPUT`` runs: the texts are read as ``score`` reads
them, each chunk's :class:`~pllscore.results.predictions.Predictions` becomes rows
(:data:`~pllscore.results.predictions.COLUMNS`) in the same resumable output (TSV on stdout without
``-o``), with the run's provenance beside it; ``resume=True`` continues after the last chunk, and a
resume with another input, candidates file, model or setting is refused.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pllscore.errors import InputError, PllscoreError
from pllscore.io.input_table import row_at
from pllscore.io.provenance import content_fingerprint, model_identity, now, run_record
from pllscore.io.readers import read_input, read_located_table
from pllscore.io.writers import ResumableWriter, StreamWriter, meta_path, output_format
from pllscore.jobs.local import Interrupted
from pllscore.jobs.run_settings import RunRecord
from pllscore.results.predictions import Predictions, PredictionWarning
from pllscore.settings import ModelSettings, PredictSettings, RunSettings, TableSettings, gather

__all__ = ["PredictSummary", "predict_file", "read_candidates"]

RECORD = RunRecord(
    ("input_sha256", "candidates_sha256", "n_input_rows", "model_fingerprint", "format", "pllscore"),
    (ModelSettings, PredictSettings, TableSettings, RunSettings),
)
_WORD_COLUMNS = ("word", "response", "candidate")


@dataclass
class PredictSummary:
    """What a :func:`predict_file` run did."""

    output: str
    rows: int
    predicted: int
    resumed_from: int = 0
    seconds: float = 0.0
    skipped: list[int] = field(default_factory=list)

    def line(self) -> str:
        """One line for stderr."""
        resumed = f", resumed after {self.resumed_from}" if self.resumed_from else ""
        held = "no text" if not self.skipped else "empty texts only"
        nothing = f"; the input held {held}: the output has its columns and no row" if not self.rows else ""
        done = f"predicted {self.predicted} of {self.rows} texts in {self.seconds:.1f} s{resumed}"
        return f"{done} -> {self.output}{nothing}"


def read_candidates(
    path: str | os.PathLike[str], rows: int | Sequence[int], skipped: Sequence[int] = ()
) -> list[list[str]]:
    """The candidate words of a file: a .txt file's lines (for every text), or a table's word column
    (``word``, ``response``, ``candidate`` or its only column), one list per text when it has ``text_id``.

    ``rows``: the input rows (0-based) of the texts predicted, or their number (rows 0 to n - 1); a
    ``text_id`` is an input row, as in every output (``skip_empty`` leaves rows out, not renumbers them), and
    one of the ``skipped`` (empty) rows has its candidates left out with a warning. A missing word or
    ``text_id`` is refused in one line naming its line of the file.
    """
    name = os.fspath(path)
    order = list(range(rows)) if isinstance(rows, int) else list(rows)
    if not Path(name).is_file():
        raise InputError(f"candidates file {name!r} not found")
    if name.endswith(".txt"):
        words = [line.strip() for line in Path(name).read_text(encoding="utf-8").splitlines() if line.strip()]
        return [words] * len(order)
    frame, source = read_located_table(name)
    column = next((c for c in _WORD_COLUMNS if c in frame.columns), None)
    others = [c for c in frame.columns if c != "text_id"]
    column = column or (others[0] if len(others) == 1 else None)
    if column is None:
        raise InputError(f"candidates file {name!r} has no word column; name it word (text_id: one list per text)")
    words = [_cell(w, column, source, j) for j, w in enumerate(frame[column])]
    if "text_id" not in frame.columns:
        return [words] * len(order)
    at = {row: i for i, row in enumerate(order)}
    lists: list[list[str]] = [[] for _ in order]
    left_out = []
    for j, (text_id, word) in enumerate(zip(frame["text_id"], words)):
        row = _row(text_id, source, j)
        if row in at:
            lists[at[row]].append(word)
        elif row in skipped:
            left_out.append(row)
        else:
            raise InputError(
                f"candidates file {name!r}: text_id {row} ({row_at(source, j)}) is not a row of the input "
                f"(its texts are rows 0 to {len(order) + len(skipped) - 1})"
            )
    if left_out:
        warnings.warn(
            f"{len(left_out)} candidates of {name!r} belong to empty input rows that are skipped "
            f"(text_id {sorted(set(left_out))[0]}, ...); they are left out",
            PredictionWarning,
            stacklevel=2,
        )
    return lists


def _cell(word: Any, column: str, source: str, j: int) -> str:
    if word is None or (isinstance(word, float) and math.isnan(word)) or not str(word).strip():
        raise InputError(f"candidates file: {row_at(source, j)} has no {column}; give a word in every row")
    return str(word)


def _row(text_id: Any, source: str, j: int) -> int:
    try:
        row = int(text_id)
        if row != float(text_id) or row < 0:
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise InputError(
            f"candidates file: {row_at(source, j)} has text_id {text_id!r}; give the input row (0-based) of the "
            "text the word is for"
        ) from None
    return row


def predict_file(
    input: str | os.PathLike[str] | Sequence[str],
    output: str | os.PathLike[str] | None = None,
    *,
    model: Any,
    stream: TextIO | None = None,
    **options: Any,
) -> PredictSummary:
    """Predict the slot of every text of a file and write one row per text and rank.

    Args:
        input: a .txt (one text per line), .csv, .tsv, .jsonl or .parquet file, ``"-"`` for stdin, or a list of texts.
        output: the output file (.csv, .tsv, .jsonl or .parquet); None writes TSV to ``stream`` (stdout).
        model: a Hub name, a local folder, a loaded scorer, or a :class:`~pllscore.settings.ModelSettings`.
        stream: where output goes when ``output`` is None.
        **options: ``predict=``, ``table=``, ``run=`` settings objects, or their fields by name: ``k``,
            ``word_tokens``, ``candidates`` (a file), ``level`` (word or token), ``column``, ``base``,
            ``surprisal``, ``format``, ``skip_empty``, ``resume``, ``force``, ``progress``, ``chunk_size``.
    """
    rest = dict(options)
    models = model if isinstance(model, ModelSettings) else ModelSettings(model=model)
    kinds = (PredictSettings, TableSettings, RunSettings)
    groups = [models, *(rest.pop(kind.group, None) or kind() for kind in kinds)]
    models, predict, table, run = gather(rest, *groups, what="predict_file")  # type: ignore[assignment]
    if table.level == "sentence":
        table = table.replace(level="word")  # type: ignore[attr-defined]
    out_name = None if output is None or os.fspath(output) == "-" else os.fspath(output)
    fmt = output_format(out_name, table.format)
    if run.resume and out_name is None:
        raise InputError("--resume needs an output file (-o); stdout cannot be resumed")
    texts = read_input(input, column=table.column, fmt=table.input_format, skip_empty=table.skip_empty)
    n = len(texts.rows)
    candidates = read_candidates(predict.candidates, texts.rows, texts.skipped) if predict.candidates else None
    from pllscore.scoring.api import as_scorer

    scorer = as_scorer(models.model, **models.load_kwargs())
    meta = _meta(scorer, (models, predict, table, run), input, texts, fmt, predict.candidates)
    writer: ResumableWriter | StreamWriter
    if out_name is None:
        writer = StreamWriter(fmt, stream)
    else:
        if run.resume and meta_path(out_name).exists():
            RECORD.check(json.loads(meta_path(out_name).read_text()), meta, repr(out_name))
        writer = ResumableWriter(out_name, fmt, meta, rows=n, resume=run.resume, force=run.force)
    start, t0 = writer.rows_done, time.perf_counter()
    options = {"k": predict.k, "word_tokens": predict.word_tokens, "level": table.level}
    from tqdm.auto import tqdm

    shown = None if run.progress is None else not run.progress  # None: a bar only when stderr is a terminal
    bar = tqdm(total=n, initial=start, unit="text", desc="predicting", disable=shown)
    try:
        for lo in range(start, n, run.chunk_size):
            hi = min(lo + run.chunk_size, n)
            chunk = candidates[lo:hi] if candidates is not None else None
            got = _predict(scorer, texts, lo, hi, candidates=chunk, **options)
            frame = got.to_frame(base=table.base, surprisal=table.surprisal)
            frame["text_id"] = [texts.rows[lo + i] for i in frame["text_id"]]
            writer.append(frame, hi)
            bar.update(hi - lo)
        if n == 0:  # no text: the output still has its columns
            writer.append(Predictions().to_frame(base=table.base, surprisal=table.surprisal), 0)
    except KeyboardInterrupt as e:
        writer.interrupt()
        by = str(e.args[0]) if e.args else None  # the command line's SIGTERM handler names the signal
        kept = "they are kept, rerun with --resume to continue" if out_name else "write with -o FILE to keep them"
        raise Interrupted(
            f"interrupted{f' by {by}' if by else ''} after {writer.rows_done} of {n} texts; {kept}", stopped_by=by
        ) from None
    finally:
        bar.close()
    seconds = time.perf_counter() - t0
    writer.finish({"rows": n, "skipped": texts.skipped, "seconds": round(seconds, 3)})
    return PredictSummary(out_name or "<stdout>", n, n - start, start, seconds, texts.skipped)


def _predict(scorer: Any, texts: Any, lo: int, hi: int, **options: Any) -> Predictions:
    """The predictions of texts ``lo`` to ``hi``; an error about one of them names its input row, as the
    output's ``text_id`` does, not its place in the chunk."""
    try:
        return scorer.predict(texts.texts[lo:hi], **options)  # type: ignore[no-any-return]
    except PllscoreError as e:
        said = str(e)
        at = re.match(r"text (\d+)\b", said)
        if at is None or not lo + int(at.group(1)) < hi:
            raise
        e.args = (f"text {texts.rows[lo + int(at.group(1))]}{said[at.end() :]}", *e.args[1:])
        raise


def _meta(scorer: Any, groups: tuple, input: Any, texts: Any, fmt: str, candidates: str | None) -> dict[str, Any]:
    """What the run records: the input, the candidates, the model, every recorded setting, the versions."""
    from pllscore.jobs.run_settings import settings_record

    identity = model_identity(scorer)
    given = isinstance(input, (str, os.PathLike)) and texts.source != "<stdin>"
    return {
        "input": os.path.abspath(texts.source) if given else texts.source,
        "input_sha256": content_fingerprint([input]) if given else None,
        "candidates_sha256": content_fingerprint([candidates]) if candidates else None,
        "n_input_rows": len(texts.rows) + len(texts.skipped),
        "format": fmt,
        "started": now(),
        **run_record(scorer, []),
        **settings_record(*groups, model=identity["name"], revision=scorer.revision, kind=scorer.kind),
        "model_fingerprint": identity["fingerprint"],
    }
