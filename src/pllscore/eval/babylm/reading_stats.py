"""The BabyLM reading task's data, regressions and files (pandas and statsmodels, no model).

In: ``reading_data.csv`` (one row per word: its context ``item``, the ``word``, the previous word and its
context, frequency and length predictors, eye-tracking, self-paced reading and ERP measures) and a surprisal
(nats) per row and per previous word. Out: the official pipeline's six files, the same numbers.

- ``correlations.txt``: Pearson r of the surprisal with each measure (4 decimals).
- ``predictive_power.jsonl``: per measure, OLS of the measure on ``Subtlex_log10``, ``length``,
  ``context_length`` and their pairwise interactions (the baseline), then the same plus the surprisal
  ``pred``; each fit on the rows where its own columns are all present. The row: the surprisal's
  coefficient, t value and p value, the full model's R² and AIC, and their change from the baseline.
- ``predictive_power_spillover.jsonl``: the same with ``prev_length`` and the previous word's surprisal
  ``prev_pred`` among the baseline's predictors (and in its interactions).
- ``report.txt``: the eye-tracking score, the mean over the four ``RT*`` measures of the surprisal's
  share of the variance the baseline leaves, ``(R² - R²_baseline) / (1 - R²_baseline)``, in percent; the
  self-paced reading score, the same for ``self_paced_reading_time`` in the spillover fits.
- ``prediction.jsonl`` and ``predictions.json``: each row's surprisal and its previous word's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pllscore.errors import InputError

__all__ = ["FILES", "MEASURES", "Fits", "fit_all", "read_reading_data", "write_files"]

#: the measures, in the official files' order
MEASURES = (
    *("RTfirstfix", "RTfirstpass", "RTgopast", "RTrightbound", "self_paced_reading_time"),
    *("ELAN", "LAN", "N400", "P600", "EPNP", "PNP"),
)
#: the baseline's predictors, without and with the spillover ones
PREDICTORS = ("Subtlex_log10", "length", "context_length")
SPILLOVER = (*PREDICTORS, "prev_length", "prev_pred")
NUMERIC = (*PREDICTORS, "prev_length", *MEASURES)
TEXT = ("item", "word", "prev_item", "prev_word")
#: the files a result writes, in writing order
FILES = (
    *("prediction.jsonl", "predictions.json", "correlations.txt"),
    *("predictive_power.jsonl", "predictive_power_spillover.jsonl", "report.txt"),
)


def read_reading_data(path: str | os.PathLike[str], *, fill: bool = True) -> pd.DataFrame:
    """The table as the official pipeline reads it (``item`` as text, a missing one ``"None"``; left
    missing with ``fill=False``), checked.

    Raises:
        InputError: an unreadable file, a missing column, a measure or predictor cell that is not a
            number, a missing word, or a previous context without its previous word (each naming the
            file, and the line where there is one).
    """
    name = os.fspath(path)
    try:
        frame = pd.read_csv(path, dtype={"item": str})
    except FileNotFoundError:
        raise InputError(f"{name}: no such file; give the reading data's reading_data.csv") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise InputError(f"{name}: not a readable CSV file ({first})") from None
    missing = [c for c in (*TEXT, *NUMERIC) if c not in frame.columns]
    if missing:
        raise InputError(
            f"{name}: missing column(s) {', '.join(missing)}; the reading data needs {', '.join((*TEXT, *NUMERIC))}"
        )
    if frame.empty:
        raise InputError(f"{name}: no rows; the reading data needs one row per word")
    for column in NUMERIC:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            bad = pd.to_numeric(frame[column], errors="coerce").isna() & frame[column].notna()
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"{name}, line {i + 2}, column {column}: {frame[column].iloc[i]!r} is not a number")
    _check_words(frame, name)
    if fill:
        frame["item"] = frame["item"].fillna("None")
    return frame


def _check_words(frame: pd.DataFrame, name: str) -> None:
    """Each row's word is text, and so is the previous word of a row with a previous context."""
    for column, needed in (("word", None), ("prev_word", "prev_item")):
        values = frame[column]
        rows = np.ones(len(frame), dtype=bool) if needed is None else frame[needed].map(_is_text).to_numpy()
        bad = rows & ~values.map(_is_text).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            why = "empty" if pd.isna(values.iloc[i]) else f"{values.iloc[i]!r}, not a word"
            also = f" (its {needed} is {frame[needed].iloc[i]!r})" if needed else ""
            raise InputError(
                f"{name}, line {i + 2}: {column} is {why}{also}; pandas reads NA, None, null and NaN as missing, "
                "so such a word cannot be read"
            )


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


@dataclass(frozen=True)
class Fits:
    """The regressions of one set of surprisals."""

    correlations: list[tuple[str, float]]  # (measure, Pearson r with pred)
    power: list[dict[str, Any]]  # predictive_power.jsonl's rows
    spillover: list[dict[str, Any]]  # predictive_power_spillover.jsonl's rows
    eye_tracking: float  # the report's scores, in percent
    self_paced_reading: float


def fit_all(frame: pd.DataFrame) -> Fits:
    """The correlations and both sets of fits of ``frame`` (the data with ``pred`` and ``prev_pred``)."""
    corr = frame[["pred", *MEASURES]].corr()["pred"]
    correlations = [(str(k), float(v)) for k, v in corr.items() if k != "pred"]
    power, gains = zip(*(_fit(frame, dv, PREDICTORS) for dv in MEASURES))
    spillover, spill_gains = zip(*(_fit(frame, dv, SPILLOVER) for dv in MEASURES))
    eye = [g for dv, g in zip(MEASURES, gains) if "RT" in dv]
    spr = [g for dv, g in zip(MEASURES, spill_gains) if "self" in dv][-1]
    return Fits(correlations, list(power), list(spillover), sum(eye) / len(eye), spr)


def _design(rows: pd.DataFrame, predictors: Sequence[str], surprisal: bool) -> np.ndarray:
    """The OLS design of the official formula ``dv ~ p1 + ... + p1:p2 + ... (+ pred)``, columns in patsy's order:
    the intercept, the predictors, their pairwise products in formula order, then ``pred``."""
    cols = [rows[p].to_numpy(dtype=float) for p in predictors]
    products = [a * b for a, b in combinations(cols, 2)]
    extra = [rows["pred"].to_numpy(dtype=float)] if surprisal else []
    return np.column_stack([np.ones(len(rows)), *cols, *products, *extra])


def _fit(frame: pd.DataFrame, dv: str, predictors: Sequence[str]) -> tuple[dict[str, Any], float]:
    """One measure's row and its score (the surprisal's share of the variance the baseline leaves, percent).

    statsmodels' OLS on the design the official formulas make, built directly (patsy's matrix, column for column:
    the same numbers, without parsing 44 formulas, which took most of the fits' time); each fit on the rows where
    its own columns are all present.
    """
    from statsmodels.regression.linear_model import OLS  # lighter than statsmodels.api, the same class

    plain = frame[[dv, *predictors]].dropna()
    rows = frame[["pred", dv, *predictors]].dropna()
    base = OLS(plain[dv].to_numpy(dtype=float), _design(plain, predictors, False)).fit()
    full = OLS(rows[dv].to_numpy(dtype=float), _design(rows, predictors, True)).fit()
    r2_base, r2 = float(base.rsquared), float(full.rsquared)
    if not r2_base < 1:
        raise InputError(
            f"{dv}: the baseline fits its {len(plain)} rows exactly (R² = 1), so the surprisal's share of what it "
            f"leaves is undefined; the reading data needs more rows with {dv}"
        )
    aic_base, aic = float(base.aic), float(full.aic)
    row = {
        "Predicted variable": dv,
        "Coefficient": float(full.params[-1]),
        "Number of standard deviations": float(full.tvalues[-1]),
        "P-value": float(full.pvalues[-1]),
        "R2": r2,
        "Change in R2 from baseline": r2 - r2_base,
        "AIC": aic,
        "Change in AIC from baseline": aic - aic_base,
    }
    return row, ((r2 - r2_base) / (1 - r2_base)) * 100


def write_files(out_dir: str | os.PathLike[str], frame: pd.DataFrame, fits: Fits) -> None:
    """The six files into ``out_dir`` (made if missing). A run writes them into a fresh folder that then takes
    the task's place whole (:func:`pllscore.eval.babylm.records.commit_task`), as it writes every task's files."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    preds = list(zip(frame.index, frame["item"], frame["word"], frame["pred"], frame["prev_pred"]))
    texts = {
        "prediction.jsonl": "".join(
            json.dumps({"Index": int(i), "Sentence": s, "Word": w, "Logprob": float(p), "Prev_Logprob": float(q)})
            + "\n"
            for i, s, w, p, q in preds
        ),
        "predictions.json": json.dumps(
            {
                "reading": {
                    "predictions": [{"id": int(i), "pred": float(p), "prev_pred": float(q)} for i, _, _, p, q in preds]
                }
            }
        ),
        "correlations.txt": "".join(f"{k}\t{v:.4f}\n" for k, v in fits.correlations),
        "predictive_power.jsonl": "".join(json.dumps(r) + "\n" for r in fits.power),
        "predictive_power_spillover.jsonl": "".join(json.dumps(r) + "\n" for r in fits.spillover),
        "report.txt": report_text(fits),
    }
    for name in FILES:
        (out / name).write_text(texts[name], encoding="utf-8")


def report_text(fits: Fits) -> str:
    """``report.txt`` as the official pipeline prints it."""
    return f"EYE TRACKING SCORE: {fits.eye_tracking:.2f}\nSELF-PACED READING SCORE: {fits.self_paced_reading:.2f}\n"
