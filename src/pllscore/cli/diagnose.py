"""``pllscore diagnose``: how each metric behaves (length, frequency, causal agreement, OOV).

The model, metric, text column and norm options are settings fields
(:func:`pllscore.cli.options.with_settings`), as in ``pllscore score``. An existing non-empty ``--output`` is
refused unless ``--force`` (which replaces an earlier diagnose run there whole).
"""

from __future__ import annotations

from pathlib import Path

import typer

from pllscore.cli.options import CausalModel, Progress, Quiet, output_option, progress_of, with_settings
from pllscore.jobs.run_settings import JobSettings

__all__ = ["diagnose_command"]

_FIELDS = ("model", "device", "dtype", "metrics", "column", "norm", "unigram", "unigram_corpus", "force")
_OVERRIDES = {
    "force": {"help": "Replace the earlier diagnose run in --output (its files are all removed)."},
    "model": {"help": "Masked LM: Hub name or local folder.", "default": ...},
    "metrics": {"help": "Metrics to diagnose (default all)."},
    "norm": {"help": "Also run the length analysis on mean, per-char, slor or norm-lp scores; repeatable."},
}


@with_settings(only=_FIELDS, overrides=_OVERRIDES)
def diagnose_command(
    data: str = typer.Option(..., "--data", help="eventsadapt, brown, or a text/csv/tsv/jsonl/parquet file."),
    output: Path = output_option("Folder for tables, data and figures.", ...),
    causal_model: CausalModel = None,
    sample: int | None = typer.Option(None, "--sample", help="Use this many distinct sentences, drawn at random."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sample."),
    quiet: Quiet = False,
    progress: Progress = False,
    job: JobSettings = None,  # type: ignore[assignment]
) -> None:
    """The paper's diagnostics for every metric: each Pearson r with its 95% CI and n."""
    from pllscore.analysis.run import run_diagnose

    model, table = job.model, job.table
    result = run_diagnose(
        model.model, data=data, causal_model=causal_model, column=table.column, sample=sample, seed=seed,
        metrics=job.text.metrics or "all", output=output, device=model.device, dtype=model.dtype,
        progress=progress_of(quiet, progress), norms=table.norm, unigram=table.unigram,
        unigram_corpus=table.unigram_corpus, force=job.run.force,
    )  # fmt: skip
    if quiet:  # the results are in the folder
        return
    shown = result.summary[["analysis", "metric", "r", "ci_low", "ci_high", "n"]]
    typer.echo(shown.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    o = result.oov
    typer.echo(
        f"\nOOV ({o['model']}): {o['token_ratio']:.1%} of word tokens and {o['type_ratio']:.1%} of word types "
        "are split into 2+ tokens"
    )
    typer.echo(f"tables and figures written to {output}/", err=True)
