"""``pllscore explain``: a per-token table of every metric side by side, optionally drawn."""

from __future__ import annotations

from pathlib import Path

import typer

from pllscore.cli.options import CausalModel, with_settings
from pllscore.settings import ModelSettings, TextSettings


@with_settings(
    only=("model", "device", "dtype", "metrics", "words", "mask_by"),
    overrides={
        "model": {"default": ..., "help": "Masked LM: Hub name or local folder."},
        "metrics": {"help": "Metrics to compare; repeatable (default all)."},
        "words": {"help": "Group tokens into tokenizer words (default) or whitespace words."},
        "mask_by": {"help": "word-l2r/whole-word mask the tokenizer's words (default) or the --words."},
    },
)
def explain_command(
    texts: list[str] = typer.Argument(..., help="One or more sentences."),
    causal_model: CausalModel = None,
    plot: Path | None = typer.Option(None, "--plot", help="Draw the figure to this .png, .svg or .pdf file."),
    model: ModelSettings = None,  # type: ignore[assignment]
    text: TextSettings = None,  # type: ignore[assignment]
) -> None:
    """Print each token's log-probability under every metric, grouped by word, with totals."""
    from pllscore.analysis.explanation import explain

    result = explain(
        texts, model.model, causal_model=causal_model, metrics=text.metrics or "all", device=model.device,
        dtype=model.dtype, plot=plot, words=text.words, mask_by=text.mask_by,
    )  # fmt: skip
    typer.echo(result.render())
    if plot is not None:
        typer.echo(f"figure written to {plot}", err=True)
