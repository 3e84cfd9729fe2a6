"""``pllscore diagnose``: how each metric behaves (length, frequency, causal agreement, OOV)."""

from __future__ import annotations

from pathlib import Path

import typer


def diagnose_command(
    model: str = typer.Option(..., "--model", "-m", help="Masked LM: Hub name or local folder."),
    causal_model: str | None = typer.Option(None, "--causal-model", "-c", help="Causal LM to compare with."),
    data: str = typer.Option(..., "--data", help="eventsadapt, brown, or a text/csv/tsv/jsonl/parquet file."),
    column: str | None = typer.Option(None, "--column", help="Text column of a table."),
    sample: int | None = typer.Option(None, "--sample", help="Use this many distinct sentences, drawn at random."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sample."),
    metric: list[str] | None = typer.Option(None, "--metric", help="Metrics to diagnose (default all)."),
    output: Path = typer.Option(..., "-o", "--output", help="Folder for tables, data and figures."),
    device: str = typer.Option("auto", "--device"),
    dtype: str | None = typer.Option(None, "--dtype"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    norm: list[str] | None = typer.Option(
        None, "--norm", help="Also run the length analysis on mean, per-char, slor or norm-lp scores; repeatable."
    ),
    unigram: str | None = typer.Option(
        None, "--unigram", help="For slor/norm-lp: a tsv/csv of token counts, or wordfreq[:LANG] (word-level)."
    ),
    unigram_corpus: Path | None = typer.Option(
        None, "--unigram-corpus", help="For slor/norm-lp: a text file to count with each model's tokenizer."
    ),
) -> None:
    """The paper's diagnostics for every metric: each Pearson r with its 95% CI and n."""
    from pllscore.analysis.run import run_diagnose

    result = run_diagnose(
        model, data=data, causal_model=causal_model, column=column, sample=sample, seed=seed,
        metrics=metric or "all", output=output, device=device, dtype=dtype, progress=False if quiet else None,
        norms=norm or None, unigram=unigram, unigram_corpus=unigram_corpus,
    )  # fmt: skip
    shown = result.summary[["analysis", "system", "r", "ci_low", "ci_high", "n"]]
    typer.echo(shown.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    o = result.oov
    typer.echo(
        f"\nOOV ({o['model']}): {o['token_ratio']:.1%} of word tokens and {o['type_ratio']:.1%} of word types "
        "are split into 2+ tokens"
    )
    typer.echo(f"tables and figures written to {output}/", err=True)
