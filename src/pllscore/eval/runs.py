"""One call per evaluation command: load models, score, write tables, record provenance.

:func:`run_blimp` and :func:`run_pairs` are what ``pllscore blimp`` and ``pllscore pairs`` run. They take
the settings objects of ``pllscore score`` (:class:`~pllscore.settings.ModelSettings`,
:class:`~pllscore.settings.TextSettings`, :class:`~pllscore.settings.TableSettings`) or the keyword
options of their first version, merged into those objects in one place
(:meth:`pllscore.eval.settings.EvalSettings.merge`). Each model scores the distinct sentences through
the table job of ``pllscore score`` (:func:`pllscore.eval.pairs.score_pairs`): the same metrics,
unigram model, norms and convention.

Writing into a folder that already holds results of the same kind adds rows, so several models end
up in one table (:mod:`pllscore.eval.folder`). Rows of one folder must be comparable, so a folder
remembers how its results were made (the data's content fingerprint, paradigms, ``limit``, the
good/bad columns, the counting convention, the text convention, the norms): a run made differently
is refused with an :class:`InputError` unless ``force=True``, which replaces the folder's results
with the new run's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pllscore.engine.progress import model_stage, stage
from pllscore.errors import InputError
from pllscore.eval.blimp import blimp_tables, load_blimp
from pllscore.eval.folder import (
    CONVENTION,
    Identity,
    check_folder,
    display_names,
    identity,
    merge_rows,
    output_folder,
    record_run,
)
from pllscore.eval.pairs import pairs_tables, score_pairs
from pllscore.eval.settings import EvalSettings, load_scorers
from pllscore.io.tables import write_tables
from pllscore.jobs.table import check_metric_option

__all__ = ["CONVENTION", "EvalResult", "run_blimp", "run_pairs"]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class EvalResult:
    """Tables of an evaluation run (all rows in the output folder, not only this run's)."""

    output: Path | None
    pairs: Any
    accuracy: Any
    summary: Any

    def unscored(self) -> Any:
        """Pairs with a NaN score on either side (counted wrong), per model and metric that has any.

        Columns ``model``, ``metric``, ``n_unscored`` and ``n`` (all its pairs).
        """
        frame = self.pairs.assign(n_unscored=self.pairs["good_logprob"].isna() | self.pairs["bad_logprob"].isna())
        counts = frame.groupby(["model", "metric"], sort=False)["n_unscored"].agg(n_unscored="sum", n="size")
        return counts[counts["n_unscored"] > 0].reset_index()


@dataclass
class _Evaluation:
    """One run into one folder (or none): the folder's check, the scores of every model, the record."""

    kind: str
    output: Path | None
    settings: EvalSettings
    key: dict[str, Any]  # what rows of one folder share
    adding: bool = False
    models: list[tuple[Any, Identity]] = field(default_factory=list)

    def score(self, models: Sequence[Any], pairs: Any, force: bool, progress: bool | None, **columns: str) -> Any:
        """Every model's pair scores, after the folder's rows (refused when made differently)."""
        import pandas as pd

        self.adding = check_folder(self.output, self.kind, self.key, force)
        scorers = load_scorers(models, self.settings.model)
        check_metric_option(self.settings.text.metrics, [(s.kind, s.name) for s in scorers])
        self.models = [(s, identity(s)) for s in scorers]
        frames = []
        shown = display_names({ident.model_id: ident.name for _, ident in self.models})
        for i, (scorer, ident) in enumerate(self.models, 1):
            with stage(model_stage(i, len(self.models), shown[ident.model_id])):
                prepared = self.settings.prepare(scorer)
                scored = score_pairs(scorer, pairs, prepared=prepared, progress=progress, **columns)
            at = scored.columns.get_loc("model") + 1
            scored.insert(at, "model_id", ident.model_id)
            scored.insert(at + 1, "model_name", ident.name)
            frames.append(scored)
        return merge_rows(self.output, self.adding, pd.concat(frames, ignore_index=True))

    def record(self, run: dict[str, Any]) -> None:
        """Add this run (its own options, then the settings) to the folder's ``meta.json``."""
        if self.output is not None:
            run["settings"] = self.settings.record()
            record_run(self.output, self.kind, run, self.key, self.models, self.adding)


def run_blimp(
    models: Sequence[Any],
    *,
    data: PathLike,
    paradigms: Sequence[str] | None = None,
    limit: int | None = None,
    output: PathLike | None = None,
    progress: bool | None = None,
    force: bool = False,
    **options: Any,
) -> EvalResult:
    """Score BLiMP with each model (masked models under ``metrics``, causal ones by log-likelihood).

    Writes into ``output`` (if given): ``pairs.parquet`` (per-pair scores), ``paradigms.csv``
    (per-paradigm accuracy), ``summary.csv/.md/.tex`` (the paper's table) and ``meta.json``.
    A folder that holds results made with other data, paradigms or ``limit`` is refused
    (:class:`InputError`) unless ``force``, which replaces them.

    ``options`` are the settings of ``pllscore score`` (merged by :meth:`EvalSettings.merge`): ``model``
    (a :class:`~pllscore.settings.ModelSettings`: how each model is loaded; its ``model`` field is not read),
    ``text`` (``metrics``, ``convention``, ``context``: one context every sentence is scored given) and
    ``table`` (``norm``, ``unigram``, ``unigram_corpus``), and
    the keyword options of the first version and the other fields an evaluation reads
    (:data:`pllscore.eval.settings.EVAL_FIELDS`); one that is not None is written into the settings:
    ``metrics``, ``convention`` into ``text``; ``norm`` (``norms=`` is its deprecated spelling), ``unigram``,
    ``unigram_corpus`` into ``table``; ``device``, ``dtype``, ``compile``, ``share_prefixes`` into ``model`` (passed to
    :func:`pllscore.load`). ``progress``: a bar on stderr (None: only when stderr is a terminal).

    ``norm`` (:data:`pllscore.results.norms.NORMS`; ``sum`` is always there) adds per norm
    ``good_logprob_<norm>``, ``bad_logprob_<norm>``, ``correct_<norm>`` to the pairs, ``accuracy_<norm>`` to the
    paradigms and ``Overall_<norm>`` to the summary; ``slor`` and ``norm-lp`` need ``unigram``
    (a token-count table or ``"wordfreq"``) or ``unigram_corpus`` (counted with each model's
    tokenizer). A folder's rows must have been made with the same norms and unigram source.

    ``convention`` says how a sentence is read: ``"paper"`` (default) as given, ``"lm-eval"`` as
    lm-evaluation-harness reads it (the continuation ``" " + sentence`` of an empty context after
    lm-eval's prefix token; see :mod:`pllscore.scoring.encoding`). A folder records it and refuses
    a run made with the other one.
    """
    from pllscore.io.provenance import content_fingerprint

    settings = EvalSettings.merge(**options)
    folder_key = settings.folder_key()  # checked before any model is loaded
    out = output_folder(output)
    pairs = load_blimp(data, paradigms, limit)
    used = sorted(paradigms) if paradigms else sorted(p.stem for p in Path(data).glob("*.jsonl"))
    fingerprint = "sha256:" + content_fingerprint([Path(data) / f"{uid}.jsonl" for uid in used])
    key = {"paradigms": used, "limit": limit, "data": fingerprint, "convention": CONVENTION, **folder_key}
    run = _Evaluation("blimp", out, settings, key)
    scored = run.score(models, pairs, force, progress)
    paradigm_acc, summary = blimp_tables(scored)
    if out is not None:
        scored.to_parquet(out / "pairs.parquet", index=False)
        paradigm_acc.to_csv(out / "paradigms.csv", index=False)
        write_tables(summary, out / "summary")
        run.record({"data": os.fspath(data), "paradigms": used, "limit": limit, "force": force})
    return EvalResult(out, scored, paradigm_acc, summary)


def run_pairs(
    file: PathLike,
    models: Sequence[Any],
    *,
    good: str,
    bad: str,
    group: str | None = None,
    output: PathLike | None = None,
    force: bool = False,
    progress: bool | None = None,
    **options: Any,
) -> EvalResult:
    """Score any minimal-pair table (csv/tsv/jsonl/parquet); accuracy overall and per ``group``.

    Writes into ``output`` (if given): ``pairs.parquet``, ``groups.csv`` (per-group accuracy, when
    ``group`` is given) and ``summary.csv/.md/.tex`` (rows model x metric, columns Overall and
    each group, x 100). A folder that holds results made from another file (by content) or
    other good/bad columns is refused (:class:`InputError`) unless ``force``, which replaces them.
    The result's ``accuracy`` is per model, metric and group (overall without ``group``), with
    ``n`` and ``n_unscored``. The settings and the other options are those of :func:`run_blimp`
    (``Overall_<norm>`` columns in the summary; ``accuracy_<norm>`` in the accuracy tables).
    """
    from pllscore.io.provenance import content_fingerprint

    settings = EvalSettings.merge(what="run_pairs", **options)
    folder_key = settings.folder_key()  # checked before any model is loaded
    out = output_folder(output)
    pairs = _read_pairs(file, good, bad, group)
    key = {"file": "sha256:" + content_fingerprint([file]), "good": good, "bad": bad, "convention": CONVENTION}
    run = _Evaluation("pairs", out, settings, {**key, **folder_key})
    scored = run.score(models, pairs, force, progress, good=good, bad=bad)
    accuracy, summary = pairs_tables(scored, group)
    if out is not None:
        scored.to_parquet(out / "pairs.parquet", index=False)
        if group is not None:
            accuracy.to_csv(out / "groups.csv", index=False)
        elif (out / "groups.csv").exists():
            (out / "groups.csv").unlink()  # made by an earlier run with --group: it would not cover these rows
        write_tables(summary, out / "summary")
        run.record({"file": os.fspath(file), "good": good, "bad": bad, "group": group, "force": force})
    return EvalResult(out, scored, accuracy, summary)


def _read_pairs(file: PathLike, good: str, bad: str, group: str | None) -> Any:
    """The table of pairs, refused when a column is missing or a sentence is empty."""
    from pllscore.io.input_table import rows_at
    from pllscore.io.readers import read_located_table

    table, source = read_located_table(file)
    for role, col in (("good", good), ("bad", bad), ("group", group)):
        if col is not None and col not in table.columns:
            raise InputError(
                f"{role} column {col!r} not in {os.fspath(file)}; its columns are: {', '.join(map(str, table.columns))}"
            )
    for col in (good, bad):
        empty = [i for i, t in enumerate(table[col]) if not isinstance(t, str) or not t.strip()]
        if empty:
            raise InputError(
                f"column {col!r} of {source} has empty texts ({rows_at(source, empty)}); fill or remove them"
            )
    return table
