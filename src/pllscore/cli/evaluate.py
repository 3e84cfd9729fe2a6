"""``pllscore blimp`` and ``pllscore pairs``: minimal-pair accuracy tables.

Their model, text and norm options are the settings fields of ``pllscore score``
(:func:`pllscore.cli.options.with_settings`); each command declares only what no settings group
has: the models (repeatable) and the data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from pllscore.cli.options import Progress, Quiet, output_option, progress_of, requires, with_settings
from pllscore.eval.settings import EvalSettings
from pllscore.settings import RunSettings

__all__ = ["EVAL_FIELDS", "Models", "blimp_command", "pairs_command"]

#: the settings fields the evaluation commands take (the models are one repeatable option of their own)
EVAL_FIELDS = (
    *("device", "dtype", "eos", "compile", "share_prefixes", "metrics", "convention", "context"),
    *("norm", "unigram", "unigram_corpus", "force"),
    *("autocast", "device_map", "max_memory", "offload_folder"),
)
_OVERRIDES = {
    "force": {
        "help": "Replace the results in --output even if they were made with other data, paradigms, limit or columns."
    },
    "norm": {
        "help": "Also count pairs by this normalised score: mean, per-char, slor or norm-lp (sum always); repeatable."
    },
}

Models = Annotated[
    list[str],
    typer.Option("--model", "-m", help="Masked, causal or encoder-decoder LM; repeatable (rows of one table)."),
]
_OUTPUT = "Folder for the tables (rows are added)."


def _blimp_data(values: dict[str, Any]) -> list[str]:
    """--data, where no BLiMP is in ../shared/data/blimp to take its place: reported with a missing --model."""
    if values.get("data") is not None:
        return []
    from pllscore.analysis.run import shared_data

    folder = shared_data("blimp")
    return [] if folder.is_dir() else [f"option '--data' (the folder of BLiMP <paradigm>.jsonl files; no {folder})"]


@requires(_blimp_data)
@with_settings(only=EVAL_FIELDS, overrides=_OVERRIDES)
def blimp_command(
    model_names: Models,
    data: Path | None = typer.Option(None, "--data", help="Folder of BLiMP <paradigm>.jsonl files."),
    paradigm: list[str] | None = typer.Option(None, "--paradigm", help="Paradigm UID; repeatable (default all)."),
    limit: int | None = typer.Option(None, "--limit", help="At most this many pairs per paradigm (quick runs)."),
    output: Path | None = output_option(_OUTPUT),
    quiet: Quiet = False,
    progress: Progress = False,
    settings: EvalSettings = None,  # type: ignore[assignment]
    run: RunSettings = None,  # type: ignore[assignment]
) -> None:
    """BLiMP accuracy per paradigm and phenomenon, in the paper's table layout."""
    from pllscore.errors import InputError
    from pllscore.eval.runs import run_blimp

    if data is None:
        from pllscore.analysis.run import shared_data

        data = shared_data("blimp")
        if not data.is_dir():
            raise InputError("pass --data with the folder of BLiMP <paradigm>.jsonl files")
    result = run_blimp(
        model_names, data=data, paradigms=paradigm or None, limit=limit, output=output,
        progress=progress_of(quiet, progress), force=run.force, model=settings.model, text=settings.text,
        table=settings.table,
    )  # fmt: skip
    _show(result, output, quiet)
    if output is not None and not quiet:
        typer.echo(
            f"tables written to {output}/ (summary.csv, summary.md, summary.tex, paradigms.csv, pairs.parquet)",
            err=True,
        )


@with_settings(only=EVAL_FIELDS, overrides=_OVERRIDES)
def pairs_command(
    model_names: Models,
    file: Path = typer.Argument(..., help="A csv, tsv, jsonl or parquet table of minimal pairs."),
    output: Path | None = output_option(_OUTPUT),
    good: str = typer.Option(..., "--good", help="Column of the acceptable sentence."),
    bad: str = typer.Option(..., "--bad", help="Column of the unacceptable sentence."),
    group: str | None = typer.Option(None, "--group", help="Column to report accuracy by."),
    quiet: Quiet = False,
    progress: Progress = False,
    settings: EvalSettings = None,  # type: ignore[assignment]
    run: RunSettings = None,  # type: ignore[assignment]
) -> None:
    """Accuracy on any minimal-pair data set: a pair is right when score(good) > score(bad)."""
    from pllscore.eval.runs import run_pairs

    result = run_pairs(
        file, model_names, good=good, bad=bad, group=group, output=output, progress=progress_of(quiet, progress),
        force=run.force, model=settings.model, text=settings.text, table=settings.table,
    )  # fmt: skip
    _show(result, output, quiet)


def _show(result: Any, output: Path | None, quiet: bool) -> None:
    """The summary table on stdout; on stderr, the models and metrics with unscored pairs. ``quiet``: the table
    only when there is no output folder (it is the result), and nothing on stderr."""
    if quiet and output is not None:
        return
    shown = result.summary.dropna(axis=1, how="all")
    typer.echo(str(shown.to_string(index=False, float_format=lambda x: f"{x:.1f}")))
    if quiet:
        return
    for row in result.unscored().itertuples():
        typer.echo(
            f"{row.model} {row.metric}: {row.n_unscored} of {row.n} pairs have a sentence with no scored token "
            "(NaN score) and count as wrong (n_unscored in the accuracy tables)",
            err=True,
        )
