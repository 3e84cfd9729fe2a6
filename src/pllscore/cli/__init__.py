"""The ``pllscore`` command: a thin layer over the Python API.

Each subcommand parses its options, calls one API function and writes the result. Only
:class:`~pllscore.errors.PllscoreError` is caught: it becomes one line on stderr and exit
code 1; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys

import typer

from pllscore.cli.score import score_command
from pllscore.errors import PllscoreError

__all__ = ["app", "main"]

app = typer.Typer(
    name="pllscore",
    help="Exact sentence, word and token scores from masked LMs (pseudo-log-likelihood) and causal LMs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("score")(score_command)


@app.callback(invoke_without_command=True)
def _root(version: bool = typer.Option(False, "--version", help="Print the version and exit.")) -> None:
    if version:
        from pllscore import __version__

        typer.echo(f"pllscore {__version__}")
        raise typer.Exit()


def main() -> None:
    """Entry point of the console script."""
    try:
        app(standalone_mode=False)
    except PllscoreError as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(1)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(130)
    except Exception as e:  # click usage errors: print as click would, keep real bugs loud
        import click

        if isinstance(e, click.ClickException):
            e.show()
            sys.exit(e.exit_code)
        raise
