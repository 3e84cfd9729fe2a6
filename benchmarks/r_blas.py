"""The R package's speed and numbers against Python's on the same work, whatever BLAS R links.

The same code runs in a Python process of its own and inside R (through the installed R package, which binds
torch to its own BLAS): it scores the first ``--n`` Brown sentences ``--repeats`` times and reports the CPU
seconds of each pass and every total. ``--blas`` puts another BLAS in R's place (``LD_PRELOAD`` of a
``libblas.so.3``, as Debian's alternatives would: OpenBLAS's ``openblas-pthread/libblas.so.3``); ``--r-lib``
names the R library that holds the package (an older build gives the figures before the binding). One
thread in both (``OMP_NUM_THREADS=1``)::

    .venv/bin/python benchmarks/r_blas.py --n 100
    .venv/bin/python benchmarks/r_blas.py --n 100 --blas /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

WORK = """
import csv, json, time
import pllscore
rows = list(csv.DictReader(open({brown!r}, encoding="utf-8")))[:{n}]
texts = [r["sentence"] for r in rows]
scorer = pllscore.load({model!r}, device="cpu")
scorer.score(texts[:5], progress=False)
cpu = []
for _ in range({repeats}):
    start = time.process_time()
    totals = [float(r.total).hex() for r in scorer.score(texts, progress=False)]
    cpu.append(time.process_time() - start)
with open({out!r}, "w") as f:
    json.dump({{"cpu": cpu, "totals": totals}}, f)
"""


def run(where: str, code: str, out: Path, env: dict[str, str]) -> dict[str, list]:
    """Runs ``code`` in a Python process (``where="python"``) or in R's Python; its result."""
    if where == "python":
        command = [sys.executable, "-c", code]
    else:
        r = f"pllscore::pll_python(); reticulate::py_run_string({json.dumps(code)})"
        command = ["Rscript", "-e", r]
    subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--model", default=str(SHARED / "models" / "tiny-bert-cased"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--blas", help="a libblas.so.3 to put in R's place (LD_PRELOAD)")
    parser.add_argument("--r-lib", help="the R library holding the pllscore package to measure")
    args = parser.parse_args()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PLLSCORE_PYTHON": sys.executable}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for where in ("python", "R"):
            out = Path(tmp) / f"{where}.json"
            brown = str(SHARED / "data" / "brown" / "brown_stimuli.csv")
            code = WORK.format(brown=brown, n=args.n, model=args.model, repeats=args.repeats, out=str(out))
            here = dict(env)
            if where == "R" and args.blas:
                here["LD_PRELOAD"] = args.blas
            if where == "R" and args.r_lib:
                here["R_LIBS"] = args.r_lib
            results[where] = run(where, code, out, here)
    py, r = results["python"], results["R"]
    diff = max(abs(float.fromhex(a) - float.fromhex(b)) for a, b in zip(py["totals"], r["totals"]))
    print(f"{args.n} sentences, {Path(args.model).name}, R's BLAS {args.blas or 'as linked'}")
    print(f"CPU seconds per pass (best of {args.repeats}): Python {min(py['cpu']):.2f}, R {min(r['cpu']):.2f}")
    print(f"ratio R / Python {min(r['cpu']) / min(py['cpu']):.2f}; largest difference of a total {diff:.3g}")


if __name__ == "__main__":
    main()
