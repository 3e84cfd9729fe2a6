"""Write the bytecode of what pllscore and its tests import, once, in one process.

    python scripts/warm_bytecode.py    # make test runs this beside scripts/check-install.sh

`make venv` installs the packages without bytecode: compiling all of them (20,000 files: every model of
transformers, all of torch, Ray and lm-eval) costs about 54 s on 2 cores, and a run imports under a quarter of
them. Make unexports PYTHONDONTWRITEBYTECODE, so each module's bytecode is written the first time a process
imports it. Done here first, in one process beside check-install's (which has a venv of its own), the test
run's processes find it written instead of compiling the same modules at the same time: the two pytest
workers, their fork servers and Ray's actors all start by importing torch and transformers.

What it imports: the command line's start-up set, every module of pllscore (its integrations pull in Ray,
lm-eval and gguf where installed), the model classes of the shared models and the test tools. A module it
misses costs nothing but its own compile, once, in the test run. It never fails: an import error is the
test run's to report.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

# the model classes the tests load most (tests/conftest.py's families, ../shared/models), the libraries
# pllscore imports inside its functions, and the test tools
EXTRA = (
    "transformers.models.bert.modeling_bert",
    "transformers.models.gpt2.modeling_gpt2",
    "transformers.models.roberta.modeling_roberta",
    "transformers.models.t5.modeling_t5",
    "transformers.models.bart.modeling_bart",
    "transformers.models.llama.modeling_llama",
    "ray",
    "ray.util",
    "lm_eval.__main__",
    "lm_eval.evaluator",
    "lm_eval.tasks",
    "datasets",
    "statsmodels.api",
    "scipy.stats",
    "wordfreq",
    "pyparsing",
    "gguf",
    "matplotlib.pyplot",
    "pytest",
    "xdist",
    "hypothesis",
    "typer.testing",
)


def main() -> int:
    start = time.perf_counter()
    before = len(sys.modules)
    try:
        import pllscore
        from pllscore.cli import _start_up

        _start_up()
    except Exception:  # noqa: BLE001 - the test run reports it
        return 0
    # not pllscore.cli.__main__: importing it runs the command line
    names = [m.name for m in pkgutil.walk_packages(pllscore.__path__, "pllscore.") if not m.name.endswith("__main__")]
    for name in (*names, *EXTRA):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S112 - an optional extra not installed, or the test run's to report
            continue
    took = time.perf_counter() - start
    print(f"warm_bytecode: {len(sys.modules) - before} modules imported, their bytecode written, in {took:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
