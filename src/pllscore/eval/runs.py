"""One call per evaluation command: load models, score, write tables, record provenance.

:func:`run_blimp` and :func:`run_pairs` are what ``pllscore blimp`` and ``pllscore pairs``
run. Writing into a folder that already holds results of the same kind adds rows (a model
and metric run again replace their old rows), so several models end up in one table.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.eval.blimp import blimp_tables, load_blimp
from pllscore.eval.pairs import accuracy, score_pairs
from pllscore.io.tables import write_tables

__all__ = ["EvalResult", "run_blimp", "run_pairs"]


@dataclass(frozen=True)
class EvalResult:
    """Tables of an evaluation run (all rows in the output folder, not only this run's)."""

    output: Path | None
    pairs: Any
    accuracy: Any
    summary: Any


def _scorers(models: Sequence[Any], device: str, dtype: str | None) -> list[Any]:
    from pllscore.scorer import as_scorer

    if not models:
        raise InputError("no model given; pass --model (repeatable)")
    # anything that is not a name or a path is taken to be a scorer already
    return [as_scorer(m, device=device, dtype=dtype) for m in models]


def _label(scorer: Any) -> str:
    # a local folder is named by its last component, as a paper table would
    name = scorer.name.rstrip("/\\")
    return os.path.basename(name) if os.path.isdir(name) else name


def _score_all(scorers: list[Any], pairs: Any, metrics: Any, progress: bool | None, **columns: str) -> Any:
    import pandas as pd

    frames = []
    for scorer in scorers:
        scored = score_pairs(scorer, pairs, metrics=metrics, progress=progress, **columns)
        scored["model"] = _label(scorer)
        frames.append(scored)
    return pd.concat(frames, ignore_index=True)


def _merge(output: Path | None, kind: str, scored: Any) -> Any:
    """Add this run's rows to what the folder already holds (same model and metric: replaced)."""
    import pandas as pd

    if output is None or not (output / "pairs.parquet").exists():
        return scored
    meta = output / "meta.json"
    old_kind = json.loads(meta.read_text()).get("kind") if meta.exists() else None
    if old_kind != kind:
        raise InputError(f"{output} holds {old_kind or 'other'} results, not {kind}; choose another output folder")
    old = pd.read_parquet(output / "pairs.parquet")
    done = set(zip(scored["model"], scored["metric"]))
    keep = [(m, k) not in done for m, k in zip(old["model"], old["metric"])]
    return pd.concat([old[keep], scored], ignore_index=True)


def _record(output: Path, kind: str, run: dict[str, Any], scorers: list[Any]) -> None:
    from pllscore.provenance import command_line, model_record, now, versions

    meta_file = output / "meta.json"
    meta = json.loads(meta_file.read_text()) if meta_file.exists() else {"kind": kind, "runs": []}
    run.update(
        command=command_line(),
        date=now(),
        models=[{**model_record(s), "label": _label(s)} for s in scorers],
        versions=versions(),
    )
    meta["runs"].append(run)
    meta_file.write_text(json.dumps(meta, indent=2, default=str) + "\n")


def _prepare(output: str | os.PathLike[str] | None) -> Path | None:
    if output is None:
        return None
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise InputError(f"output {os.fspath(out)!r} is a file; give a folder for the tables")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create output folder {os.fspath(out)!r}: {e.strerror}") from None
    return out


def run_blimp(
    models: Sequence[Any],
    *,
    data: str | os.PathLike[str],
    metrics: str | Sequence[str] | None = None,
    paradigms: Sequence[str] | None = None,
    limit: int | None = None,
    output: str | os.PathLike[str] | None = None,
    device: str = "auto",
    dtype: str | None = None,
    progress: bool | None = None,
) -> EvalResult:
    """Score BLiMP with each model (masked models under ``metrics``, causal ones by log-likelihood).

    Writes into ``output`` (if given): ``pairs.parquet`` (per-pair scores), ``paradigms.csv``
    (per-paradigm accuracy), ``summary.csv/.md/.tex`` (the paper's table) and ``meta.json``.
    """
    out = _prepare(output)
    pairs = load_blimp(data, paradigms, limit)
    scorers = _scorers(models, device, dtype)
    scored = _merge(out, "blimp", _score_all(scorers, pairs, metrics, progress))
    paradigm_acc, summary = blimp_tables(scored)
    if out is not None:
        scored.to_parquet(out / "pairs.parquet", index=False)
        paradigm_acc.to_csv(out / "paradigms.csv", index=False)
        write_tables(summary, out / "summary")
        run = {"data": os.fspath(data), "paradigms": sorted(set(pairs["paradigm"])), "limit": limit, "metrics": metrics}
        _record(out, "blimp", run, scorers)
    return EvalResult(out, scored, paradigm_acc, summary)


def run_pairs(
    file: str | os.PathLike[str],
    models: Sequence[Any],
    *,
    good: str,
    bad: str,
    group: str | None = None,
    metrics: str | Sequence[str] | None = None,
    output: str | os.PathLike[str] | None = None,
    device: str = "auto",
    dtype: str | None = None,
    progress: bool | None = None,
) -> EvalResult:
    """Score any minimal-pair table (csv/tsv/jsonl/parquet); accuracy overall and per ``group``.

    Writes into ``output`` (if given): ``pairs.parquet``, ``groups.csv`` (per-group accuracy, when
    ``group`` is given) and ``summary.csv/.md/.tex`` (rows model x metric, columns Overall and
    each group, x 100).
    """
    import pandas as pd

    from pllscore.io.readers import read_table

    out = _prepare(output)
    table = read_table(file)
    for role, col in (("good", good), ("bad", bad), ("group", group)):
        if col is not None and col not in table.columns:
            raise InputError(
                f"{role} column {col!r} not in {os.fspath(file)}; its columns are: {', '.join(map(str, table.columns))}"
            )
    for col in (good, bad):
        empty = [i for i, t in enumerate(table[col]) if not isinstance(t, str) or not t.strip()]
        if empty:
            raise InputError(
                f"column {col!r} of {os.fspath(file)} has empty texts (rows {', '.join(map(str, empty[:10]))})"
            )
    scorers = _scorers(models, device, dtype)
    scored = _merge(out, "pairs", _score_all(scorers, table, metrics, progress, good=good, bad=bad))
    overall = accuracy(scored, [])
    summary = overall.rename(columns={"accuracy": "Overall"}).drop(columns="n")
    summary["Overall"] *= 100
    groups = None
    if group is not None:
        groups = accuracy(scored, [group])
        wide = groups.pivot_table(index=["model", "metric"], columns=group, values="accuracy", sort=False) * 100
        summary = summary.merge(wide.reset_index(), on=["model", "metric"])
    summary = summary.round(1)
    if out is not None:
        scored.to_parquet(out / "pairs.parquet", index=False)
        if groups is not None:
            groups.to_csv(out / "groups.csv", index=False)
        write_tables(summary, out / "summary")
        _record(
            out,
            "pairs",
            {"file": os.fspath(file), "good": good, "bad": bad, "group": group, "metrics": metrics},
            scorers,
        )
    return EvalResult(out, scored, groups if groups is not None else pd.DataFrame(), summary)
