"""``pllscore reading-times``: how well each model's word surprisal predicts human reading times.

The model loading options are settings fields (:func:`pllscore.cli.options.with_settings`), as in
``pllscore score``; the command declares the data, its columns, the models (repeatable) and the fit's options,
and calls :func:`pllscore.reading_times`.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated

import typer

from pllscore.cli.options import Console, output_option, with_settings
from pllscore.settings import ModelSettings, RunSettings, TableSettings, TextSettings

__all__ = ["reading_times_command"]

_FIELDS = (
    *("device", "dtype", "max_tokens", "compile", "share_prefixes", "eos", "cache"),
    *("autocast", "device_map", "max_memory", "offload_folder", "force", "allow_gaps", "mask_by"),
)
_OVERRIDES = {
    "force": {"help": "Replace the earlier reading-times run in --output (none of its files survives)."},
    "mask_by": {"default": "words", "help": "Masked LMs: mask each displayed word whole (default) or by tokenizer."},
}

Models = Annotated[
    list[str],
    typer.Option("--model", "-m", help="Causal, masked or encoder-decoder LM; repeatable (each loaded once)."),
]


@with_settings(only=_FIELDS, overrides=_OVERRIDES)
def reading_times_command(
    data: Path = typer.Argument(
        ..., help="The Natural Stories folder, or a word table (csv, tsv, jsonl, parquet): one row per displayed word."
    ),
    model_names: Models = ...,  # type: ignore[assignment]
    output: Path | None = output_option("Folder for words.csv, fits.csv and meta.json (written when the run is done)."),
    measure: list[str] | None = typer.Option(
        None, "--measure", help="Reading-time column; repeatable (Natural Stories: meanItemRT)."
    ),
    text_column: str | None = typer.Option(None, "--text-column", help="Column of the text (story, sentence) id."),
    position_column: str | None = typer.Option(None, "--position-column", help="Column of the word's position."),
    word_column: str | None = typer.Option(None, "--word-column", help="Column of the word as displayed."),
    subject_column: str | None = typer.Option(
        None, "--subject-column", help="Column of the reader: per-reader rows, fitted with random intercepts."
    ),
    aggregate: bool = typer.Option(False, "--aggregate", help="Average per-reader rows per word, then fit OLS."),
    spillover: int = typer.Option(2, "--spillover", help="Preceding words whose predictors enter the fit."),
    value_range: str = typer.Option("100,3000", "--range", help="LO,HI in ms: rows outside are not fitted; or none."),
    frequency: str = typer.Option(
        "wordfreq:en", "--frequency", help="wordfreq:LANG, or a csv/tsv file with columns word and count."
    ),
    metric: str | None = typer.Option(None, "--metric", help="Masked LMs: the PLL metric (default word-l2r)."),
    bow: bool = typer.Option(False, "--bow", help="Correct word probabilities for Ġ/▁ tokenizers (causal LMs)."),
    plot: bool = typer.Option(False, "--plot", help="Also draw delta_ll.png and rt-surprisal.png into --output."),
    settings: tuple[Console, ModelSettings, RunSettings, TableSettings, TextSettings] = None,  # type: ignore[assignment]
) -> None:
    """Psychometric predictive power: ΔLL per word of each model's surprisal over length and frequency."""
    from pllscore.errors import InputError
    from pllscore.eval.reading_times.run import SmallDataWarning, reading_times

    console, model, run, table, text = settings
    if plot and output is None:
        raise InputError("--plot draws into the output folder; give -o/--output too")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallDataWarning)  # said below, in one line
        result = reading_times(
            data, model_names, output=output, measures=measure, text_column=text_column,
            position_column=position_column, word_column=word_column, subject_column=subject_column,
            aggregate=aggregate, spillover=spillover, value_range=value_range, frequency=frequency, metric=metric,
            bow=bow, mask_by=text.mask_by, progress=console.bar, model=model, force=run.force,
            allow_gaps=table.allow_gaps,
        )  # fmt: skip
    # --quiet: errors only, and the fit lines on stdout when they go nowhere else
    say = console.say
    if result.caution is not None and say:
        typer.echo(f"warning: {result.caution}", err=True)
    if say or output is None:
        for line in result.lines():
            typer.echo(line)
    if output is not None and say:
        typer.echo(f"tables written to {output}/ (words.csv, fits.csv, meta.json)", err=True)
    if plot and output is not None:
        from pllscore.analysis.plotting.reading_times import plot_reading_times

        written = plot_reading_times(output)
        if say:
            typer.echo(f"figures written to {output}/ ({', '.join(p.name for p in written)})", err=True)
