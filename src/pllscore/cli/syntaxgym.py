"""``pllscore syntaxgym``: SyntaxGym test suites, scored in-process by a causal or masked LM.

The model, device, dtype, metric, convention and Ray options are settings fields
(:func:`pllscore.cli.options.with_settings`), as in ``pllscore score``; the command declares the suites, the
output folder, ``--engine`` and ``--final-eos``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from pllscore.cli.options import Console, engine_option, output_option, with_settings
from pllscore.settings import ModelSettings, RaySettings, RunSettings, TextSettings

__all__ = ["syntaxgym_command"]

_FIELDS = (
    *("model", "device", "dtype", "max_tokens", "compile", "share_prefixes", "metrics", "convention", "force"),
    *("address", "workers", "gpus_per_worker"),
    *("autocast", "device_map", "max_memory", "offload_folder"),
)
_OVERRIDES = {
    "model": {"help": "Causal or masked LM: Hub name, local folder or .gguf file.", "default": ...},
    "force": {"help": "Start --output afresh instead of adding to (and resuming) what it holds."},
}


@with_settings(only=_FIELDS, overrides=_OVERRIDES)
def syntaxgym_command(
    suites: list[Path] = typer.Argument(..., help="SyntaxGym test suite files (JSON); one or more."),
    output: Path | None = output_option("Folder for regions.csv, predictions.csv, summary.csv (resumed by suite)."),
    plot: bool = typer.Option(
        False, "--plot", help="Also draw accuracy.png and regions-<suite>.png (mean region surprisal) into --output."
    ),
    final_eos: bool = typer.Option(
        False,
        "--final-eos",
        help="Causal and encoder-decoder LMs: add log P(EOS | sentence) in bits (the tokenizer's EOS token) to the "
        "last non-empty region, as lm-zoo's GPT-2 image did; off by default, as in SyntaxGym.",
    ),
    engine: str = engine_option("local, or ray to spread the suites over Ray actors (one model each)."),
    settings: tuple[Console, RunSettings, ModelSettings, TextSettings, RaySettings] = None,  # type: ignore[assignment]
) -> None:
    """Region surprisals and prediction accuracy on SyntaxGym test suites; one summary line per suite."""
    from pllscore.errors import InputError
    from pllscore.eval.syntaxgym.run import syntaxgym

    console, run, model, text, ray = settings
    if plot and output is None:
        raise InputError("--plot draws into the output folder; give -o/--output too")
    result = syntaxgym(
        suites, model.model, output=output, force=run.force, progress=console.bar,
        final_eos=final_eos, engine=engine, model=model, text=text, ray=ray,
    )  # fmt: skip
    # --quiet: errors only, and the summary on stdout when it goes nowhere else
    say = console.say
    for line in (*result.notes, *(f"suite {s}: already in {output}, skipped" for s in result.skipped)):
        if say:
            typer.echo(f"note: {line}", err=True)
    if not result.summary.empty and (say or output is None):
        typer.echo(result.summary.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    if output is not None and say:
        typer.echo(f"tables written to {output}/ (regions.csv, predictions.csv, summary.csv, meta.json)", err=True)
    if plot and output is not None and not result.regions.empty:
        from pllscore.analysis.plotting.syntaxgym import plot_syntaxgym

        written = plot_syntaxgym(output)
        if say:
            typer.echo(f"figures written to {output}/ ({', '.join(p.name for p in written)})", err=True)
    for line in result.errors:
        typer.echo(f"error: {line}", err=True)
    if result.errors:
        raise typer.Exit(1)
