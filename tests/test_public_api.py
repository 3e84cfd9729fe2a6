"""The public surface: a short, sorted __all__ that resolves, and no heavy imports on `import pllscore`."""

from __future__ import annotations

import subprocess
import sys

import pllscore


def test_all_is_sorted_and_resolves():
    assert pllscore.__all__ == sorted(pllscore.__all__)
    for name in pllscore.__all__:
        assert getattr(pllscore, name) is not None


def test_import_is_light():
    code = "import sys, pllscore; print(any(m in sys.modules for m in ('torch', 'transformers')))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_public_functions_are_not_shadowed_by_submodules():
    """Importing every submodule must not turn a public function into a module attribute."""
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(pllscore.__path__, "pllscore."):
        if not info.name.startswith("pllscore.cli"):
            importlib.import_module(info.name)
    for name in ("load", "score", "score_file", "explain", "to_frame"):
        assert callable(getattr(pllscore, name)), name
