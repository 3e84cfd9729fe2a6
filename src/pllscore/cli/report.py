"""``pllscore report``: one HTML page (and Markdown) from blimp/pairs/diagnose/syntaxgym output folders."""

from __future__ import annotations

from pathlib import Path

import typer

from pllscore.cli.options import output_option


def report_command(
    folders: list[Path] = typer.Argument(..., help="Output folders of pllscore blimp, pairs, diagnose or syntaxgym."),
    output: Path = output_option("The HTML file (a .md is written beside it).", Path("report.html")),
) -> None:
    """Write a self-contained HTML report with tables, figures, commands and versions."""
    from pllscore.analysis.report import make_report

    html_path, md_path = make_report(folders, output)
    typer.echo(f"report written to {html_path} and {md_path}", err=True)
