"""``pllscore explain``: a per-token table of every metric side by side, optionally drawn."""

from __future__ import annotations

from pathlib import Path

import typer


def explain_command(
    texts: list[str] = typer.Argument(..., help="One or more sentences."),
    model: str = typer.Option(..., "--model", "-m", help="Masked LM: Hub name or local folder."),
    causal_model: str | None = typer.Option(None, "--causal-model", "-c", help="Causal LM to show beside it."),
    metric: list[str] | None = typer.Option(None, "--metric", help="Metrics to compare; repeatable (default all)."),
    plot: Path | None = typer.Option(None, "--plot", help="Draw the figure to this .png, .svg or .pdf file."),
    device: str = typer.Option("auto", "--device", help="auto, cpu, cuda, cuda:1 or mps."),
    dtype: str | None = typer.Option(None, "--dtype", help="float32 (default, exact), bfloat16 or float16."),
    words: str = typer.Option(
        "tokenizer", "--words", help="Group tokens into tokenizer words (default) or whitespace words."
    ),
    mask_by: str = typer.Option(
        "tokenizer", "--mask-by", help="word-l2r/whole-word mask the tokenizer's words (default) or the --words."
    ),
) -> None:
    """Print each token's log-probability under every metric, grouped by word, with totals."""
    from pllscore.analysis.explanation import explain

    result = explain(
        texts, model, causal_model=causal_model, metrics=metric or "all", device=device, dtype=dtype, plot=plot,
        words=words, mask_by=mask_by,
    )  # fmt: skip
    typer.echo(result.render())
    if plot is not None:
        typer.echo(f"figure written to {plot}", err=True)
