"""The R package's own tests (r/tests/testthat): every R function equals the Python API, run by testthat in one R
process with this run's Python. Skipped in one line where R is not installed (`make r` installs it)."""

from __future__ import annotations

import subprocess

import pytest

from tests.r_package import install, r_env
from tests.workspace import ROOT


@pytest.mark.shared
def test_r_package_tests_pass(tmp_path):
    library = install(tmp_path)
    code = (
        'res <- testthat::test_dir("r/tests/testthat", package = "pllscore", load_package = "installed", '
        'reporter = "summary", stop_on_failure = FALSE); '
        "df <- as.data.frame(res); "
        'cat(sprintf("\\nR tests: %d passed, %d failed, %d skipped\\n", '
        "sum(df$passed), sum(df$failed), sum(df$skipped))); "
        "quit(status = as.integer(sum(df$failed) > 0 || any(df$error) || sum(df$skipped) > 0))"
    )
    done = subprocess.run(["Rscript", "-e", code], cwd=ROOT, capture_output=True, text=True, env=r_env(library))
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "R tests:" in done.stdout and " 0 failed, 0 skipped" in done.stdout


def test_make_r_builds_the_python_side_too(tmp_path):
    """One command sets up both sides: `make r` builds the venv (the R package's error names `make r`)."""
    venv = tmp_path / "venv"
    done = subprocess.run(["make", "-n", "r", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"-m venv {venv}" in done.stdout
    assert "R CMD INSTALL" in done.stdout
