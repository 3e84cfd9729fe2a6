"""The regressions of reading times on the predictors, and the cross-validated ΔLL per word.

Ordinary least squares with an intercept (statsmodels ``OLS``), or with per-reader rows a linear mixed
model with random intercepts by reader (statsmodels ``MixedLM``, fitted by maximum likelihood). For each
fold, the baseline and the full model are fitted on the other folds; a held-out row's log-likelihood is
the Gaussian density of its residual with the training residual variance (its MLE, the mean squared
training residual; a mixed model's residuals and predictions include the reader's intercept, 0 for a
reader not in the training rows). ΔLL is the mean over held-out rows of full − baseline (nats), its
standard error the SD of the per-row differences over √n. The coefficient of ``surprisal`` (w_t) and its
standard error come from the full model fitted on every row.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from pllscore.errors import InputError

__all__ = ["Fit", "fit_measure"]


@dataclass(frozen=True)
class Fit:
    """One model's fit of one measure: ``n`` rows, ``delta_ll`` (nats per row) and its standard error, the
    surprisal coefficient (ms per bit) and its standard error; ``diffs``: per fitted row, full − baseline."""

    n: int
    delta_ll: float
    delta_ll_se: float
    coef: float
    coef_se: float
    diffs: Any


def _statsmodels() -> Any:
    try:
        import statsmodels.api as sm
    except ImportError:
        raise InputError("reading-time fits need statsmodels: pip install statsmodels") from None
    return sm


def _ols(y: Any, X: Any) -> tuple[Any, Any]:
    sm = _statsmodels()
    res = sm.OLS(y, X).fit()
    return res, res.resid


def _predict_ols(res: Any, X: Any, groups: Any) -> Any:
    return X @ np.asarray(res.params)


def _mixed(y: Any, X: Any, groups: Any) -> tuple[Any, Any]:
    sm = _statsmodels()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence chatter; the fit is used as statsmodels returns it
        res = sm.MixedLM(y, X, groups=groups).fit(reml=False)
    return res, y - np.asarray(res.fittedvalues)


def _predict_mixed(res: Any, X: Any, groups: Any) -> Any:
    effects = {g: float(np.asarray(v)[0]) for g, v in res.random_effects.items()}
    return X @ np.asarray(res.fe_params) + np.array([effects.get(g, 0.0) for g in groups])


def _loglik(y: Any, pred: Any, var: float) -> Any:
    return -0.5 * np.log(2 * math.pi * var) - (y - pred) ** 2 / (2 * var)


def fit_measure(y: Any, base: Any, full: Any, fold: Any, groups: Any | None = None) -> Fit:
    """Fit ``y`` on ``base`` and on ``full`` (predictor matrices without the intercept; ``full``'s first column
    is the surprisal of w_t) with cross-validation by ``fold``; ``groups``: the reader of each row (mixed)."""
    y = np.asarray(y, dtype=float)
    X0 = np.column_stack([np.ones(len(y)), np.asarray(base, dtype=float)])
    X1 = np.column_stack([np.ones(len(y)), np.asarray(full, dtype=float)])
    fold = np.asarray(fold)
    g = None if groups is None else np.asarray(groups)
    fit, predict = (_ols, _predict_ols) if g is None else (_mixed, _predict_mixed)
    if len(y) <= X1.shape[1]:
        raise InputError(f"only {len(y)} rows are fitted, too few for {X1.shape[1]} coefficients; widen --range")
    diffs = np.full(len(y), np.nan)
    for f in np.unique(fold):
        test = fold == f
        train = ~test
        if train.sum() <= X1.shape[1]:
            raise InputError("a fold leaves too few rows to fit on; give more texts")
        lls = []
        for X in (X0, X1):
            args = (y[train], X[train]) if g is None else (y[train], X[train], g[train])
            res, resid = fit(*args)
            var = float(np.mean(np.asarray(resid) ** 2))
            pred = predict(res, X[test], None if g is None else g[test])
            lls.append(_loglik(y[test], pred, var))
        diffs[test] = lls[1] - lls[0]
    res, _ = fit(y, X1) if g is None else fit(y, X1, g)
    params = np.asarray(res.params if g is None else res.fe_params)
    bse = np.asarray(res.bse if g is None else res.bse_fe)
    n = len(y)
    se = float(np.std(diffs, ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return Fit(n, float(np.mean(diffs)), se, float(params[1]), float(bse[1]), diffs)
