"""Draw an :class:`~pllscore.analysis.explanation.Explanation`: tokens on the x axis, one bar colour per metric."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from pllscore.analysis.plotting.backend import pyplot
from pllscore.errors import InputError

__all__ = ["draw_explanation", "plot_explanation"]

_FORMATS = {".png", ".svg", ".pdf"}
_COLOURS = {"original": "#d95f02", "word-l2r": "#1b9e77", "whole-word": "#7570b3", "sentence-l2r": "#e7298a",
            "causal": "#666666"}  # fmt: skip


def plot_explanation(explanation: Any, path: str | os.PathLike[str]) -> str:
    """Write the figure to a .png, .svg or .pdf file."""
    out = Path(path)
    if out.suffix.lower() not in _FORMATS:
        raise InputError(f"cannot draw to {os.fspath(path)!r}; use a .png, .svg or .pdf file name")
    plt = pyplot()
    fig = draw_explanation(explanation)
    try:
        fig.savefig(out)
    except OSError as e:
        raise InputError(f"cannot write figure {os.fspath(path)!r}: {e.strerror}; choose another path") from None
    finally:
        plt.close(fig)
    return os.fspath(out)


def draw_explanation(explanation: Any) -> Any:
    """The figure: one panel per text (plus one for the causal LM's own tokens)."""
    plt = pyplot()
    n = explanation.n_texts
    has_causal = explanation.causal is not None
    widths = [explanation.sentence(i)[0].n_tokens for i in range(n)]
    fig_w = min(max(6.0, 0.55 * max(widths) * max(1, len(explanation.metrics)) / 2 + 2), 30.0)
    panels = n * (2 if has_causal else 1)
    fig, axes = plt.subplots(panels, 1, figsize=(fig_w, 3.2 * panels), squeeze=False)
    for i in range(n):
        ax = axes[i * (2 if has_causal else 1)][0]
        _draw_masked(ax, explanation, i)
        if has_causal:
            _draw_causal(axes[i * 2 + 1][0], explanation.causal[i])
    fig.tight_layout()
    return fig


def _draw_masked(ax: Any, explanation: Any, i: int) -> None:
    results = explanation.sentence(i)
    ref = results[0]
    k = len(results)
    x = np.arange(ref.n_tokens)
    low = min(float(np.nanmin(r.token_scores)) for r in results)
    width = 0.8 / k
    for j, r in enumerate(results):
        ax.bar(x - 0.4 + width * (j + 0.5), r.token_scores, width, label=f"{r.metric} ({r.total:.1f})",
               color=_COLOURS.get(r.metric), gid=f"bar-{r.metric}")  # fmt: skip
    _axes(ax, ref, ref.text)
    ax.set_ylim(low * 1.08 - 0.1, 0)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), title="metric (total)", title_fontsize=8)


def _draw_causal(ax: Any, r: Any) -> None:
    x = np.arange(r.n_tokens)
    kind = "causal LM" if r.metric == "causal" else "encoder-decoder LM"
    ax.bar(x, r.token_scores, 0.6, color=_COLOURS["causal"], label=f"{kind} ({r.total:.1f})", gid="bar-causal")
    _axes(ax, r, f"{kind}: {r.model}")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))


def _axes(ax: Any, r: Any, title: str) -> None:
    """Token labels (word markers removed), word boundaries, zero line, units and title."""
    labels = [p.replace("\u0120", "").replace("\u2581", "") or p for p in r.pieces]
    turn = r.n_tokens > 12
    ax.set_xticks(np.arange(r.n_tokens), labels, rotation=45 if turn else 0, ha="right" if turn else "center")
    ax.set_xlim(-0.6, r.n_tokens - 0.4)
    low = np.nanmin(r.token_scores) if np.isfinite(r.token_scores).any() else -1.0
    ax.set_ylim(min(low, 0) * 1.08 - 0.1, 0)
    _word_marks(ax, r)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_ylabel(f"log p ({r.unit})")
    ax.set_title(title, fontsize=10, loc="left", pad=16)


def _word_marks(ax: Any, r: Any) -> None:
    """Dotted lines between words, and each word's text above its tokens."""
    idx = np.asarray(r.word_index)
    for t in np.flatnonzero(idx[1:] != idx[:-1]):
        ax.axvline(t + 0.5, color="grey", linestyle=":", linewidth=0.8)
    for w, (a, b) in enumerate(r.word_spans):
        members = np.flatnonzero(idx == w)
        if len(members):
            ax.annotate(r.text[a:b], (members.mean(), 1.0), xycoords=("data", "axes fraction"), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=8, color="#333333")  # fmt: skip
