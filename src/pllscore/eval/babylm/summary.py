"""One table of a BabyLM results folder: every task and grouping x every revision (and convention).

Made from the records of finished (revision, task) units (:mod:`~pllscore.eval.babylm.records`), so a resumed
run's table holds what earlier runs finished too. Its rows are (backend, task, grouping), in the pipeline's task
order; its columns are the revisions (natural order: ``chck_2M`` before ``chck_10M``), each followed by
``<revision> pllscore`` where pllscore's convention ran: the official number and pllscore's side by side.
Values are in the units of the reports (percent for accuracies; correlations and reading scores as they are).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pllscore.eval.babylm.layout import FAST, FULL

__all__ = ["column_name", "summary_lines", "summary_table"]

_ORDER = {f: i for i, f in enumerate(dict.fromkeys(f for suite in (FAST, FULL) for f, _, _ in suite))}


def _natural(name: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def column_name(revision: str, convention: str) -> str:
    """The summary's column of a revision's numbers under a convention (``chck_1M``, ``chck_1M pllscore``)."""
    return revision if convention == "babylm" else f"{revision} {convention}"


def summary_table(
    records: Sequence[dict[str, Any]],
    *,
    backends: Sequence[str] | None = None,
    revisions: Sequence[str] | None = None,
    folders: Sequence[str] | None = None,
) -> Any:
    """The summary DataFrame of ``records`` (:meth:`~pllscore.eval.babylm.records.Records.all`), kept to the
    given backends, revisions and task folders (None: all); ``revisions`` also orders the columns."""
    import pandas as pd

    rows, seen_rows, columns = [], {}, {}
    for r in records:
        if backends is not None and r["backend"] not in backends:
            continue
        if revisions is not None and r["revision"] not in revisions:
            continue
        if folders is not None and r["folder"] not in folders:
            continue
        column = column_name(r["revision"], r["convention"])
        columns[column] = (r["revision"], r["convention"])
        for i, (grouping, value) in enumerate(r["summary"]):
            key = (r["backend"], r["folder"], str(grouping).removeprefix(r["folder"] + "/"))
            seen_rows.setdefault(key, (_ORDER.get(r["folder"], len(_ORDER)), r["folder"], i))
            rows.append({"key": key, "column": column, "value": value})
    given = {rev: i for i, rev in enumerate(revisions or ())}

    def column_order(c: str) -> tuple[Any, ...]:
        rev, conv = columns[c]
        return (given.get(rev, len(given)), _natural(rev), conv != "babylm", conv)

    ordered_columns = sorted(columns, key=column_order)
    ordered_rows = sorted(seen_rows, key=lambda k: (k[0], *seen_rows[k]))
    table = pd.DataFrame(index=pd.MultiIndex.from_tuples(ordered_rows, names=["backend", "task", "grouping"]),
                         columns=ordered_columns, dtype=float)  # fmt: skip
    for row in rows:
        table.loc[row["key"], row["column"]] = row["value"]
    return table.reset_index()


def summary_lines(table: Any) -> list[str]:
    """The summary as aligned text lines (two decimals, as the reports print them)."""
    if table.empty:
        return ["(no finished task)"]
    shown = table.copy()
    if shown["backend"].nunique() == 1:
        shown = shown.drop(columns="backend")
    text = shown.to_string(index=False, na_rep="-", float_format=lambda v: f"{v:.2f}")
    return text.splitlines()
