"""The floor under the one-sentence command: what transformers costs before any pllscore code runs.

    .venv/bin/python benchmarks/startup_floor.py --repeats 5

Issue 22 asks for ``pllscore score --model tiny-gpt2 --text ...`` within 1.35x of
``python -c "import torch, transformers"``. Transformers 5 imports lazily, so that baseline builds no model
class; a command that scores with one must import ``transformers.modeling_utils`` and the model's module,
which pull in ``torch.distributed.tensor`` (and sympy), ``torch._dynamo``, a scan of every model folder
(``transformers.models``' import structure) and, where scipy is installed, ``scipy.optimize`` (the
object-detection losses). Each case runs in a fresh process, the cases interleaved, medians reported:

- ``import torch, transformers`` (the issue's baseline);
- ``import torch, transformers.modeling_utils`` and ``transformers.models.gpt2.modeling_gpt2``: the floor of
  any command that builds a GPT-2 with transformers (the last also with Python's cyclic collector off, as
  pllscore's command imports them);
- the one-sentence command as shipped;
- the same command with two patches of transformers' internals that pllscore does not ship (an on-disk cache
  of the model folders' import structure, and scipy reported missing), to show what they would buy.

Nothing here is part of the test suite.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from startup import SENTENCE, TINY_GPT2, cpu, fresh  # the start-up benchmark's fresh-process timer and machine

ARGV = ["score", "--model", str(TINY_GPT2), "--text", SENTENCE]

# the command with transformers patched before it imports its model modules (an experiment, not shipped)
PATCHED = """
import os, pickle, sys
import transformers.utils as tu, transformers.utils.import_utils as iu
store_path = sys.argv[1]
store = pickle.load(open(store_path, "rb")) if os.path.exists(store_path) else {}
original = iu.create_import_structure_from_path
seen = {}
def cached(module_path):
    if module_path not in seen:
        seen[module_path] = store[module_path] if module_path in store else original(module_path)
    return seen[module_path]
iu.create_import_structure_from_path = cached
tu.is_scipy_available = iu.is_scipy_available = lambda: False
if not store:
    import atexit
    atexit.register(lambda: pickle.dump(seen, open(store_path, "wb")))
sys.argv = ["pllscore", *sys.argv[2:]]
from pllscore.cli import main
main()
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        times = _measure(py, Path(tmp) / "structure.pkl", args.repeats)
    base = statistics.median(times["import torch, transformers"])
    print("\n".join(cpu()))
    print(f"median of {args.repeats} fresh processes, interleaved\n")
    print("| case | wall s (median) | / import torch, transformers |\n| --- | ---: | ---: |")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"| {name} | {m:.2f} | {m / base:.2f}x |")


def _measure(py: str, store: Path, repeats: int) -> dict[str, list[float]]:
    """Wall seconds per case, ``repeats`` fresh processes each, the order reversed every other round."""
    cases = {
        "import torch, transformers": [py, "-c", "import torch, transformers"],
        "import torch, transformers.modeling_utils": [py, "-c", "import torch, transformers.modeling_utils"],
        "import torch, ...gpt2.modeling_gpt2": [py, "-c", "import torch, transformers.models.gpt2.modeling_gpt2"],
        "the same, the collector off": [
            py,
            "-c",
            "import gc; gc.disable(); import torch, transformers.models.gpt2.modeling_gpt2",
        ],
        "pllscore score (as shipped)": [py, "-m", "pllscore.cli", *ARGV],
        "pllscore score, transformers patched": [py, "-c", PATCHED, str(store), *ARGV],
    }
    fresh(cases["pllscore score, transformers patched"])  # fills the structure cache (not timed)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for r in range(repeats):
        for name in list(cases) if r % 2 == 0 else list(reversed(cases)):
            times[name].append(fresh(cases[name])[0])
    return times


if __name__ == "__main__":
    main()
