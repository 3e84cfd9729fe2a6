"""A suite's scores as tables: one row per region, one per (item, prediction), and the accuracy summary.

``regions``: ``suite, item_number, condition_name, region_number, content, surprisal_bits`` (the suite's
``meta.metric``), ``n_tokens``, ``model``, ``metric`` (the model's: a PLL metric, or ``causal``), ``model_id``.
``predictions``: ``suite, item_number, prediction_id`` (0-based, as SyntaxGym's ``evaluate()``), ``formula``,
``result``, ``model``, ``metric``, ``model_id``. The summary: per suite, model and metric, the accuracy (the
share of items whose predictions all hold, as SyntaxGym's maintainers define it; NaN for a suite without
predictions) and each prediction's own accuracy (``prediction_<i>``).
"""

from __future__ import annotations

from typing import Any

from pllscore.errors import InputError
from pllscore.eval.syntaxgym.regions import region_rows

__all__ = ["PREDICTION_COLUMNS", "REGION_COLUMNS", "read_regions", "suite_tables", "summary_table"]

REGION_COLUMNS = [
    *("suite", "item_number", "condition_name", "region_number", "content", "surprisal_bits"),
    *("n_tokens", "model", "metric", "model_id"),
]
PREDICTION_COLUMNS = ["suite", "item_number", "prediction_id", "formula", "result", "model", "metric", "model_id"]
_KEYS = ["suite", "model", "metric"]


def read_regions(path: Any) -> Any:
    """A ``regions.csv`` (contents as written, empty ones included; only an empty surprisal is NaN), its
    surprisal column named ``surprisal_bits`` also when an older pllscore wrote it as ``surprisal``."""
    import pandas as pd

    na = {"surprisal_bits": [""], "surprisal": [""]}
    regions = pd.read_csv(path, keep_default_na=False, na_values=na)
    return regions.rename(columns={"surprisal": "surprisal_bits"})


def suite_tables(suite: Any, results: Any, model: str, model_id: str) -> tuple[Any, Any]:
    """The region and prediction rows of ``suite`` from the :class:`~pllscore.Results` of its
    :meth:`~pllscore.eval.syntaxgym.suite.Suite.sentences` (distinct, in first-seen order), every metric."""
    import pandas as pd

    sentences = list(dict.fromkeys(suite.sentences()))
    regions, predictions = [], []
    for metric in results.metrics:
        scores = dict(zip(sentences, results.for_metric(metric)))
        for item in suite.items:
            values = {}
            for cond in item.conditions:
                for number, content, value, n in region_rows(cond, scores[cond.sentence], suite.metric):
                    values[cond.name, number] = value
                    row = (suite.name, item.number, cond.name, number, content, value, n, model, metric, model_id)
                    regions.append(row)
            for i, formula in enumerate(suite.predictions):
                try:
                    result = formula(values)
                except InputError as e:
                    raise InputError(f"suite {suite.name}, item {item.number}, prediction {i}: {e}") from None
                predictions.append((suite.name, item.number, i, formula.text, result, model, metric, model_id))
    return pd.DataFrame(regions, columns=REGION_COLUMNS), pd.DataFrame(predictions, columns=PREDICTION_COLUMNS)


def summary_table(regions: Any, predictions: Any) -> Any:
    """Per suite, model and metric (in the order of ``regions``): ``items``, ``predictions``, ``accuracy`` and
    ``prediction_<i>`` (NaN where a suite has no prediction ``i``)."""
    import pandas as pd

    base = regions.groupby(_KEYS, sort=False)["item_number"].nunique().rename("items").reset_index()
    if predictions.empty:
        return base.assign(predictions=0, accuracy=float("nan"))
    frame = predictions.assign(result=predictions["result"].astype(bool))
    per_item = frame.groupby([*_KEYS, "item_number"], sort=False)["result"].all()
    accuracy = per_item.groupby(level=[0, 1, 2], sort=False).mean().rename("accuracy")
    counts = frame.groupby(_KEYS, sort=False)["prediction_id"].nunique().rename("predictions")
    each = frame.pivot_table(index=_KEYS, columns="prediction_id", values="result", aggfunc="mean")
    each.columns = [f"prediction_{int(c)}" for c in each.columns]
    out = base.merge(counts.reset_index(), on=_KEYS, how="left").merge(accuracy.reset_index(), on=_KEYS, how="left")
    out = out.merge(each.reset_index(), on=_KEYS, how="left")
    out["predictions"] = out["predictions"].fillna(0).astype("int64")
    return pd.DataFrame(out)
