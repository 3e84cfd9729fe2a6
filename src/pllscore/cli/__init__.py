"""The ``pllscore`` command: a thin layer over the Python API.

Each subcommand parses its options, calls one API function and writes the result. Only
:class:`~pllscore.errors.PllscoreError` is caught: it becomes one line on stderr and a
non-zero exit code (130 for a run stopped by Ctrl-C, 143 by SIGTERM, which is handled as Ctrl-C is: the
finished work is recorded and kept for ``--resume``); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import sys

import typer

from pllscore.cli.babylm import babylm_command
from pllscore.cli.diagnose import diagnose_command
from pllscore.cli.evaluate import blimp_command, pairs_command
from pllscore.cli.explain import explain_command
from pllscore.cli.lm_eval import LM_EVAL_CONTEXT, LM_EVAL_HELP, lm_eval_command
from pllscore.cli.messages import cli_message
from pllscore.cli.options import BEFORE_RUN, Command
from pllscore.cli.predict import predict_command
from pllscore.cli.reading_times import reading_times_command
from pllscore.cli.report import report_command
from pllscore.cli.rescore import rescore_command
from pllscore.cli.score import score_command
from pllscore.cli.syntaxgym import syntaxgym_command
from pllscore.errors import PllscoreError

__all__ = ["app", "main"]

app = typer.Typer(
    name="pllscore",
    help=(
        "Exact sentence, word and token scores from masked LMs (pseudo-log-likelihood), causal LMs "
        "(log-likelihood) and encoder-decoder LMs (log P(text | source))."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's plain help: every flag whole at any width (rich's option table cuts long ones at 80 columns)
    rich_markup_mode=None,
)
app.command("score", cls=Command)(score_command)
app.command("explain", cls=Command)(explain_command)
app.command("predict", cls=Command)(predict_command)
app.command("blimp", cls=Command)(blimp_command)
app.command("pairs", cls=Command)(pairs_command)
app.command("diagnose", cls=Command)(diagnose_command)
app.command("report", cls=Command)(report_command)
app.command("rescore", cls=Command)(rescore_command)
app.command("syntaxgym", cls=Command)(syntaxgym_command)
app.command("reading-times", cls=Command)(reading_times_command)
app.command("babylm", cls=Command)(babylm_command)
app.command("lm-eval", context_settings=LM_EVAL_CONTEXT, help=LM_EVAL_HELP, add_help_option=False)(lm_eval_command)


@app.callback(invoke_without_command=True)
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show the full traceback of an error."),
) -> None:
    if version:
        from pllscore._version import __version__

        typer.echo(f"pllscore {__version__}")
        raise typer.Exit()


def _quiet_libraries() -> None:
    # only the command line touches other libraries' logging; the API leaves it alone
    import logging

    logging.getLogger("transformers").setLevel(logging.ERROR)
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover
        return
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


# the commands that load a model (`report` reads finished outputs and loads none)
MODEL_COMMANDS = (
    *("score", "explain", "blimp", "pairs", "diagnose", "rescore", "lm-eval", "syntaxgym", "reading-times"),
    "babylm",
)
# what every model command imports: the libraries, the modules every transformers model class imports, the loader
_START_UP = (
    "torch",
    "pandas",
    "transformers.modeling_utils",
    "transformers.activations",
    "transformers.modeling_layers",
    "transformers.masking_utils",
    "transformers.generation",
    "pllscore.scoring.api",
)


def _start_up() -> None:
    """Import what a model command needs with the cyclic garbage collector paused, then freeze it.

    These libraries leave some 700,000 objects that live as long as the process; left in the
    collector's sight they are traversed again and again while they import and while the model
    loads (a quarter of the one-sentence ``pllscore score``'s CPU time). The garbage made before
    is collected first, so only live objects are frozen (``gc.freeze``); the collector runs as
    usual on everything made afterwards. Once per process: tests call :func:`main` many times.
    """
    import gc
    from importlib import import_module

    if gc.get_freeze_count() or not gc.isenabled():
        _quiet_libraries()
        return
    gc.collect()
    gc.disable()
    try:
        for name in _START_UP:
            try:
                import_module(name)
            except ImportError:  # pragma: no cover - the command's own import reports it
                pass
        _quiet_libraries()
    finally:
        gc.freeze()
        gc.enable()


def _on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM (a batch scheduler's time limit) stops a run as Ctrl-C does: its finished work is recorded and kept.
    A second SIGTERM ends the process at once."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise KeyboardInterrupt("SIGTERM")


def _handle_sigterm() -> object:
    """Install :func:`_on_sigterm`; the handler it replaces (None where signals cannot be handled here)."""
    import signal

    try:
        return signal.signal(signal.SIGTERM, _on_sigterm)
    except (AttributeError, ValueError, OSError):  # no SIGTERM, or not the main thread
        return None


def _exit_code(stopped_by: str | None) -> int:
    """The shell's code of a run stopped by a signal: 128 + its number (SIGTERM 143, Ctrl-C 130)."""
    import signal

    return 128 + (signal.SIGTERM if stopped_by == "SIGTERM" else signal.SIGINT)


def main() -> None:
    """Entry point of the console script."""
    import signal

    debug = "--debug" in sys.argv[1:]
    args = sys.argv[1:]
    BEFORE_RUN.clear()
    if any(a in args for a in MODEL_COMMANDS) and not any(a in args for a in ("--help", "-h")):
        if "lm-eval" in args:
            from importlib.util import find_spec

            if find_spec("lm_eval") is not None:  # without the extra, its one-line error comes at once
                _start_up()  # lm-eval parses its own options
        else:
            BEFORE_RUN.append(_start_up)  # once the options are checked: an option error returns at once
    old = _handle_sigterm()
    try:
        # standalone mode: typer's own click (a vendored copy in typer >= 0.22, the click package before)
        # prints usage errors as a usage line and exits 2, so no click class needs naming here
        app(standalone_mode=True)
    except PllscoreError as e:
        if debug:
            raise
        from pllscore.cli.options import Stopped
        from pllscore.jobs.local import Interrupted

        typer.echo(f"error: {cli_message(e)}", err=True)
        sys.exit(_exit_code(e.stopped_by) if isinstance(e, (Interrupted, Stopped)) else 1)
    except KeyboardInterrupt as e:  # stopped before a command ran (while importing): nothing to keep
        if debug:
            raise
        by = e.args[0] if e.args else None
        typer.echo(f"error: interrupted{f' by {by}' if by else ''}; rerun the command", err=True)
        sys.exit(_exit_code(by))
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)  # type: ignore[arg-type]
