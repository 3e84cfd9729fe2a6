"""``pllscore reading-times``: the psychometric predictive power of each model's word surprisal.

:func:`reading_times` reads and checks the word table and its predictors before any model is loaded
(:mod:`.table`, :mod:`.predictors`), loads each model once and takes each word's surprisal from it
(:mod:`.surprisal`: the numbers of ``pllscore score --words whitespace --long window --level word --base 2
--surprisal``; :mod:`.models`, which keeps each model's surprisals in the output folder as it finishes,
:mod:`.cache`), fits the baseline and the full regressions per model and measure (:mod:`.fit`) and writes
``words.csv``, ``fits.csv`` and ``meta.json`` (provenance) into the output folder whole once everything is
done (:mod:`.output`): a failing run leaves the folder's files as they were.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pllscore.errors import InputError
from pllscore.eval.reading_times.fit import fit_measure
from pllscore.eval.reading_times.models import SurprisalOptions, model_label, model_surprisals
from pllscore.eval.reading_times.models import labels as model_labels
from pllscore.eval.reading_times.output import KIND, check_output, write_output
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
from pllscore.eval.reading_times.table import WordTable, read_word_table
from pllscore.plan.words import check_mask_by
from pllscore.results.columns import included_column, score_column_name
from pllscore.settings import ModelSettings

__all__ = [
    "FIT_COLUMNS", "KIND", "MIN_TEXTS", "MIN_WORDS", "ReadingTimesResult", "SmallDataWarning", "fit_table",
    "model_label", "reading_times", "small_data_caution", "surprisal_column",
]  # fmt: skip

#: fewer texts or fitted rows than these: the estimate means little (a warning)
MIN_TEXTS, MIN_WORDS = 5, 200
FIT_COLUMNS = ["model", "measure", "n", "delta_ll", "delta_ll_se", "coef", "coef_se"]
PathLike = str | os.PathLike[str]


class SmallDataWarning(UserWarning):
    """Too few texts (under :data:`MIN_TEXTS`) or fitted rows (under :data:`MIN_WORDS`) for ΔLL and the
    coefficient to mean much."""


@dataclass(frozen=True)
class ReadingTimesResult:
    """``words``: the rows of ``words.csv`` (one per input word, or per word and reader); ``fits``: the rows of
    ``fits.csv`` (one per model and measure); ``labels``: the models' labels in the order given; ``caution``:
    one line when the data are too small for the estimate to mean much (also a :class:`SmallDataWarning`);
    ``input_rows``: the input row (0-based, in the table as given) of each row of ``words``, which come sorted
    (texts in first-appearance order, words by position): ``words`` in input order is
    ``words.iloc[numpy.argsort(input_rows)]`` (with ``aggregate``, one row per word: the first reader's row)."""

    output: Path | None
    words: Any
    fits: Any
    labels: tuple[str, ...]
    caution: str | None = None
    input_rows: tuple[int, ...] = ()

    def lines(self) -> list[str]:
        """One line per model and measure, as the command prints them."""
        return [
            f"{r.model}\t{r.measure}\tn={r.n}\tdelta_ll={r.delta_ll:.5f} ± {r.delta_ll_se:.5f} nats/word\t"
            f"coef={r.coef:.3f} ± {r.coef_se:.3f} ms/bit"
            for r in self.fits.itertuples()
        ]


def _per_reader(table: WordTable, aggregate: bool) -> WordTable:
    """With ``aggregate``, one row per word: each measure's mean over the readers who have it."""
    if not table.subject or not aggregate:
        return table
    grouped = table.frame.assign(_row=table.rows).groupby(["text", "position"], sort=False, as_index=False)
    frame = grouped.agg({"word": "first", "_row": "first", **{m: "mean" for m in table.measures}})
    rows = tuple(int(r) for r in frame.pop("_row"))
    return WordTable(frame, table.measures, table.texts, False, table.source, rows)


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
    mask_by: str = "words",
    progress: bool | None = None,
    model: ModelSettings | None = None,
    force: bool = False,
    allow_gaps: bool = False,
) -> ReadingTimesResult:
    """How well each model's word surprisal predicts reading times: ΔLL per word and the surprisal coefficient.

    Args:
        data: the Natural Stories folder (``processed_wordinfo.tsv`` and ``all_stories.tok``), a word table
            (CSV, TSV, JSONL or Parquet; one row per displayed word, or per word and reader) or a DataFrame.
        models: one model or several: Hub names, folders, GGUF files or loaded scorers; each is loaded once.
        output: a folder for ``words.csv``, ``fits.csv`` and ``meta.json``, written whole when the run is done
            (:mod:`.output`); each model's surprisals are kept there at once, for the same call to continue
            (:mod:`.cache`).
        measures: the reading-time column(s) (Natural Stories: ``meanItemRT``).
        text_column, position_column, word_column: the text id, the word's position in its text, the word
            as displayed (Natural Stories: ``item``, ``zone``, ``word``).
        subject_column: the reader of each row: a mixed model with random intercepts by reader, or per-word means
            with ``aggregate``.
        spillover: how many preceding words' predictors enter the regressions (default 2).
        value_range: ``(lo, hi)`` in ms (default 100 to 3000): rows outside are not fitted; None: no range.
        frequency: ``"wordfreq:LANG"`` (default English) or a CSV/TSV file with ``word`` and ``count``.
        metric: a masked LM's PLL metric (default word-l2r).
        mask_by: what a masked LM's word-l2r and whole-word mask: ``"words"`` (default: each displayed word
            whole, ``don't`` without its own pieces visible) or ``"tokenizer"`` (the tokenizer's words).
        bow: the BOW correction of word probabilities (``word_prob="bow"``); progress: a bar on stderr (None:
            only when stderr is a terminal).
        model: how named models are loaded (:class:`~pllscore.settings.ModelSettings`); masked and causal LMs
            always score long texts in windows (``long="window"``), encoder-decoder LMs never.
        force: replace the earlier reading-times run in ``output`` (a folder of anything else is refused).
        allow_gaps: positions may skip numbers (words left out on purpose; a lag across a gap is missing).

    Returns:
        A :class:`ReadingTimesResult`.
    """
    given = _given(models)
    metric = _one_metric(metric)
    spill, bounds = check_spillover(spillover), check_range(value_range)
    freq = Frequency(frequency)
    columns_of = dict(text_column=text_column, position_column=position_column, word_column=word_column)
    chosen = [measures] if isinstance(measures, str) else measures
    table = _per_reader(
        read_word_table(data, measures=chosen, subject_column=subject_column, allow_gaps=allow_gaps, **columns_of),
        aggregate,
    )
    fold_of, labels, out_dir = folds(table.texts), model_labels(given), check_output(output, force)
    words = word_predictors(table.words(), freq)
    settings = model or ModelSettings()
    options = SurprisalOptions(settings, metric, bow, progress, out_dir, check_mask_by(mask_by))
    names = surprisal_columns(labels)  # refused before any model loads when two labels share a column
    columns, records = model_surprisals(given, labels, words, options)
    words = words.assign(**dict(zip(names, columns)))
    rows, fits = fit_table(words, table, labels, spill, bounds, fold_of)
    caution = _warn_small(table, fits)
    if out_dir is not None:
        meta = _meta(table, records, {
            "measures": list(table.measures), "spillover": spill, "range": list(bounds) if bounds else None,
            "frequency": str(frequency), "metric": metric, "mask_by": options.mask_by, "bow": bow,
            "subject_column": subject_column, "aggregate": aggregate, "allow_gaps": allow_gaps,
            "model": {k: v for k, v in settings.record().items() if k not in ("model", "long")},
        })  # fmt: skip
        write_output(out_dir, {"words.csv": rows, "fits.csv": fits}, meta, labels)
    return ReadingTimesResult(out_dir, rows, fits, tuple(labels), caution, table.rows)


def _given(models: Any | Sequence[Any]) -> list[Any]:
    given = [models] if isinstance(models, (str, os.PathLike)) or hasattr(models, "score") else list(models)
    if not given:
        raise InputError("no model given; pass --model (repeatable)")
    return given


def _warn_small(table: WordTable, fits: Any) -> str | None:
    caution = small_data_caution(table, fits)
    if caution is not None:
        warnings.warn(caution, SmallDataWarning, stacklevel=3)
    return caution


def small_data_caution(table: WordTable, fits: Any) -> str | None:
    """One line when the data are too small for the estimate to mean much; None otherwise."""
    texts, fewest = len(table.texts), int(fits["n"].min())
    if texts >= MIN_TEXTS and fewest >= MIN_WORDS:
        return None
    return (
        f"{texts} texts and {fewest} fitted rows are few: delta_ll and coef mean little on so little data "
        f"(at least {MIN_TEXTS} texts and {MIN_WORDS} fitted rows per measure are advised)"
    )


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
            _enough(rows[m].to_numpy(dtype=float), rules, bounds, keep, m, spillover, full.shape[1] + 1)
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


def _enough(
    values: Any, rules: Any, bounds: tuple[float, float] | None, keep: Any, measure: str, spillover: int, need: int
) -> None:
    """Refuse a measure with too few rows to fit ``need`` coefficients, naming the step that dropped them:
    the measure's values, ``--range``, the word rules (``--spillover``, sentence edges) or the lags (gaps)."""
    n = int(keep.sum())
    if n > need:
        return
    number = np.isfinite(values)
    in_range = included(values, np.ones(len(values), bool), bounds)
    passed = in_range & np.asarray(rules, dtype=bool)
    steps = (
        f"{int(number.sum())} of {len(values)} rows have a number, {int(in_range.sum())} of them in --range, "
        f"{int(passed.sum())} of those pass the word rules, {n} of those have all their lags"
    )
    if number.sum() <= need:
        fix = "check the measure's values"
    elif in_range.sum() <= need:
        fix = "widen --range (or --range none)"
    elif passed.sum() <= need:
        first = max(2, spillover)
        fix = (
            f"a text's first {first} words (--spillover {spillover}) and its sentences' first and last words are "
            f"not fitted: lower --spillover or give longer texts"
        )
    else:
        fix = "a lag across a gap in the positions is missing: lower --spillover or fill the gaps"
    raise InputError(
        f"only {n} rows of measure {measure!r} can be fitted, too few for {need} coefficients ({steps}); {fix}"
    )


def _meta(table: WordTable, models: list[dict[str, Any]], settings: dict[str, Any]) -> dict[str, Any]:
    """``meta.json``: the command, date, data (its source and SHA-256), settings, models and versions."""
    from pllscore.io.provenance import command_line, content_fingerprint, now, versions

    source = Path(table.source)
    files = sorted(p for p in source.iterdir() if p.is_file()) if source.is_dir() else [source]
    data = {"source": table.source}
    if all(p.is_file() for p in files) and files and table.source != "the table":
        data["sha256"] = content_fingerprint(files)
    return {"kind": KIND, "command": command_line(), "date": now(), "data": data, "settings": settings,
            "models": models, "versions": versions()}  # fmt: skip
