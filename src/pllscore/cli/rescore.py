"""``pllscore rescore``: rescore an n-best list with an LM, choose a hypothesis per utterance, report WER/BLEU."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from pllscore.metrics import DEFAULT_METRIC


def rescore_command(
    input: str = typer.Argument(..., help="An n-best table (.csv, .tsv, .jsonl or .parquet), one hypothesis a row."),
    model: str = typer.Option(..., "--model", "-m", help="Hub name or local folder of a masked or causal LM."),
    metric: str | None = typer.Option(
        None, "--metric", help=f"Masked LM metric: original, {DEFAULT_METRIC} (default), whole-word or sentence-l2r."
    ),
    output: Path | None = typer.Option(None, "-o", "--output", help="Output table; format from its extension."),
    fmt: str | None = typer.Option(None, "--format", help="csv, tsv, jsonl or parquet (default: from -o, else tsv)."),
    utt_column: str = typer.Option("utt_id", "--utt-column", help="Utterance id column."),
    text_column: str = typer.Option("hyp", "--text-column", help="Hypothesis text column."),
    score_column: str = typer.Option("score", "--score-column", help="First-pass score column (higher is better)."),
    ref_column: str | None = typer.Option(
        None, "--ref-column", help="Reference column, one reference per utterance (default: ref, if there)."
    ),
    split_column: str | None = typer.Option(
        None, "--split-column", help="Column whose values are dev or test (default with --tune: split)."
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
    device: str = typer.Option("auto", "--device", help="auto, cpu, cuda, cuda:1 or mps."),
    dtype: str | None = typer.Option(None, "--dtype", help="float32 (default, exact), bfloat16 or float16."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Padded tokens per batch."),
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted run into the same output."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing output and its LM scores."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar and no summary."),
    progress: bool = typer.Option(
        False, "--progress", help="Show the progress bar even when stderr is not a terminal."
    ),
) -> None:
    """Rescore n-best hypotheses: first pass + lambda * LM score + beta * tokens; the best per utterance."""
    from pllscore.rescore import rescore

    result = rescore(
        input, output, model=model, metric=metric, lam=lam, beta=beta, tune_on_dev=tune, lambda_grid=lambda_grid,
        beta_grid=beta_grid, eval_metric=metric_eval, utt_column=utt_column, text_column=text_column,
        score_column=score_column, ref_column=ref_column, split_column=split_column, format=fmt,
        lm_scores=lm_scores, resume=resume, force=force, device=device, dtype=dtype, max_tokens=max_tokens,
        progress=False if quiet else (True if progress else None), stream=sys.stdout if output is None else None,
    )  # fmt: skip
    if not quiet:
        for line in result.summary.lines():
            typer.echo(line, err=True)
