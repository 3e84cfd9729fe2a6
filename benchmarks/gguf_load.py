"""Load times of a GGUF model: before the GGUF cache, first load (cache cold), second load (warm), and as a folder.

Run (from the repository root, with the project's venv; about 5 minutes for Gemma-3-270m on 2 cores):
    python benchmarks/gguf_load.py MODEL.gguf [--before-rev REV] [--rounds N]
Every load is ``pllscore.load(path, device="cpu")`` in a fresh process (``import pllscore`` first,
not timed; the load imports torch and transformers, timed, as a user's first call does). Variants:
- ``before``: the tree of commit REV (``git archive``, default: the commit before the GGUF cache),
- ``first``: this tree, PLLSCORE_CACHE an empty folder (converts the file and keeps the result),
- ``second``: this tree, PLLSCORE_CACHE the folder a ``first`` load filled,
- ``folder``: this tree, the same model saved as a transformers folder (the cache entry, copied).
Rounds interleave the variants (order rotated each round); reported: the median wall and CPU
(user + system of the child) seconds per variant, and the ratios of the issue's targets. Not part
of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE_REV = "7fbdd52"  # the last commit before the GGUF cache (engine/gguf_cache.py)

CHILD = """
import os, sys, time, json
import pllscore
t0, c0 = time.perf_counter(), os.times()
scorer = pllscore.load(sys.argv[1], device="cpu")
c1 = os.times()
cpu = c1.user - c0.user + c1.system - c0.system
print("RESULT " + json.dumps({"wall": time.perf_counter() - t0, "cpu": cpu, "src": pllscore.__file__}))
"""


def load_once(src: Path, model: str, cache: Path) -> dict[str, float]:
    """One fresh process: ``pllscore.load(model)`` with ``src`` first on the path and PLLSCORE_CACHE=``cache``."""
    env = {**os.environ, "PYTHONPATH": str(src), "PLLSCORE_CACHE": str(cache), "TQDM_DISABLE": "1"}
    done = subprocess.run([sys.executable, "-c", CHILD, model], env=env, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"load of {model} failed:\n{done.stderr[-2000:]}")
    got = json.loads(lines[-1].removeprefix("RESULT "))
    if not Path(got.pop("src")).resolve().is_relative_to(src.resolve()):
        raise SystemExit(f"the child imported pllscore from outside {src}")
    return got


def cpu_name() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return platform.processor() or "unknown CPU"
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    return f"{fields.get('Model name', '?').strip()}, {fields.get('CPU(s)', '?').strip()} CPUs"


def old_tree(rev: str, into: Path) -> Path:
    """``src`` of commit ``rev``, unpacked with ``git archive`` (the repository is left as it is)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a GGUF file")
    parser.add_argument("--before-rev", default=BEFORE_REV, help="the commit to time as 'before'")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    model = os.path.abspath(os.path.expanduser(args.model))
    work = Path(tempfile.mkdtemp(prefix="pllscore-gguf-bench-"))
    try:
        src, before = ROOT / "src", old_tree(args.before_rev, work)
        warm = work / "warm-cache"
        load_once(src, model, warm)  # fills the cache the 'second' loads read
        entry = next((warm / "gguf").iterdir())
        folder = work / "folder"
        shutil.copytree(entry, folder, ignore=shutil.ignore_patterns("manifest.json"))
        variants = {
            "before": lambda i: load_once(before, model, work / f"before-{i}"),
            "first": lambda i: load_once(src, model, work / f"cold-{i}"),
            "second": lambda i: load_once(src, model, warm),
            "folder": lambda i: load_once(src, str(folder), work / "unused"),
        }
        times: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
        names = list(variants)
        for i in range(args.rounds):
            for name in names[i % len(names) :] + names[: i % len(names)]:
                times[name].append(variants[name](i))
                shutil.rmtree(work / f"cold-{i}", ignore_errors=True)
                print(f"round {i + 1} {name}: {times[name][-1]['wall']:.2f} s", file=sys.stderr, flush=True)
        report(model, args, times)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(model: str, args: argparse.Namespace, times: dict[str, list[dict[str, float]]]) -> None:
    med = {name: {k: statistics.median(t[k] for t in runs) for k in ("wall", "cpu")} for name, runs in times.items()}
    print(f"{os.path.basename(model)}, {cpu_name()}, {args.rounds} rounds, medians; before = {args.before_rev}\n")
    print("| load | wall s | CPU s |\n|---|---:|---:|")
    for name, m in med.items():
        print(f"| {name} | {m['wall']:.2f} | {m['cpu']:.2f} |")
    for what, a, b, target in (
        ("first / before", "first", "before", 0.5),
        ("second / folder", "second", "folder", 1.5),
    ):
        print(
            f"\n{what}: wall {med[a]['wall'] / med[b]['wall']:.2f}, CPU {med[a]['cpu'] / med[b]['cpu']:.2f} "
            f"(target at most {target})",
            end="",
        )
    print()


if __name__ == "__main__":
    main()
