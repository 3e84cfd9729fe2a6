"""The README is the landing page: the two set-up commands first, examples that run as written, working links."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.r_package import install, r_env
from tests.workspace import ROOT, example_folder, run_example

README = (ROOT / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_readme_opens_with_the_two_setup_commands():
    first = _blocks("bash")[0].strip().splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["make demo", "make test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci
    for target in re.findall(r"^make (\S+)", ci, flags=re.M):  # every set-up step of CI is one the README shows
        assert f"make {target}" in README, target


def test_readme_is_a_landing_page():
    """At most 250 lines; the rest of the documentation is the site in docs/."""
    assert len(README.splitlines()) <= 250
    assert "make docs" in README


def test_readme_links_point_at_files():
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README):
        if "://" in target:
            continue
        assert (ROOT / target).exists(), f"README links to {target}, which is not there"


@pytest.mark.shared
def test_python_examples_run_in_order(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(example_folder(tmp_path))  # a fresh folder laid out as a checkout: outputs stay there
    namespace: dict = {}
    blocks = _blocks("python")
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    assert "souvenir" in capsys.readouterr().out


@pytest.mark.shared
def test_r_example_runs(tmp_path):
    """The R block, with the R package of r/ (a skip in one line where R is not installed)."""
    (block,) = _blocks("r")
    library = install(tmp_path)
    script = tmp_path / "readme.R"
    script.write_text(block + "print(d)\n")
    work = example_folder(tmp_path)
    done = subprocess.run(["Rscript", str(script)], cwd=work, capture_output=True, text=True, env=r_env(library))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "surprisal" in done.stdout and "bark." in done.stdout


@pytest.mark.shared
def test_cli_examples_run(tmp_path, example_env):
    """Every bash block after the set-up one, run as written (``pllscore`` forked from the run's warm server, as the
    docs' examples are: tests/test_cli_server.py checks it gives what a fresh process gives), in a fresh folder laid
    out as a checkout."""
    work = example_folder(tmp_path)
    ran = 0
    for block in _blocks("bash")[1:]:
        if ".venv/bin/pllscore" not in block:
            continue  # `make docs`: the site build is tests/test_docs.py's
        done = run_example(block, work, example_env)
        assert done.returncode == 0, f"{block}\n{done.stderr}"
        ran += block.count(".venv/bin/pllscore")
    assert ran >= 2


@pytest.mark.shared
def test_demo_explains_every_metric(tmp_path):
    """`make demo` ends with one line per PLL metric saying what it masks."""
    import pllscore

    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        cwd=example_folder(tmp_path),
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    for name, rule in pllscore.METRICS.items():
        assert f"{name} {rule}" in lines, f"the demo does not explain {name}"
    assert "Loading weights" not in done.stderr
