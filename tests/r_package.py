"""The R package in r/ for the tests that run R (tests/test_r.py, the ```r examples of tests/test_docs.py): the
package installed from this checkout into a test's own library, and the environment R runs with there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workspace import ROOT, SHARED

__all__ = ["R_MISSING", "install", "r_env"]

#: why R tests cannot run here (None: they can); `make r` installs R and the package (docs/guide/r.md)
R_MISSING = None if shutil.which("Rscript") else "R is not installed (make r installs it)"


def r_env(library: Path) -> dict[str, str]:
    """R with this checkout's package first on its library path, this test run's Python and the shared models;
    a missing Python or model fails the R tests rather than skipping them (PLLSCORE_R_REQUIRE)."""
    libs = os.pathsep.join([str(library), os.environ.get("R_LIBS", "")]).rstrip(os.pathsep)
    return {
        **os.environ,
        "R_LIBS": libs,
        "PLLSCORE_PYTHON": sys.executable,
        "PLLSCORE_SHARED": str(SHARED),
        "PLLSCORE_R_REQUIRE": "1",
        "OMP_NUM_THREADS": "1",
    }


def install(base: Path) -> Path:
    """``R CMD INSTALL r`` into ``base/rlib``: the tests run this checkout's package, not one installed earlier."""
    if R_MISSING:
        pytest.skip(R_MISSING)
    library = base / "rlib"
    library.mkdir()
    done = subprocess.run(
        ["R", "CMD", "INSTALL", "--no-test-load", "-l", str(library), str(ROOT / "r")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return library
