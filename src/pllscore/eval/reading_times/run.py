"""``pllscore reading-times``: the psychometric predictive power of each model's word surprisal.

:func:`reading_times` reads and checks the word table and its predictors before any model is loaded
(:mod:`.table`, :mod:`.predictors`), loads each model once and takes each word's surprisal from it
(:mod:`.surprisal`: the numbers of ``pllscore score --words whitespace --long window --level word --base 2
--surprisal``), fits the baseline and the full regressions per model and measure (:mod:`.fit`) and writes
``words.csv``, ``fits.csv`` and ``meta.json`` (provenance) into the output folder once everything is done:
a failing run leaves what the folder held untouched.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pllscore.engine.progress import model_stage, stage
from pllscore.errors import InputError
from pllscore.eval.reading_times.fit import fit_measure
from pllscore.eval.reading_times.predictors import (
    DEFAULT_FREQUENCY,
    DEFAULT_RANGE,
    Frequency,
    check_range,
    check_spillover,
    design,
    folds,
    included,
    word_predictors,
    word_rules,
)
from pllscore.eval.reading_times.surprisal import word_surprisals
from pllscore.eval.reading_times.table import WordTable, read_word_table
from pllscore.results.columns import included_column, score_column_name
from pllscore.settings import ModelSettings

__all__ = [
    "FIT_COLUMNS", "KIND", "ReadingTimesResult", "fit_table", "model_label", "reading_times", "surprisal_column",
]  # fmt: skip

KIND = "reading-times"
FIT_COLUMNS = ["model", "measure", "n", "delta_ll", "delta_ll_se", "coef", "coef_se"]
PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class ReadingTimesResult:
    """``words``: the rows of ``words.csv`` (one per input word, or per word and reader); ``fits``: the rows of
    ``fits.csv`` (one per model and measure); ``labels``: the models' labels in the order given."""

    output: Path | None
    words: Any
    fits: Any
    labels: tuple[str, ...]

    def lines(self) -> list[str]:
        """One line per model and measure, as the command prints them."""
        return [
            f"{r.model}\t{r.measure}\tn={r.n}\tdelta_ll={r.delta_ll:.5f} ± {r.delta_ll_se:.5f} nats/word\t"
            f"coef={r.coef:.3f} ± {r.coef_se:.3f} ms/bit"
            for r in self.fits.itertuples()
        ]


def model_label(model: Any) -> str:
    """The name a model's column and rows go by: its folder's or file's name, or its Hub name."""
    name = os.fspath(model) if isinstance(model, (str, os.PathLike)) else str(getattr(model, "name", model))
    if isinstance(model, (str, os.PathLike)) and not Path(name).exists():
        return name.rstrip("/")  # a Hub name ("org/model") stays whole
    return Path(name.rstrip("/\\")).name or name


def _labels(models: Sequence[Any]) -> list[str]:
    labels = [model_label(m) for m in models]
    for i, label in enumerate(labels):
        if labels.count(label) > 1:  # two folders of one name: their paths tell them apart
            given = models[i]
            labels[i] = os.fspath(given) if isinstance(given, (str, os.PathLike)) else str(given.name)
    for label in labels:
        if labels.count(label) > 1:
            raise InputError(f"model {label!r} is given twice; give each model once")
    return labels


def _per_reader(table: WordTable, aggregate: bool) -> WordTable:
    """With ``aggregate``, one row per word: each measure's mean over the readers who have it."""
    if not table.subject or not aggregate:
        return table
    frame = table.frame.groupby(["text", "position"], sort=False, as_index=False).agg(
        {"word": "first", **{m: "mean" for m in table.measures}}
    )
    return WordTable(frame, table.measures, table.texts, False, table.source)


def reading_times(
    data: PathLike | Any,
    models: Any | Sequence[Any],
    *,
    output: PathLike | None = None,
    measures: str | Sequence[str] | None = None,
    text_column: str | None = None,
    position_column: str | None = None,
    word_column: str | None = None,
    subject_column: str | None = None,
    aggregate: bool = False,
    spillover: int = 2,
    value_range: tuple[float, float] | str | None = DEFAULT_RANGE,
    frequency: str = DEFAULT_FREQUENCY,
    metric: str | None = None,
    bow: bool = False,
    progress: bool | None = None,
    model: ModelSettings | None = None,
) -> ReadingTimesResult:
    """How well each model's word surprisal predicts reading times: ΔLL per word and the surprisal coefficient.

    Args:
        data: the Natural Stories folder (``processed_wordinfo.tsv`` and ``all_stories.tok``), a word table
            (CSV, TSV, JSONL or Parquet; one row per displayed word, or per word and reader) or a DataFrame.
        models: one model or several: Hub names, folders, GGUF files or loaded scorers; each is loaded once.
        output: a folder for ``words.csv``, ``fits.csv`` and ``meta.json``, written when the run is done.
        measures: the reading-time column(s) (Natural Stories: ``meanItemRT``).
        text_column, position_column, word_column: the text id, the word's position in its text, the word
            as displayed (Natural Stories: ``item``, ``zone``, ``word``).
        subject_column: the reader of each row: per-reader rows are fitted by a mixed model with random
            intercepts by reader, or averaged per word first with ``aggregate``.
        spillover: how many preceding words' predictors enter the regressions (default 2).
        value_range: ``(lo, hi)`` in ms (default 100 to 3000): rows outside are not fitted; None: no range.
        frequency: ``"wordfreq:LANG"`` (default English) or a CSV/TSV file with ``word`` and ``count``.
        metric: a masked LM's PLL metric (default word-l2r).
        bow: the BOW correction of word probabilities (``word_prob="bow"``).
        progress: a progress bar on stderr (None: only when stderr is a terminal).
        model: how named models are loaded (:class:`~pllscore.settings.ModelSettings`); masked and causal LMs
            always score long texts in windows (``long="window"``), encoder-decoder LMs never.

    Returns:
        A :class:`ReadingTimesResult`.
    """
    given = [models] if isinstance(models, (str, os.PathLike)) or hasattr(models, "score") else list(models)
    if not given:
        raise InputError("no model given; pass --model (repeatable)")
    metric = _one_metric(metric)
    spill = check_spillover(spillover)
    bounds = check_range(value_range)
    freq = Frequency(frequency)
    table = _per_reader(
        read_word_table(
            data, measures=[measures] if isinstance(measures, str) else measures, text_column=text_column,
            position_column=position_column, word_column=word_column, subject_column=subject_column,
        ),
        aggregate,
    )  # fmt: skip
    fold_of = folds(table.texts)
    labels = _labels(given)
    words = word_predictors(table.words(), freq)
    per_text = [list(g["word"]) for _, g in words.groupby("text", sort=False)]
    texts = list(dict.fromkeys(words["text"]))
    settings = model or ModelSettings()
    out_dir = _output(output)
    records = _surprisals(words, given, labels, settings, texts, per_text, metric=metric, bow=bow, progress=progress)
    rows, fits = fit_table(words, table, labels, spill, bounds, fold_of)
    result = ReadingTimesResult(out_dir, rows, fits, tuple(labels))
    if out_dir is not None:
        _write(out_dir, result, table, records, {
            "measures": list(table.measures), "spillover": spill, "range": list(bounds) if bounds else None,
            "frequency": str(frequency), "metric": metric, "bow": bow, "subject_column": subject_column,
            "aggregate": aggregate, "model": settings.record(),
        })  # fmt: skip
    return result


def _surprisals(
    words: Any,
    given: list[Any],
    labels: list[str],
    settings: ModelSettings,
    texts: list[Any],
    per_text: list[Any],
    **options: Any,
) -> list[dict[str, Any]]:
    """Each model's surprisal of every word, as column ``<label>_surprisal_bits`` of ``words``; the models' records."""
    records = []
    columns = surprisal_columns(labels)  # refused before any model loads when two labels share a column
    for i, (label, m, column) in enumerate(zip(labels, given, columns), 1):  # one model at a time, each loaded once
        scorer = _load(m, settings)
        with stage(model_stage(i, len(given), label)):  # its bar says which model runs
            values = word_surprisals(scorer, texts, per_text, label=label, **options)
        words[column] = np.concatenate(values)
        records.append(_model_record(scorer, label))
        del scorer
    return records


def _one_metric(metric: str | Sequence[str] | None) -> str | None:
    """The one PLL metric of a run (None: the scorer's own, word-l2r by default)."""
    if isinstance(metric, (list, tuple)):
        if len(metric) > 1:
            raise InputError("reading-times takes one metric per run; give --metric once")
        metric = metric[0] if metric else None
    if metric is None:
        return None
    from pllscore.metrics import resolve_metrics

    resolved = resolve_metrics(metric)
    if len(resolved) != 1:
        raise InputError("reading-times takes one metric per run, not 'all'")
    return resolved[0]


def _load(m: Any, settings: ModelSettings) -> Any:
    if not isinstance(m, (str, os.PathLike)):
        return m
    from pllscore.scoring import api

    given = settings.load_kwargs()
    if given.get("stride") is None:  # windows are asked for per call (encoder-decoder LMs take none)
        given.pop("long", None)
    return api.load(m, **given)


def fit_table(
    words: Any,
    table: WordTable,
    labels: Sequence[str],
    spillover: int,
    bounds: tuple[float, float] | None,
    fold_of: dict[str, int],
) -> tuple[Any, Any]:
    """The rows of ``words.csv`` and of ``fits.csv`` from the per-word predictors and surprisals (``words``)."""
    import pandas as pd

    surprisal_cols = surprisal_columns(labels)
    if table.subject:
        rows = table.frame.merge(words.drop(columns=["word"]), on=["text", "position"], how="left", sort=False)
        word_of_row = rows.merge(
            words[["text", "position"]].reset_index(), on=["text", "position"], how="left", sort=False
        )["index"].to_numpy()
    else:
        rows = words.copy()
        for m in table.measures:
            rows[m] = table.frame[m].to_numpy()
        word_of_row = np.arange(len(words))
    lead = ["text", "position", "word", *(["subject"] if table.subject else []), "length", "zipf"]
    rows = rows[[*lead, *table.measures, *surprisal_cols]].copy()
    base_words = design(words, ["length", "zipf"], spillover)
    n_surprisal = spillover + 1
    rules = word_rules(words, spillover)[word_of_row]
    fit_rows = []
    for m in table.measures:
        rows[included_column(m)] = included(rows[m], rules, bounds)
    for label, col in zip(labels, surprisal_cols):
        full_words = pd.concat(
            [design(words.rename(columns={col: "surprisal"}), ["surprisal"], spillover), base_words], axis=1
        )
        full = full_words.to_numpy()[word_of_row]
        finite = np.isfinite(full).all(axis=1)
        for m in table.measures:
            keep = rows[included_column(m)].to_numpy() & finite
            rows[included_column(m)] = keep
            if not keep.any():
                raise InputError(f"no row of measure {m!r} is fitted; check --range and the measure's values")
            fold = rows["text"].map(fold_of).to_numpy()[keep]
            groups = rows["subject"].to_numpy()[keep] if table.subject else None
            y = rows[m].to_numpy(dtype=float)[keep]
            fit = fit_measure(y, full[keep][:, n_surprisal:], full[keep], fold, groups)
            fit_rows.append([label, m, fit.n, fit.delta_ll, fit.delta_ll_se, fit.coef, fit.coef_se])
    return rows.rename(columns={"text": "text_key"}), pd.DataFrame(fit_rows, columns=FIT_COLUMNS)


def surprisal_column(label: str) -> str:
    """The column of ``label``'s word surprisals (bits) in ``words.csv``: ``tiny_gpt2_surprisal_bits``."""
    return score_column_name(label, True, "bits")


def surprisal_columns(labels: Sequence[str]) -> list[str]:
    """The surprisal columns of ``labels``, refused when two labels give one column name."""
    columns = [surprisal_column(label) for label in labels]
    for i, column in enumerate(columns):
        j = columns.index(column)
        if j != i:
            raise InputError(
                f"models {labels[j]!r} and {labels[i]!r} would share the column {column!r} of words.csv; "
                "give one of them from a folder of another name"
            )
    return columns


def _output(output: PathLike | None) -> Path | None:
    if output is None:
        return None
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise InputError(f"output {os.fspath(out)!r} is a file; give a folder for words.csv and fits.csv")
    return out


def _model_record(scorer: Any, label: str) -> dict[str, Any]:
    from pllscore.io.provenance import model_record

    if not hasattr(scorer, "model"):  # a stand-in scorer without a model (tests)
        return {"label": label, "name": getattr(scorer, "name", label)}
    return {"label": label, **model_record(scorer)}


def _write(out: Path, result: ReadingTimesResult, table: WordTable, models: list[dict[str, Any]],
           settings: dict[str, Any]) -> None:  # fmt: skip
    from pllscore.io.parts import write_json, write_part
    from pllscore.io.provenance import command_line, content_fingerprint, now, versions

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create output folder {os.fspath(out)!r}: {e.strerror}") from None
    source = Path(table.source)
    files = sorted(p for p in source.iterdir() if p.is_file()) if source.is_dir() else [source]
    data = {"source": table.source}
    if all(p.is_file() for p in files) and files and table.source != "the table":
        data["sha256"] = content_fingerprint(files)
    write_part(out / "words.csv", result.words, "csv")
    write_part(out / "fits.csv", result.fits, "csv")
    meta = {"kind": KIND, "command": command_line(), "date": now(), "data": data, "settings": settings,
            "models": models, "versions": versions()}  # fmt: skip
    write_json(out / "meta.json", meta)
