"""Predict a whole file: read the texts, predict each slot chunk by chunk, write as it goes.

:func:`predict_file` is what ``pllscore predict INPUT`` runs: the texts are read as ``score`` reads
them, each chunk's :class:`~pllscore.results.predictions.Predictions` becomes rows
(:data:`~pllscore.results.predictions.COLUMNS`) in the same resumable output (TSV on stdout without
``-o``), with the run's provenance beside it; ``resume=True`` continues after the last chunk, and a
resume with another input, candidates file, model or setting is refused.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pllscore.errors import InputError
from pllscore.io.provenance import content_fingerprint, model_identity, now, run_record
from pllscore.io.readers import read_input, read_table
from pllscore.io.writers import ResumableWriter, StreamWriter, meta_path, output_format
from pllscore.jobs.run_settings import RunRecord
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
        return f"predicted {self.predicted} of {self.rows} texts in {self.seconds:.1f} s{resumed} -> {self.output}"


def read_candidates(path: str | os.PathLike[str], n: int) -> list[list[str]]:
    """The candidate words of a file: a .txt file's lines (for every text), or a table's word column
    (``word``, ``response``, ``candidate`` or its only column), one list per text when it has ``text_id``."""
    name = os.fspath(path)
    if not Path(name).is_file():
        raise InputError(f"candidates file {name!r} not found")
    if name.endswith(".txt"):
        words = [line.strip() for line in Path(name).read_text(encoding="utf-8").splitlines() if line.strip()]
        return [words] * n
    frame = read_table(name)
    column = next((c for c in _WORD_COLUMNS if c in frame.columns), None)
    others = [c for c in frame.columns if c != "text_id"]
    column = column or (others[0] if len(others) == 1 else None)
    if column is None:
        raise InputError(f"candidates file {name!r} has no word column; name it word (text_id: one list per text)")
    if "text_id" not in frame.columns:
        return [[str(w) for w in frame[column]]] * n
    lists: list[list[str]] = [[] for _ in range(n)]
    for text_id, word in zip(frame["text_id"], frame[column]):
        if not 0 <= int(text_id) < n:
            raise InputError(f"candidates file {name!r}: text_id {text_id} is not one of the {n} texts (0 to {n - 1})")
        lists[int(text_id)].append(str(word))
    return lists


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
    candidates = read_candidates(predict.candidates, n) if predict.candidates else None
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
    for lo in range(start, n, run.chunk_size):
        hi = min(lo + run.chunk_size, n)
        chunk = candidates[lo:hi] if candidates is not None else None
        got = scorer.predict(texts.texts[lo:hi], candidates=chunk, **options)
        frame = got.to_frame(base=table.base, surprisal=table.surprisal)
        frame["text_id"] = [texts.rows[lo + i] for i in frame["text_id"]]
        writer.append(frame, hi)
        bar.update(hi - lo)
    bar.close()
    seconds = time.perf_counter() - t0
    writer.finish({"rows": n, "skipped": texts.skipped, "seconds": round(seconds, 3)})
    return PredictSummary(out_name or "<stdout>", n, n - start, start, seconds, texts.skipped)


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
