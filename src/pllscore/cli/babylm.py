"""``pllscore babylm``: the BabyLM Challenge's zero-shot evaluation of every checkpoint of a model.

The backend, tasks, checkpoints, convention and temperatures are :class:`~pllscore.settings.babylm.BabylmSettings`
fields, the loading options :class:`~pllscore.settings.ModelSettings`' and ``--resume``/``--force``
:class:`~pllscore.settings.RunSettings`' (:func:`pllscore.cli.options.with_settings`); the command declares the
model, the data folder, the results folder and ``--engine``, and calls :func:`pllscore.babylm`.
"""

from __future__ import annotations

from pathlib import Path

import typer

from pllscore.cli.options import Progress, Quiet, engine_option, output_option, progress_of, with_settings
from pllscore.settings import ModelSettings, RaySettings, RunSettings
from pllscore.settings.babylm import BabylmSettings

__all__ = ["babylm_command"]

_FIELDS = (
    *("backend", "tasks", "revisions", "revisions_file", "convention", "batch_size", "trust_remote_code"),
    *("min_temperature", "max_temperature", "temperature_interval"),
    *("device", "dtype", "resume", "force", "address", "workers", "gpus_per_worker"),
)
_OVERRIDES = {
    "backend": {"default": ...},
    "resume": {"help": "Continue a stopped run into the same results folder (finished revision-task pairs are kept)."},
    "force": {"help": "Run every task again, replacing the files an earlier run wrote for it."},
}


@with_settings(only=_FIELDS, overrides=_OVERRIDES)
def babylm_command(
    model_name: str = typer.Argument(
        ..., metavar="MODEL", help="Hub name, a saved model's folder, or a folder whose sub-folders are checkpoints."
    ),
    data: Path = typer.Option(
        ..., "--data", "-d", help="The pipeline's evaluation folder (fast_eval or full_eval) as downloaded."
    ),
    output: Path = output_option(
        "Results folder: RESULTS/<model>/<revision>/zero_shot/<backend>/..., as the official pipeline writes it.",
        default=...,
    ),
    engine: str = engine_option("local, or ray to spread the checkpoints over Ray actors (one checkpoint each)."),
    quiet: Quiet = False,
    progress: Progress = False,
    babylm: BabylmSettings = None,  # type: ignore[assignment]
    model: ModelSettings = None,  # type: ignore[assignment]
    run: RunSettings = None,  # type: ignore[assignment]
    ray: RaySettings = None,  # type: ignore[assignment]
) -> None:
    """BLiMP, the supplement, EWoK, entity tracking, WUG, COMPS and reading times, with the official numbers and
    files (collate_preds.py collects them), for every checkpoint in one process; one summary table."""
    from pllscore.eval.babylm.run import babylm as run_babylm

    say = not quiet

    def note(line: str) -> None:
        if say:
            typer.echo(f"note: {line}", err=True)

    result = run_babylm(
        model_name, data, output, **babylm.as_dict(), resume=run.resume, force=run.force, engine=engine,
        progress=progress_of(quiet, progress), device=model.device, dtype=model.dtype, ray=ray, on_note=note,
    )  # fmt: skip
    if say and result.resumed:
        typer.echo(f"note: {len(result.resumed)} task(s) finished by an earlier run kept (--resume)", err=True)
    for line in result.lines():
        typer.echo(line)
    if say:
        typer.echo(f"results written to {result.output}/ (summary.csv, provenance.json)", err=True)
