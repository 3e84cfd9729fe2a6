"""The package metadata builds without setuptools' deprecation warnings (a box on every `pip install`)."""

from __future__ import annotations

import re

import pytest

from tests.workspace import ROOT


def test_license_is_an_spdx_string_with_a_setuptools_that_reads_it():
    """`license = {text = ...}` is deprecated (setuptools >= 77 wants an SPDX expression)."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "MIT"
    (setuptools,) = [r for r in meta["build-system"]["requires"] if r.startswith("setuptools")]
    minimum = re.fullmatch(r"setuptools>=(\d+)(?:\.\d+)*", setuptools)
    assert minimum and int(minimum.group(1)) >= 77, setuptools
    assert "License ::" not in " ".join(meta["project"].get("classifiers", []))  # SPDX and a classifier clash


@pytest.mark.parametrize("makefile", ["Makefile", "benchmarks/Makefile"])
def test_makefile_recipes_echo_no_comments(makefile):
    """make prints a recipe line before running it, a `# comment` line too: comments go above the target (or `@#`)."""
    echoed = [
        f"{makefile}:{n}"
        for n, line in enumerate((ROOT / makefile).read_text().splitlines(), 1)
        if re.match(r"\t+#", line)
    ]
    assert not echoed, f"recipe comments make would echo: {echoed}"
