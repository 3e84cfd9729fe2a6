"""Start-up stays light: importing the package or its command line loads no heavy library.

torch, transformers, pandas, pyarrow, matplotlib, scipy and Ray load when a scorer, a table or a figure
is first needed, so `pllscore --help` and `import pllscore` stay fast.
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
