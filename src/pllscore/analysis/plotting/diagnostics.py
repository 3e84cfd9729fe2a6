"""Scatter figures of the diagnostics (the paper's Figures 3-4): a panel per system, regression line, r on top."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from pllscore.analysis.plotting.backend import pyplot

__all__ = ["scatter_panels"]


def scatter_panels(
    data: Any, x: str, y: str, *, xlabel: str, ylabel: str, title: str, path: str | os.PathLike[str]
) -> str:
    """One panel per system (``metric``) of ``data``: points, least-squares line, and Pearson r (95% CI, n) on top."""
    from pllscore.analysis.stats import pearson

    plt = pyplot()
    systems = list(dict.fromkeys(data["metric"]))
    cols = min(len(systems), 5)
    rows = -(-len(systems) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.0 * rows), squeeze=False, sharey=False)
    for ax in axes.flat[len(systems) :]:
        ax.set_visible(False)
    for ax, name in zip(axes.flat, systems):
        g = data[data["metric"] == name]
        xs, ys = g[x].to_numpy(dtype=float), g[y].to_numpy(dtype=float)
        ok = np.isfinite(xs) & np.isfinite(ys)
        ax.scatter(xs[ok], ys[ok], s=8, alpha=0.5, color="#1b9e77" if name != "causal" else "#666666", linewidths=0)
        st = pearson(xs, ys)
        if ok.sum() >= 2 and np.ptp(xs[ok]) > 0:
            slope, icept = np.polyfit(xs[ok], ys[ok], 1)
            grid = np.linspace(xs[ok].min(), xs[ok].max(), 2)
            ax.plot(grid, slope * grid + icept, color="black", linewidth=1)
        ax.set_title(f"{name}\nr = {st['r']:.2f} [{st['ci_low']:.2f}, {st['ci_high']:.2f}], n = {st['n']}", fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return os.fspath(path)
