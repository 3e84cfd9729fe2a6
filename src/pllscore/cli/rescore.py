"""``pllscore rescore``: rescore an n-best list with an LM, choose a hypothesis per utterance, report WER/BLEU."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from pllscore.cli.options import Progress, Quiet, output_option, progress_of, with_settings
from pllscore.errors import InputError
from pllscore.metrics import DEFAULT_METRIC
from pllscore.settings import ModelSettings, RunSettings, TableSettings, TextSettings


@with_settings(
    only=("model", "device", "dtype", "eos", "max_tokens", "metrics", "format", "resume", "force"),
    overrides={
        "model": {"default": ...},
        "metrics": {"help": f"Masked LM metric: original, {DEFAULT_METRIC} (default), whole-word or sentence-l2r."},
        "force": {"help": "Overwrite an existing output and its LM scores."},
    },
)
def rescore_command(
    input: str = typer.Argument(..., help="An n-best table (.csv, .tsv, .jsonl or .parquet), one hypothesis a row."),
    output: Path | None = output_option("Output table; format from its extension."),
    utt_column: str = typer.Option("utt_id", "--utt-column", help="Utterance id column."),
    text_column: str = typer.Option("hyp", "--text-column", help="Hypothesis text column."),
    score_column: str = typer.Option("score", "--score-column", help="First-pass score column (higher is better)."),
    ref_column: str | None = typer.Option(
        None, "--ref-column", help="Reference column, one reference per utterance (default: ref, if there)."
    ),
    split_column: str | None = typer.Option(
        None, "--split-column", help="Column whose values are dev or test (default with --tune: split)."
    ),
    source_column: str | None = typer.Option(
        None, "--source-column", help="Source sentence column: each hypothesis scored given it (translation)."
    ),
    lam: float = typer.Option(1.0, "--lambda", help="Weight of the LM score (ignored with --tune)."),
    beta: float = typer.Option(0.0, "--beta", help="Weight of the token count (ignored with --tune)."),
    tune: bool = typer.Option(False, "--tune", help="Grid-search lambda and beta on dev, apply them to test."),
    lambda_grid: str = typer.Option("0:1:0.05", "--lambda-grid", help="start:stop:step (stop included) or a,b,c."),
    beta_grid: str = typer.Option("-2:2:0.25", "--beta-grid", help="start:stop:step (stop included) or a,b,c."),
    metric_eval: str = typer.Option("wer", "--metric-eval", help="wer (jiwer) or bleu (sacrebleu), corpus level."),
    lm_scores: Path | None = typer.Option(
        None, "--lm-scores", help="Where the LM scores of the distinct hypotheses go (default: OUTPUT.lm.parquet)."
    ),
    model: ModelSettings = None,  # type: ignore[assignment]
    text: TextSettings = None,  # type: ignore[assignment]
    table: TableSettings = None,  # type: ignore[assignment]
    run: RunSettings = None,  # type: ignore[assignment]
    quiet: Quiet = False,
    progress: Progress = False,
) -> None:
    """Rescore n-best hypotheses: first pass + lambda * LM score + beta * tokens; the best per utterance."""
    from pllscore.rescore import rescore

    metrics = text.metrics or ()
    if len(metrics) > 1:
        raise InputError(f"rescore scores with one metric, got {', '.join(metrics)}; give one --metric")
    result = rescore(
        input, output, model=model.model, metric=metrics[0] if metrics else None, lam=lam, beta=beta,
        tune_on_dev=tune, lambda_grid=lambda_grid, beta_grid=beta_grid, eval_metric=metric_eval,
        utt_column=utt_column, text_column=text_column, score_column=score_column, ref_column=ref_column,
        split_column=split_column, source_column=source_column, format=table.format, lm_scores=lm_scores,
        resume=run.resume, force=run.force, device=model.device, dtype=model.dtype, max_tokens=model.max_tokens,
        eos=model.eos, progress=progress_of(quiet, progress),
        stream=sys.stdout if output is None else None,
    )  # fmt: skip
    if not quiet:
        for line in result.summary.lines():
            typer.echo(line, err=True)
