"""``pllscore predict``: what a model expects in each text's slot (``___``), one row per text and rank.

Its options are fields of :mod:`pllscore.settings` (``-k``, ``--word-tokens`` and ``--candidates`` of
:class:`~pllscore.settings.PredictSettings`; the model, the table and the run's as ``score`` has them); the
command hands them to :func:`~pllscore.jobs.predict.predict_file`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import typer

from pllscore.cli.options import Console, output_option, with_settings
from pllscore.errors import InputError
from pllscore.results.predictions import PredictionWarning
from pllscore.settings import ModelSettings, PredictSettings, RunSettings, TableSettings

_OFFERED = (
    "model", "device", "dtype", "autocast", "revision", "kind", "bos", "trust_remote_code", "max_tokens", "k",
    "word_tokens", "candidates", "column", "level", "base", "surprisal", "format", "skip_empty", "resume", "force",
    "chunk_size",
)  # fmt: skip


@with_settings(
    only=_OFFERED,
    overrides={
        "model": {"default": ...},
        "level": {"default": "word", "help": "word (the top words, default) or token (the top tokens, with entropy)."},
    },
)
def predict_command(
    input: str | None = typer.Argument(
        None, help="A .txt (one text per line), .csv, .tsv, .jsonl or .parquet file, or '-' for stdin."
    ),
    texts: list[str] | None = typer.Option(None, "--text", "-t", help="Predict this text, not a file; repeatable."),
    output: Path | None = output_option("Output file; format from its extension (default: TSV on stdout)."),
    settings: tuple[Console, ModelSettings, PredictSettings, TableSettings, RunSettings] = None,  # type: ignore[assignment]
) -> None:
    """Predict the word in each text's slot (___): a masked LM's top words there, a causal LM's next word."""
    from pllscore.jobs.predict import predict_file

    console, model, predict, table, run = settings

    if texts and input is not None:
        raise InputError("give either an INPUT file or --text, not both")
    if not texts and input is None:
        raise InputError("nothing to predict: give an INPUT file, '-' for stdin, or --text 'The ___ barked.'")
    if table.level not in ("word", "token"):
        raise InputError(f"unknown level {table.level!r}; choose word (default) or token")
    given = list(texts) if texts else input
    run = run.replace(progress=console.bar)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PredictionWarning)
        try:
            summary = predict_file(given, output, model=model, predict=predict, table=table, run=run)  # type: ignore[arg-type]
        finally:  # what a run could not do, one line each, also when it stops
            for w in caught:
                if issubclass(w.category, PredictionWarning):
                    typer.echo(f"warning: {w.message}", err=True)
                else:
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if console.say:
        typer.echo(summary.line(), err=True)
