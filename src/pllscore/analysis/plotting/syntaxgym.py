"""SyntaxGym figures from ``regions.csv`` and ``summary.csv``: accuracy per suite, and per suite the mean
region surprisal by condition (region on x, mean surprisal in bits on y, one line per condition: the plot
of Hu et al. 2020 and the SyntaxGym site).

Each figure has one panel (or one bar colour) per model and metric of the tables, so a folder shared by
several models shows them side by side. Error bars are the standard error of the mean over items.
"""

from __future__ import annotations

import io
import os
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from pllscore.analysis.plotting.backend import pyplot
from pllscore.errors import InputError

__all__ = ["accuracy_figure", "figure_name", "plot_syntaxgym", "read_tables", "regions_figure", "syntaxgym_pngs"]

_SERIES = ["model", "metric"]


def _series(frame: Any) -> list[tuple[str, str]]:
    """The (model, metric) pairs of ``frame``, in first-seen order."""
    return list(dict.fromkeys(zip(frame["model"].astype(str), frame["metric"].astype(str))))


def _label(model: str, metric: str) -> str:
    return model if metric == "causal" else f"{model} ({metric})"


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def accuracy_figure(summary: Any) -> Any:
    """Bars of each suite's accuracy (share of items whose predictions all hold), one colour per model and
    metric; the value above each bar, the number of items under each suite's name."""
    plt = pyplot()
    suites = list(dict.fromkeys(summary["suite"].astype(str)))
    series = _series(summary)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(suites) * max(1, len(series)) ** 0.5 + 2.5), 3.6))
    x = np.arange(len(suites))
    width = 0.8 / len(series)
    for j, (model, metric) in enumerate(series):
        rows = summary[(summary["model"].astype(str) == model) & (summary["metric"].astype(str) == metric)]
        acc = dict(zip(rows["suite"].astype(str), rows["accuracy"].astype(float)))
        values = np.array([acc.get(s, np.nan) for s in suites])
        xs = x - 0.4 + width * (j + 0.5)
        bars = ax.bar(xs, np.nan_to_num(values), width, label=_label(model, metric), gid=f"acc-{j}")
        for bar, v in zip(bars, values):
            text = "n/a" if np.isnan(v) else f"{v:.2f}"
            ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7)  # fmt: skip
    items = summary.groupby(summary["suite"].astype(str), sort=False)["items"].max()
    turn = len(suites) > 6
    ticks = [f"{s}\n({_items(int(items[s]))})" for s in suites]
    ax.set_xticks(x, ticks, rotation=35 if turn else 0, ha="right" if turn else "center", fontsize=8)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("accuracy")
    ax.set_title("SyntaxGym accuracy: share of items whose predictions all hold", fontsize=10)
    ax.grid(axis="y", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    if len(series) > 1:
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig


def _tick_labels(rows: Any, numbers: list[int]) -> list[str]:
    """Region number over the contents of the first item's conditions at that region (distinct, wrapped)."""
    first = rows[rows["item_number"] == rows["item_number"].iloc[0]]
    labels = []
    for n in numbers:
        contents = first.loc[first["region_number"] == n, "content"].fillna("").astype(str).str.strip()
        words = " / ".join(c if len(c) <= 24 else c[:22] + "…" for c in dict.fromkeys(contents) if c)
        labels.append(f"{n}\n" + textwrap.fill(words or "(empty)", 16))
    return labels


def _draw_regions(ax: Any, rows: Any, numbers: list[int]) -> None:
    """One line per condition: mean surprisal over items at each region, with the standard error."""
    conditions = list(dict.fromkeys(rows["condition_name"].astype(str)))
    x = np.arange(len(numbers))
    grouped = rows.groupby([rows["condition_name"].astype(str), "region_number"])["surprisal_bits"]
    mean, sem, count = grouped.mean(), grouped.sem(), grouped.count()
    for i, cond in enumerate(conditions):
        shift = (i - (len(conditions) - 1) / 2) * 0.05
        m = np.array([mean.get((cond, n), np.nan) for n in numbers], dtype=float)
        e = np.array([sem.get((cond, n), np.nan) if count.get((cond, n), 0) > 1 else 0.0 for n in numbers])
        ax.errorbar(x + shift, m, yerr=np.nan_to_num(e), marker="o", markersize=4, linewidth=1.4, capsize=2,
                    label=cond)  # fmt: skip
    ax.set_xticks(x, _tick_labels(rows, numbers), fontsize=7)
    ax.set_xlim(-0.5, len(numbers) - 0.5)
    ax.set_ylabel("surprisal (bits), mean of items", fontsize=9)
    ax.grid(axis="y", color="#dddddd", linewidth=0.6)


def regions_figure(regions: Any, suite: str) -> Any:
    """Mean region surprisal by condition for ``suite``: one panel per model and metric (shared y axis)."""
    plt = pyplot()
    rows = regions[regions["suite"].astype(str) == suite]
    if rows.empty:
        raise InputError(f"no regions of suite {suite!r} to draw")
    series = _series(rows)
    numbers = sorted({int(n) for n in rows["region_number"]})
    width = min(max(5.5, 1.05 * len(numbers) + 2.5), 22.0)
    fig, axes = plt.subplots(len(series), 1, figsize=(width, 3.4 * len(series)), squeeze=False, sharey=True)
    for ax, (model, metric) in zip(axes[:, 0], series):
        part = rows[(rows["model"].astype(str) == model) & (rows["metric"].astype(str) == metric)]
        _draw_regions(ax, part, numbers)
        ax.set_title(f"{suite}: {_label(model, metric)}, {_items(part['item_number'].nunique())}", fontsize=10,
                     loc="left")  # fmt: skip
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), title="condition", title_fontsize=8)
    axes[-1, 0].set_xlabel("region (contents of the first item)", fontsize=8)
    fig.tight_layout()
    return fig


def figure_name(suite: str) -> str:
    """The PNG file name of ``suite``'s region figure (characters other than letters, digits, ``.-_`` become ``_``)."""
    return "regions-" + re.sub(r"[^\w.-]+", "_", suite) + ".png"


def syntaxgym_pngs(regions: Any, summary: Any) -> dict[str, bytes]:
    """Every figure as PNG bytes, by file name: ``accuracy.png`` (when some suite has predictions) and one
    ``regions-<suite>.png`` per suite, in the order of ``regions``."""
    plt = pyplot()
    figures: list[tuple[str, Any]] = []
    if summary["accuracy"].notna().any():
        figures.append(("accuracy.png", accuracy_figure(summary)))
    for suite in dict.fromkeys(regions["suite"].astype(str)):
        figures.append((figure_name(suite), regions_figure(regions, suite)))
    out = {}
    for name, fig in figures:
        buffer = io.BytesIO()
        try:
            fig.savefig(buffer, format="png", dpi=110)
        finally:
            plt.close(fig)
        out[name] = buffer.getvalue()
    return out


def read_tables(folder: str | os.PathLike[str]) -> tuple[Any, Any]:
    """``regions.csv`` (contents as written, empty ones included; only an empty surprisal is NaN) and
    ``summary.csv`` of a ``pllscore syntaxgym`` output folder."""
    import pandas as pd

    path = Path(folder)
    try:
        regions = pd.read_csv(path / "regions.csv", keep_default_na=False, na_values={"surprisal_bits": [""]})
        regions = regions.rename(columns={"surprisal": "surprisal_bits"})  # written by an older pllscore
        summary = pd.read_csv(path / "summary.csv")
    except FileNotFoundError as e:
        raise InputError(
            f"{os.fspath(path)!r} lacks {Path(str(e.filename)).name}; is it pllscore syntaxgym's -o folder?"
        ) from None
    return regions, summary


def plot_syntaxgym(folder: str | os.PathLike[str]) -> list[Path]:
    """Draw the figures of a ``pllscore syntaxgym`` output folder into it; returns the files written."""
    path = Path(folder)
    regions, summary = read_tables(path)
    written = []
    for name, data in syntaxgym_pngs(regions, summary).items():
        try:
            (path / name).write_bytes(data)
        except OSError as e:
            raise InputError(f"cannot write figure {os.fspath(path / name)!r}: {e.strerror}") from None
        written.append(path / name)
    return written
