"""LM scores for the hypothesis texts, through :func:`pllscore.score_file`.

In: the distinct hypothesis texts (each with its source sentence, when given) and a scorer. Out: ``lm_logprob`` (nats)
and ``n_tokens`` per text.
Scoring goes through a file when one is given, so an interrupted run keeps its finished
chunks and ``resume=True`` continues it.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from pllscore.errors import InputError
from pllscore.results.columns import score_column_name

__all__ = ["score_hypotheses"]


def score_hypotheses(
    texts: Sequence[str],
    model: Any,
    *,
    metric: str | None = None,
    sources: Sequence[str] | None = None,
    lm_scores: str | os.PathLike[str] | None = None,
    resume: bool = False,
    force: bool = False,
    progress: bool | None = None,
    chunk_size: int = 256,
) -> tuple[Any, str]:
    """Score ``texts`` with :func:`pllscore.score_file`; returns (``lm_logprob``, ``n_tokens``) per text and the LM's
    metric.

    ``sources``: per text, the source it is scored given (log P(text | source); the ``context`` of ``score_file``).
    ``lm_scores``: the file the scores are written to (resumable); None scores in memory.
    ``n_tokens`` is the number of tokens the LM scored (total / mean per scored token).
    """
    import pandas as pd

    from pllscore.jobs.local import score_file

    metrics = None
    if metric is not None:
        from pllscore.metrics import resolve_metrics

        chosen = resolve_metrics(metric)
        if len(chosen) != 1:
            raise InputError(f"rescoring uses one LM score; give one metric, not {', '.join(chosen)}")
        metrics = list(chosen)
    common: dict[str, Any] = dict(model=model, metrics=metrics, progress=progress, chunk_size=chunk_size)
    given: Any = list(texts)
    if sources is not None:  # a table: each text scored given its source
        given = pd.DataFrame({"text": list(texts), "source": list(sources)})
        common.update(column="text", context_column="source")
    if lm_scores is None:
        if resume:
            raise InputError("--resume needs a file for the LM scores; give -o (or --lm-scores)")
        buffer = io.StringIO()
        summary = score_file(given, None, stream=buffer, format="csv", **common)
        buffer.seek(0)
        table = pd.read_csv(buffer)  # the numbers are what is read back (an empty cell is NaN)
    else:
        summary = score_file(given, lm_scores, resume=resume, force=force, **common)
        table = _read_scores(os.fspath(lm_scores))
    name = summary.metrics[0]
    if len(table) != len(texts) or table["text_id"].tolist() != list(range(len(texts))):
        raise InputError(f"the LM scores in {lm_scores!r} do not match the hypotheses; rerun with --force")
    column = score_column_name(name, False, "nats")
    total = table[column].to_numpy(np.float64)
    mean = table[f"{column}_mean"].to_numpy(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        scored = np.where(np.isfinite(total) & (mean != 0), np.rint(total / mean), 0).astype(np.int64)
    return pd.DataFrame({"lm_logprob": total, "n_tokens": scored}), name


def _read_scores(path: str) -> Any:
    import pandas as pd

    from pllscore.io.writers import output_format

    fmt = output_format(path)
    if fmt == "parquet":
        return pd.read_parquet(path)
    if fmt == "jsonl":
        return pd.read_json(path, lines=True, precise_float=True)  # every digit written
    if fmt == "csv":
        return pd.read_csv(path)
    return pd.read_csv(path, sep="\t", quoting=3)  # a TSV cell is written as it is: no quoting (QUOTE_NONE)
