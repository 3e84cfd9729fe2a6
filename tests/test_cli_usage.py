"""Command-line mistakes through the installed console script: a usage line and exit 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "pllscore"

MISTAKES = {
    "unknown option": (["score", "--nonexistent-flag"], "No such option"),
    "missing required option": (["blimp"], "Missing option"),
    "mistyped command": (["scor"], "No such command"),
    "extra argument": (["score", "a.txt", "b.txt", "--model", "x"], "unexpected extra argument"),
}


@pytest.mark.parametrize("case", list(MISTAKES))
def test_mistake_prints_usage_not_traceback(case):
    if not SCRIPT.exists():
        pytest.fail(f"console script {SCRIPT} not installed; install the package (make venv)")
    args, message = MISTAKES[case]
    done = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "Usage: pllscore" in done.stderr
    assert message in done.stderr


def test_version_through_console_script():
    done = subprocess.run([str(SCRIPT), "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("pllscore ")


def test_plain_install_has_figures_and_typer_range():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    assert "matplotlib" in core  # explain --plot, diagnose and report draw figures without extras
    assert any(d.startswith("typer>=") and "<" in d for d in project["dependencies"])
    extras = project["optional-dependencies"]
    every = " ".join(extras["all"])
    for name, deps in extras.items():
        if name not in ("all", "test", "docs") and deps:  # test and docs are for developers
            assert f"pllscore[{name}]" in every or all(d in extras["all"] for d in deps), name
