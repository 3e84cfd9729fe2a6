"""Time ``pllscore.syntaxgym`` per suite on a real model, the model's load timed apart.

    .venv/bin/python benchmarks/syntaxgym_suites.py MODEL.gguf [SUITE.json ...] [-o DIR]

Loads the model once (timed), then scores each suite on its own through ``pllscore.syntaxgym`` into
one output folder (default /tmp/pllscore-syntaxgym-bench; started afresh), and prints a Markdown table:
suite, items, distinct sentences, tokens, seconds, and the suite's accuracy. Suites default to
tests/data/syntaxgym/*.json (the fixture of published formulas left out).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("suites", nargs="*", type=Path)
    parser.add_argument("-o", "--output", type=Path, default=Path("/tmp/pllscore-syntaxgym-bench"))
    args = parser.parse_args()
    import torch

    import pllscore

    suites = args.suites or sorted(
        p for p in (ROOT / "tests/data/syntaxgym").glob("*.json") if p.name != "published_formulas.json"
    )
    shutil.rmtree(args.output, ignore_errors=True)
    t0 = time.perf_counter()
    scorer = pllscore.load(args.model, device="cpu")
    load_s = time.perf_counter() - t0
    rows = []
    for path in suites:
        t0 = time.perf_counter()
        result = pllscore.syntaxgym(path, scorer, output=args.output, progress=False)
        seconds = time.perf_counter() - t0
        suite = result.regions["suite"].iloc[-1]
        mine = result.regions[result.regions["suite"] == suite]
        sentences = mine.groupby(["item_number", "condition_name"]).ngroups
        accuracy = float(result.summary.loc[result.summary["suite"] == suite, "accuracy"].iloc[0])
        rows.append((suite, mine["item_number"].nunique(), sentences, int(mine["n_tokens"].sum()), seconds, accuracy))
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    name = next((line.split(":", 1)[1].strip() for line in cpu.splitlines() if line.startswith("Model name")), "?")
    print(f"model {args.model}: loaded in {load_s:.2f} s; CPU {name}, torch threads {torch.get_num_threads()}, "
          f"Python {platform.python_version()}, torch {torch.__version__}")  # fmt: skip
    print("\n| suite | items | sentences | tokens | seconds | accuracy |\n|---|---:|---:|---:|---:|---:|")
    for suite, items, sentences, tokens, seconds, accuracy in rows:
        print(f"| {suite} | {items} | {sentences} | {tokens} | {seconds:.2f} | {accuracy:.2f} |")
    total = sum(r[4] for r in rows)
    print(f"| all {len(rows)} suites | | {sum(r[2] for r in rows)} | {sum(r[3] for r in rows)} | {total:.2f} | |")


if __name__ == "__main__":
    main()
