"""``pllscore score``: score a file (or stdin, or --text) and write one column per metric.

Every option but the input, ``--text``, ``-o``, ``--engine`` and ``--quiet``/``--progress`` is a field of
:mod:`pllscore.settings`; the command builds the settings objects once and hands them to
:func:`~pllscore.jobs.local.score_file` or the Ray engine's :func:`~pllscore.jobs.ray.score_dataset`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from pllscore.cli.options import Progress, Quiet, engine_option, output_option, progress_of, with_settings
from pllscore.errors import InputError
from pllscore.jobs.run_settings import JobSettings

ENGINES = ("local", "ray")


@with_settings(overrides={"model": {"default": ...}})
def score_command(
    input: str | None = typer.Argument(
        None, help="A .txt (one text per line), .csv, .tsv, .jsonl or .parquet file, or '-' for stdin."
    ),
    texts: list[str] | None = typer.Option(None, "--text", "-t", help="Score this text instead of a file; repeatable."),
    output: Path | None = output_option("Output file (a folder with --engine ray); format from its extension."),
    engine: str = engine_option("local, or ray to score on a Ray cluster (-o is a folder)."),
    quiet: Quiet = False,
    progress: Progress = False,
    job: JobSettings = None,  # type: ignore[assignment]
) -> None:
    """Score texts with a masked LM (PLL), a causal LM (log-likelihood) or an encoder-decoder LM
    (log P(text | source), the empty source by default)."""
    from pllscore.jobs.local import score_file

    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; choose local or ray")
    run = job.run.replace(progress=progress_of(quiet, progress))
    summary: object
    if engine == "ray":
        from pllscore.jobs.ray import score_dataset

        if input is None or output is None:
            raise InputError("--engine ray needs INPUT (files, a folder or a glob) and -o OUT_DIR")
        summary = score_dataset(input, output, model=job.model, text=job.text, table=job.table, run=run, ray=job.ray)
    else:
        if texts and input is not None:
            raise InputError("give either an INPUT file or --text, not both")
        if not texts and input is None:
            raise InputError("nothing to score: give an INPUT file, '-' for stdin, or --text 'a sentence'")
        given = list(texts) if texts else input
        summary = score_file(given, output, model=job.model, text=job.text, table=job.table, run=run)  # type: ignore[arg-type]
    if not quiet:
        typer.echo(summary.line(), err=True)  # type: ignore[attr-defined]
