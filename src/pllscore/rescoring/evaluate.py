"""WER (jiwer) and BLEU (sacrebleu) of the chosen hypotheses, the oracle WER, and the grid search of lam and beta."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pllscore.errors import InputError, PllscoreError
from pllscore.rescoring.choose import best_per_utterance, combined_score, utterance_codes

DEFAULT_LAMBDA_GRID = "0:1:0.05"  # 21 values
DEFAULT_BETA_GRID = "-2:2:0.25"  # 17 values
EVAL_METRICS = ("wer", "bleu")


def needs_package(module: str, what: str) -> Any:
    """The module ``module``, or a one-line error naming the ``rescore`` extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise PllscoreError(
            f"{what} needs the {module} package, which is not installed; pip install 'pllscore[rescore]'"
        ) from None


def _corpus_metric(metric: str, refs: Sequence[str], hyps: Sequence[str]) -> float:
    """Corpus WER (a fraction: all word errors over all reference words) or corpus BLEU (0-100)."""
    if metric == "wer":
        jiwer = needs_package("jiwer", "WER")
        return float(jiwer.wer(list(refs), list(hyps)))
    if metric == "bleu":
        sacrebleu = needs_package("sacrebleu", "BLEU")
        return float(sacrebleu.corpus_bleu(list(hyps), [list(refs)]).score)
    raise InputError(f"unknown evaluation metric {metric!r}; choose wer or bleu")


def check_eval_metric(metric: str) -> str:
    """``"wer"`` or ``"bleu"`` (any case), or a one-line error."""
    m = metric.lower() if isinstance(metric, str) else metric
    if m not in EVAL_METRICS:
        raise InputError(f"unknown evaluation metric {metric!r}; choose wer or bleu")
    return str(m)


def evaluate(
    frame: Any,
    *,
    chosen: str = "chosen",
    metric: str = "wer",
    utt_column: str = "utt_id",
    text_column: str = "hyp",
    ref_column: str = "ref",
) -> float:
    """The corpus WER (fraction) or BLEU (0-100) of the hypotheses marked ``chosen``, one per utterance."""
    metric = check_eval_metric(metric)
    picked = frame[frame[chosen].to_numpy(bool)]
    n_utt = frame[utt_column].nunique()
    if len(picked) != n_utt or picked[utt_column].nunique() != n_utt:
        raise InputError(f"column {chosen!r} must mark exactly one hypothesis per utterance")
    return _corpus_metric(metric, picked[ref_column].tolist(), picked[text_column].tolist())


def oracle_wer(frame: Any, *, utt_column: str = "utt_id", text_column: str = "hyp", ref_column: str = "ref") -> float:
    """The lowest corpus WER any choice of one hypothesis per utterance reaches (its word errors, summed)."""
    jiwer = needs_package("jiwer", "WER")
    errors, words = [], []
    for ref, hyp in zip(frame[ref_column].tolist(), frame[text_column].tolist()):
        w = jiwer.process_words(ref, hyp)
        errors.append(w.substitutions + w.deletions + w.insertions)
        words.append(w.substitutions + w.deletions + w.hits)
    codes = utterance_codes(frame, utt_column)
    best = np.full(codes.max() + 1, np.inf)
    np.minimum.at(best, codes, np.array(errors, dtype=np.float64))
    first = np.unique(codes, return_index=True)[1]  # one reference per utterance
    return float(best.sum() / np.array(words, dtype=np.float64)[first].sum())


@dataclass
class Tuning:
    """The outcome of :func:`tune`: the best ``lam`` and ``beta``, their ``value`` on dev, and every grid point."""

    lam: float
    beta: float
    value: float
    metric: str
    grid: Any  # DataFrame: lam, beta, value


def tune(
    dev: Any,
    lam_grid: Sequence[float] | str = DEFAULT_LAMBDA_GRID,
    beta_grid: Sequence[float] | str = DEFAULT_BETA_GRID,
    *,
    metric: str = "wer",
    score_column: str = "score",
    utt_column: str = "utt_id",
    text_column: str = "hyp",
    ref_column: str = "ref",
) -> Tuning:
    """Grid-search ``lam`` and ``beta`` for the lowest corpus WER (or the highest BLEU) on ``dev``.

    ``dev`` has the scored columns (``lm``, ``n_tokens``) and a reference per hypothesis. Among
    grid points that tie, the one with the smallest ``lam``, then the smallest ``|beta|``, then the
    smallest ``beta`` wins (the least change to the first pass).
    """
    import pandas as pd

    metric = check_eval_metric(metric)
    lams, betas = parse_grid(lam_grid, "lambda"), parse_grid(beta_grid, "beta")
    score = dev[score_column].to_numpy(np.float64)
    lm = dev["lm"].to_numpy(np.float64)
    n = dev["n_tokens"].to_numpy(np.float64)
    codes = utterance_codes(dev, utt_column)
    refs, hyps = dev[ref_column].tolist(), dev[text_column].tolist()
    seen: dict[bytes, float] = {}  # many grid points make the same choice: evaluate each choice once
    rows = []
    for lam in lams:
        for beta in betas:
            pick = best_per_utterance(codes, combined_score(score, lm, n, lam, beta))
            key = pick.tobytes()
            if key not in seen:
                seen[key] = _corpus_metric(metric, [refs[i] for i in pick], [hyps[i] for i in pick])
            rows.append((lam, beta, seen[key]))
    grid = pd.DataFrame(rows, columns=["lam", "beta", "value"])
    sign = 1.0 if metric == "wer" else -1.0
    ranked = sorted(rows, key=lambda r: (sign * r[2], r[0], abs(r[1]), r[1]))
    lam, beta, value = ranked[0]
    return Tuning(lam=lam, beta=beta, value=value, metric=metric, grid=grid)


def parse_grid(grid: Sequence[float] | str, name: str = "grid") -> list[float]:
    """Grid values from ``"start:stop:step"`` (stop included), ``"0,0.5,1"``, or a list of numbers."""
    if isinstance(grid, str):
        text = grid.strip()
        try:
            if ":" in text:
                start, stop, step = (float(p) for p in text.split(":"))
                if step <= 0 or stop < start:
                    raise ValueError
                count = int(math.floor((stop - start) / step + 1e-9)) + 1
                values = [round(start + k * step, 10) for k in range(count)]
            else:
                values = [float(p) for p in text.split(",") if p.strip()]
        except ValueError:
            raise InputError(
                f"cannot read the {name} grid {grid!r}; write start:stop:step (e.g. 0:1:0.05) or a list (0,0.5,1)"
            ) from None
    else:
        values = [float(v) for v in grid]
    if not values or not all(math.isfinite(v) for v in values):
        raise InputError(f"the {name} grid {grid!r} is empty or not finite; give finite numbers")
    return list(dict.fromkeys(values))
