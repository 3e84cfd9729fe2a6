"""A fresh folder to run documentation examples in, laid out as a reader's checkout.

The examples run "from the root of a checkout, with ../shared beside it" and write their outputs
under relative names. :func:`example_folder` makes ``BASE/checkout`` with a link to every entry of
the repository (``examples/``, ``tests/``, ``.venv``, ...) and ``BASE/shared`` linked to the shared
assets, so the examples' inputs resolve as in a checkout while what they write lands in the fresh
folder: two pages, or two test runs, never overwrite each other's files, nor a user's. :func:`run_example` runs
a bash example there as written, for the docs' pages and the README alike.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

__all__ = ["ROOT", "example_folder", "run_example"]

# `.venv/bin/pllscore` and `.venv/bin/python` as a reader in a checkout types them
VENV_COMMAND = re.compile(r"(?<![\w/.])\.venv/bin/(pllscore|python)\b")


def example_folder(base: Path) -> Path:
    """``base/checkout``: links to the repository's entries, with ``base/shared`` as its ``../shared``."""
    if SHARED.exists():
        (base / "shared").symlink_to(SHARED, target_is_directory=True)
    work = base / "checkout"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name != ".git":
            (work / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    return work


def run_example(code: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a bash example as written (``bash -e -o pipefail``) in ``folder``: ``.venv/bin/python`` is this test's
    Python, ``.venv/bin/pllscore`` a command forked from the warm server whose socket ``env`` names
    (tests/cli_server.py: without the torch import per command; tests/test_cli_server.py checks it gives what a
    fresh process gives)."""
    from tests.cli_server import client_command

    script = VENV_COMMAND.sub(lambda m: client_command() if m.group(1) == "pllscore" else sys.executable, code)
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script], cwd=folder, capture_output=True, text=True, env=env
    )
