"""Reading-time figures from ``words.csv`` and ``fits.csv`` (``pllscore reading-times --plot``).

``delta_ll.png``: ΔLL per word of each model's surprisal, one bar per model (a group per measure), with
±1 standard error. ``rt-surprisal.png``: per model (rows) and measure (columns), the fitted rows' mean reading
time in bins of surprisal (equal-count bins; ±1 standard error of the bin's mean) with the fitted line: the
in-sample partial coefficient of surprisal in the full model (the other predictors held constant), drawn
through the means (OLS with an intercept passes through them, so it is the full model's prediction with the
other predictors at their means) over the range of the binned means only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from pllscore.analysis.plotting.backend import pyplot
from pllscore.errors import InputError
from pllscore.results.columns import included_column, score_column_name, words_columns_now

__all__ = ["BINS", "delta_ll_figure", "plot_reading_times", "read_tables", "reading_times_pngs", "rt_surprisal_figure"]

#: equal-count surprisal bins of the binned means
BINS = 20


def read_tables(folder: str | os.PathLike[str]) -> tuple[Any, Any]:
    """``words.csv`` and ``fits.csv`` of a reading-times folder (words kept as text)."""
    import pandas as pd

    path = Path(folder)
    if not (path / "fits.csv").is_file() or not (path / "words.csv").is_file():
        raise InputError(f"{os.fspath(path)} has no words.csv and fits.csv; run pllscore reading-times -o there first")
    words = pd.read_csv(
        path / "words.csv", keep_default_na=False, na_values=[""], dtype={"word": str, "text_key": str, "text": str}
    )
    words = words.rename(columns=words_columns_now(words.columns))  # a folder written under the old names
    fits = pd.read_csv(path / "fits.csv", keep_default_na=False, dtype={"model": str, "measure": str})
    return words, fits


def delta_ll_figure(fits: Any) -> Any:
    """Bars of ΔLL per word (nats) per model, grouped by measure, with ±1 standard error."""
    plt = pyplot()
    models = list(dict.fromkeys(fits["model"]))
    measures = list(dict.fromkeys(fits["measure"]))
    fig, ax = plt.subplots(figsize=(max(4.5, 1.2 * len(models) * len(measures) + 2), 3.6))
    width = 0.8 / len(models)
    x = np.arange(len(measures))
    for j, model in enumerate(models):
        rows = fits[fits["model"] == model].set_index("measure").reindex(measures)
        ax.bar(x - 0.4 + width * (j + 0.5), rows["delta_ll"].to_numpy(float), width,
               yerr=rows["delta_ll_se"].to_numpy(float), capsize=3, label=model, gid=f"dll-{j}")  # fmt: skip
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, measures)
    ax.set_ylabel("ΔLL per word (nats, held out)")
    ax.set_title("Psychometric predictive power of surprisal")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def rt_surprisal_figure(words: Any, fits: Any, bins: int = BINS) -> Any:
    """Per model and measure, binned mean reading time against surprisal (bits) with the fitted line."""
    plt = pyplot()
    models = list(dict.fromkeys(fits["model"]))
    measures = list(dict.fromkeys(fits["measure"]))
    fig, axes = plt.subplots(len(models), len(measures), figsize=(4.2 * len(measures), 3.2 * len(models)),
                             squeeze=False)  # fmt: skip
    for i, model in enumerate(models):
        for j, measure in enumerate(measures):
            ax = axes[i][j]
            keep = words[included_column(measure)].astype(str).str.lower().eq("true").to_numpy()
            s = words[score_column_name(model, True, "bits")].to_numpy(float)[keep]
            y = words[measure].to_numpy(float)[keep]
            edges = np.unique(np.quantile(s, np.linspace(0, 1, bins + 1)))
            which = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, len(edges) - 2)
            xs, ms, es = [], [], []
            for b in range(len(edges) - 1):
                inside = which == b
                if inside.sum() == 0:
                    continue
                xs.append(s[inside].mean())
                ms.append(y[inside].mean())
                es.append(y[inside].std(ddof=1) / np.sqrt(inside.sum()) if inside.sum() > 1 else 0.0)
            ax.errorbar(xs, ms, yerr=es, fmt="o", markersize=3, capsize=2, label="binned mean")
            coef = float(fits[(fits["model"] == model) & (fits["measure"] == measure)]["coef"].iloc[0])
            line = np.linspace(min(xs), max(xs), 50)  # over the binned means only, not the sparse tails
            label = f"partial slope: {coef:.2f} ms/bit\n(full model, other predictors held)"
            ax.plot(line, y.mean() + coef * (line - s.mean()), color="C3", label=label, gid="fit")
            ax.set_xlabel(f"surprisal (bits), {model}")
            ax.set_ylabel(f"{measure} (ms)")
            ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def reading_times_pngs(words: Any, fits: Any) -> dict[str, bytes]:
    """The two figures as PNG bytes, by file name (for ``pllscore report``)."""
    import io

    plt = pyplot()
    out = {}
    for name, fig in (("delta_ll.png", delta_ll_figure(fits)), ("rt-surprisal.png", rt_surprisal_figure(words, fits))):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)
        plt.close(fig)
        out[name] = buf.getvalue()
    return out


def plot_reading_times(folder: str | os.PathLike[str]) -> list[Path]:
    """Draw ``delta_ll.png`` and ``rt-surprisal.png`` into ``folder`` from its tables; the files written."""
    plt = pyplot()
    words, fits = read_tables(folder)
    out = []
    for name, fig in (("delta_ll.png", delta_ll_figure(fits)), ("rt-surprisal.png", rt_surprisal_figure(words, fits))):
        path = Path(folder) / name
        fig.savefig(path, dpi=120)
        plt.close(fig)
        out.append(path)
    return out
