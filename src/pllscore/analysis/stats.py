"""Pearson correlation with its 95% confidence interval, from scipy."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["pearson"]


def pearson(x: Any, y: Any, *, confidence: float = 0.95) -> dict[str, float]:
    """``r``, ``ci_low``, ``ci_high`` (Fisher z, as scipy computes it), ``p`` and ``n`` of finite pairs."""
    from scipy.stats import pearsonr

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = int(ok.sum())
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"r": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p": np.nan, "n": n}
    res = pearsonr(x, y)
    ci = res.confidence_interval(confidence)
    return {
        "r": float(res.statistic),
        "ci_low": float(ci.low),
        "ci_high": float(ci.high),
        "p": float(res.pvalue),
        "n": n,
    }
