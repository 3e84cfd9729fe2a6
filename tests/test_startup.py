"""Start-up stays light: importing the package or its command line loads no heavy library.

torch, transformers, pandas, pyarrow, matplotlib, scipy and Ray load when a scorer, a table or a figure
is first needed, so `pllscore --help` and `import pllscore` stay fast. A command that loads a model
imports them up front with the cyclic garbage collector paused and then freezes them (gc.freeze), so
the collector does not traverse them again and again during the start-up and the load.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("torch", "transformers", "pandas", "pyarrow", "matplotlib", "scipy", "ray")


@pytest.mark.parametrize("module", ["pllscore", "pllscore.cli", "pllscore.settings"])
def test_import_loads_no_heavy_library(module):
    code = f"import sys, {module}; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "", f"import {module} loaded: {done.stdout.strip()}"


def _main_then(argv: list[str], after: str) -> str:
    """Run ``pllscore.cli.main`` with ``argv`` in a fresh process, then print ``after`` (a Python expression)."""
    code = (
        "import gc\nimport sys\nfrom pllscore.cli import main\n"
        f"sys.argv = ['pllscore', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('RESULT', {after})"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.rsplit("RESULT", 1)[1].strip()


@pytest.mark.parametrize("argv", [["score", "--help"], ["report", "--help"], ["--version"], ["blimp", "-h"]])
def test_help_and_version_load_no_heavy_library(argv):
    loaded = _main_then(argv, f"' '.join(m for m in {HEAVY!r} if m in sys.modules)")
    assert loaded == "", f"pllscore {' '.join(argv)} loaded: {loaded}"


def test_model_commands_import_with_the_collector_paused_then_freeze(tmp_path):
    """A model command imports torch, transformers and pandas once its options are checked, then freezes those
    objects (gc.freeze) so the cyclic collector stops traversing them; the collector is on again for the run."""
    import pllscore.cli

    assert "report" not in pllscore.cli.MODEL_COMMANDS and "score" in pllscore.cli.MODEL_COMMANDS
    # a model folder without config.json stops the command after the start-up: what it left is what every model
    # command starts from
    argv = ["score", "--text", "x", "--model", str(tmp_path)]
    got = _main_then(argv, "gc.isenabled(), gc.get_freeze_count() > 100_000, 'torch' in sys.modules")
    assert got == "True True True"
    # a usage error stops it before: nothing heavy is imported
    assert _main_then(["score", "--no-such-option"], "'torch' in sys.modules") == "False"


def test_start_up_freezes_once_per_process():
    code = (
        "import gc\nfrom pllscore.cli import _start_up\n_start_up()\nn = gc.get_freeze_count()\n"
        "x = [[] for _ in range(1000)]\n_start_up()\nprint(n > 0, gc.get_freeze_count() == n, gc.isenabled())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True", "True"]
