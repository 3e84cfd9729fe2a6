"""Tuning ``lam`` and ``beta`` by grid search on dev utterances, and reading the grids.

In: a scored dev table with references and two grids (``"start:stop:step"``, ``"a,b,c"`` or
lists). Out: a :class:`Tuning` with the best point and the value at every grid point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pllscore.errors import InputError
from pllscore.rescoring.choice import best_per_group, combined_score, utterance_codes
from pllscore.rescoring.evaluation import check_eval_metric, corpus_metric
from pllscore.rescoring.nbest import NbestColumns

__all__ = ["DEFAULT_BETA_GRID", "DEFAULT_LAMBDA_GRID", "Tuning", "parse_grid", "tune"]

DEFAULT_LAMBDA_GRID = "0:1:0.05"  # 21 values
DEFAULT_BETA_GRID = "-2:2:0.25"  # 17 values


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
    **columns: str | None,
) -> Tuning:
    """Grid-search ``lam`` and ``beta`` for the lowest corpus WER (or the highest BLEU) on ``dev``.

    ``dev`` has the scored columns (``lm_logprob``, ``n_tokens``) and a reference per hypothesis. Among
    grid points that tie, the one with the smallest ``lam``, then the smallest ``|beta|``, then the
    smallest ``beta`` wins (the least change to the first pass). ``columns``: ``score_column`` (default
    ``score``), ``utt_column`` (``utt_id``), ``text_column`` (``hyp``), ``ref_column`` (``ref``).
    """
    import pandas as pd

    cols = NbestColumns.of(columns, "tune", ref="ref")
    metric = check_eval_metric(metric)
    lams, betas = parse_grid(lam_grid, "lambda"), parse_grid(beta_grid, "beta")
    score = dev[cols.score].to_numpy(np.float64)
    lm = dev["lm_logprob"].to_numpy(np.float64)
    n = dev["n_tokens"].to_numpy(np.float64)
    codes = utterance_codes(dev, cols.utt)
    refs, hyps = dev[cols.ref].tolist(), dev[cols.text].tolist()
    seen: dict[bytes, float] = {}  # many grid points make the same choice: evaluate each choice once
    rows = []
    for lam in lams:
        for beta in betas:
            pick = best_per_group(codes, combined_score(score, lm, n, lam, beta))
            key = pick.tobytes()
            if key not in seen:
                seen[key] = corpus_metric(metric, [refs[i] for i in pick], [hyps[i] for i in pick])
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
