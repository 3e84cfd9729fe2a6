"""The README's examples run as written."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
pytestmark = pytest.mark.shared


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_readme_opens_with_the_two_setup_commands():
    first = _blocks("bash")[0].strip().splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["make demo", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_python_examples_run_in_order(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    for block in _blocks("python"):
        exec(compile(block, "README.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "text 1 is whitespace only" in out
    assert "('original', 'word-l2r', 'whole-word', 'sentence-l2r')" in out


def test_cli_examples_run():
    commands = " ".join(_blocks("bash")[1].replace("\\\n", " ").split("\n")).split(".venv/bin/")[1:]
    assert len(commands) == 3
    for cmd in commands:
        cmd = cmd.strip()
        if cmd.endswith("|"):
            cmd = cmd[:-1]
        pipe_in = None
        if "echo " in README and cmd.startswith("pllscore score -"):
            pipe_in = "The cat sat on the mat.\n"
        argv = shlex.split(cmd)
        argv = [sys.executable, "-m", "pllscore.cli", *argv[1:]]
        done = subprocess.run(
            argv, cwd=ROOT, input=pipe_in, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("index\t")
