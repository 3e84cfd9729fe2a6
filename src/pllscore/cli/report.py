"""``pllscore report``: one HTML page (and Markdown) from blimp/pairs/diagnose/syntaxgym/reading-times output folders.

``--force`` is the settings field (:class:`~pllscore.settings.RunSettings`), as in the other commands.
"""

from __future__ import annotations

from pathlib import Path

import typer

from pllscore.cli.options import Quiet, output_option, with_settings
from pllscore.settings import RunSettings

__all__ = ["report_command"]


@with_settings(only=("force",), overrides={"force": {"help": "Overwrite the report (and its .md) if they exist."}})
def report_command(
    folders: list[Path] = typer.Argument(
        ..., help="Output folders of pllscore blimp, pairs, diagnose, syntaxgym or reading-times."
    ),
    output: Path = output_option("The HTML file (a .md is written beside it).", Path("report.html")),
    quiet: Quiet = False,
    run: RunSettings = None,  # type: ignore[assignment]
) -> None:
    """Write a self-contained HTML report with tables, figures, commands and versions."""
    from pllscore.analysis.report import make_report

    html_path, md_path = make_report(folders, output, force=run.force)
    if not quiet:
        typer.echo(f"report written to {html_path} and {md_path}", err=True)
