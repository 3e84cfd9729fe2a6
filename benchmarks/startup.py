"""Time to first score: start-up, model loads and the 200-sentence GGUF job, each in a fresh process.

    make -C benchmarks startup                                  # the figures in BENCHMARKS.md
    make -C benchmarks startup-only                             # the start-up table alone: a few minutes
    PYTHONPATH=src python benchmarks/startup.py --no-gemma-folder --repeats 1   # quicker

One run, every measurement in a fresh process (no state shared but the files on disk):
1. import time of ``pllscore`` and ``pllscore.cli`` (in the process, and the process's wall time), beside
   ``python -c pass`` and ``python -c "import torch, transformers"`` (issue 22's baseline);
2. the floor under any command that scores with a GPT-2: transformers 5 imports lazily, so that baseline
   builds no model class, while such a command must import ``transformers.modeling_utils`` and the model's
   module, which pull in ``torch.distributed.tensor`` (and sympy), ``torch._dynamo``, a scan of every model
   folder (``transformers.models``' import structure) and, where scipy is installed, ``scipy.optimize``:
   those two imports (the last also with Python's cyclic collector off, as pllscore's command imports them),
   and transformers alone loading tiny-gpt2 and its tokenizer and running one forward pass;
3. the one-sentence command ``pllscore score --model tiny-gpt2 --text "The cat sat on the mat."`` as
   shipped, and with two patches of transformers' internals that pllscore does not ship (an on-disk cache of
   the model folders' import structure, and scipy reported missing), to show what they would buy. Every
   case of 1-3 gets the median of --repeats, the cases interleaved (the order reversed every other round),
   and its ratio to ``import torch, transformers``; the command also its ratio to the floor (GPT-2's model
   module imported with the collector off);
4. ``pllscore.load`` of a transformers folder (tiny-gpt2; Gemma-3-270m saved as a folder in a temporary
   directory) and of the Gemma-3-270m GGUF: first load into an empty cache (``PLLSCORE_CACHE`` a fresh
   folder: converts and writes it), second load (from the cache), and ``cache=False``; with --old-src, the
   GGUF load of another source tree too (e.g. the one before the cache: ``git worktree add``);
5. the 200-sentence job end to end (a fresh process: start, load, score, done): the good and bad sentences
   of the first 100 pairs of a BLiMP paradigm, by pllscore (Python API, cache warm and cache=False; the
   ``pllscore score`` command, cache warm) and by llama-cpp-python (logits for every position, one text at a
   time, BOS prepended, the sum of each next token's log-softmax), which must be importable by
   --llama-python (``make -C benchmarks llama`` builds it into its own virtual environment; skipped in one
   line otherwise). Their BLiMP accuracies and the mean and largest |difference| of sentence scores.

The Markdown report is printed and written to benchmarks/startup-last-run.md (--out); --start-up-only
stops after 1-3. Nothing here is part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared"
TINY_GPT2 = SHARED / "models" / "tiny-gpt2"
BLIMP = SHARED / "data" / "blimp"
GEMMA = Path.home() / ".cache" / "pllscore" / "real-models" / "gemma3" / "gemma-3-270m-q4_k_m.gguf"
LLAMA_PY = Path.home() / ".cache" / "pllscore" / "bench-llama-venv" / "bin" / "python"
SENTENCE = "The cat sat on the mat."
FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16")

# each child prints one JSON line last; `T0` is taken before anything else is imported
IMPORT = "import time; T0 = time.perf_counter(); import {mod}; import json; print(json.dumps({{'s': time.perf_counter() - T0}}))"
GPT2_MODULE = "transformers.models.gpt2.modeling_gpt2"
# any command that scores with a transformers model class does this: transformers alone, no pllscore
TRANSFORMERS_ALONE = """
import sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
model, tok = AutoModelForCausalLM.from_pretrained(sys.argv[1]), AutoTokenizer.from_pretrained(sys.argv[1])
with torch.no_grad():
    model(**tok(sys.argv[2], return_tensors="pt"))
"""
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
LOAD = """
import json, sys, time
import torch, transformers, pllscore
t = time.perf_counter()
scorer = pllscore.load(sys.argv[1], cache=sys.argv[2] == "cache")
print(json.dumps({"s": time.perf_counter() - t}))
"""
JOB_PLLSCORE = """
import json, sys
import pllscore
texts = json.load(open(sys.argv[1]))
scorer = pllscore.load(sys.argv[2], cache=sys.argv[3] == "cache")
print(json.dumps({"scores": [r.total for r in scorer.score(texts)]}))
"""
JOB_LLAMA = """
import json, os, sys
import numpy as np
from llama_cpp import Llama
texts = json.load(open(sys.argv[1]))
threads = os.cpu_count()
llm = Llama(model_path=sys.argv[2], n_ctx=128, n_batch=128, logits_all=True, n_threads=threads,
            n_threads_batch=threads, verbose=False)
scores = []
for text in texts:
    ids = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
    if ids[0] != llm.token_bos():
        ids = [llm.token_bos(), *ids]
    llm.reset()
    llm.eval(ids)
    logits = np.asarray(llm.scores[: len(ids) - 1], dtype=np.float64)
    top = logits.max(axis=1, keepdims=True)
    logp = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
    scores.append(float(logp[np.arange(len(ids) - 1), ids[1:]].sum()))
print(json.dumps({"scores": scores}))
"""
SAVE_FOLDER = """
import sys
from pathlib import Path
from transformers import AutoModelForCausalLM, AutoTokenizer
gguf, out = Path(sys.argv[1]), sys.argv[2]
AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(out)
model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype="float32")
# transformers will not save a model it loaded from GGUF: the same weights in a plain model of the same config
config = model.config
if hasattr(config, "quantization_config"):
    del config.quantization_config
plain = AutoModelForCausalLM.from_config(config, dtype="float32")
plain.load_state_dict(model.state_dict())
plain.save_pretrained(out)
"""


def fresh(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, dict]:
    """Run ``cmd`` in a fresh process: its wall time and the JSON of its last stdout line ({} if none), with
    ``cpu``: the CPU seconds it used (user + system, its threads together)."""
    full = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(env or {})}
    before, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=full)
    wall, after = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    lines = done.stdout.strip().splitlines()
    try:
        out = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        out = {}
    out["cpu"] = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime  # the process's CPU seconds
    return wall, out


def cpu() -> list[str]:
    """The CPU's model name, the SIMD/AMX flags that matter here and the core count (lscpu)."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        text = ""
    name = re.search(r"^Model name:\s*(.+)$", text, re.M)
    flags = set((re.search(r"^Flags:\s*(.+)$", text, re.M) or re.search("()", "")).group(1).split())
    shown = ", ".join(f"{f} {'yes' if f in flags else 'no'}" for f in FLAGS)
    commit = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %cs"], capture_output=True, text=True)
    load = os.getloadavg()[0]
    return [
        f"* **CPU**: {name.group(1).strip() if name else 'unknown'}, {os.cpu_count()} cores; flags: {shown}",
        f"* **pllscore** commit {commit.stdout.strip() or 'unknown'}; Python {sys.version.split()[0]}; "
        f"load average at the start {load:.1f}",
    ]


BASE, FLOOR = "import torch, transformers", "the same, Python's cyclic collector off"
COMMAND = f'pllscore score --model tiny-gpt2 --text "{SENTENCE}"'
PATCHED_COMMAND = "the same command, two patches of transformers' internals (not shipped)"


def startup(py: str, pllscore_cmd: list[str], repeats: int) -> list[str]:
    """Import times, the transformers floor and the one-sentence command, against ``import torch, transformers``."""
    argv = ["score", "--model", str(TINY_GPT2), "--text", SENTENCE, "-q"]
    with tempfile.TemporaryDirectory(prefix="pllscore-structure-") as tmp:
        store = str(Path(tmp) / "structure.pkl")  # the patched command's cache of transformers' import structure
        cases = {
            "python -c pass": [py, "-c", "pass"],
            "import pllscore": [py, "-c", IMPORT.format(mod="pllscore")],
            "import pllscore.cli": [py, "-c", IMPORT.format(mod="pllscore.cli")],
            BASE: [py, "-c", IMPORT.format(mod="torch, transformers")],
            "import torch, transformers.modeling_utils": [py, "-c", IMPORT.format(mod="torch, transformers.modeling_utils")],
            f"import torch, {GPT2_MODULE}": [py, "-c", IMPORT.format(mod=f"torch, {GPT2_MODULE}")],
            FLOOR: [py, "-c", "import gc; gc.disable(); " + IMPORT.format(mod=f"torch, {GPT2_MODULE}")],
            "transformers alone: load tiny-gpt2 and its tokenizer, one forward pass": [
                py, "-c", TRANSFORMERS_ALONE, str(TINY_GPT2), SENTENCE,
            ],
            COMMAND: [*pllscore_cmd, *argv],
            PATCHED_COMMAND: [py, "-c", PATCHED, store, *argv],
        }  # fmt: skip
        fresh(cases[PATCHED_COMMAND])  # fills the store (not timed)
        walls, cpus, inside = _interleaved(cases, repeats)
    rows = [
        f"Median of {repeats} fresh processes each, the cases interleaved (the order reversed every other round).",
        "",
        f"| what | wall time of the process (s) | its CPU time (s) | import, timed in the process (s) | wall / `{BASE}` |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name in cases:
        within = f"{inside[name]:.2f}" if name in inside else ""
        shown = name if name.startswith(("transformers", "the same")) else f"`{name}`"
        rows.append(f"| {shown} | {walls[name]:.2f} | {cpus[name]:.2f} | {within} | {walls[name] / walls[BASE]:.2f}x |")
    rows.append("")
    for over, label in ((BASE, f"`{BASE}`"), (FLOOR, f"the floor (`{GPT2_MODULE}`, collector off)")):
        w, c = walls[COMMAND] / walls[over], cpus[COMMAND] / cpus[over]
        rows.append(f"one-sentence command / {label}: **{w:.2f}x** wall time, {c:.2f}x CPU time  ")
    return rows


def _interleaved(cases: dict[str, list[str]], repeats: int) -> tuple[dict[str, float], ...]:
    """Per case, the median wall time, CPU time and in-process import time (where it prints one) of ``repeats``
    fresh processes, the cases interleaved so that every one sees the same load, reversed every other round."""
    walls: dict[str, list[float]] = {k: [] for k in cases}
    cpus: dict[str, list[float]] = {k: [] for k in cases}
    inside: dict[str, list[float]] = {k: [] for k in cases}
    for r in range(repeats):
        for name in list(cases) if r % 2 == 0 else list(reversed(cases)):
            wall, got = fresh(cases[name])
            walls[name].append(wall)
            cpus[name].append(got["cpu"])
            if "s" in got:
                inside[name].append(got["s"])
    return tuple({k: statistics.median(v) for k, v in d.items() if v} for d in (walls, cpus, inside))


def loads(py: str, gemma: Path | None, folder: Path | None, old_src: str | None) -> tuple[list[str], dict]:
    """``pllscore.load`` of each model, in a fresh process each (the libraries imported before timing)."""
    rows = ["| model | load | s |", "| --- | --- | ---: |"]
    got: dict[str, float] = {}

    def one(label: str, what: str, path: Path, cache: str, env: dict[str, str] | None = None) -> None:
        _, out = fresh([py, "-c", LOAD, str(path), cache], env)
        got[f"{label}: {what}"] = out["s"]
        rows.append(f"| {label} | {what} | {out['s']:.2f} |")

    one("tiny-gpt2", "transformers folder", TINY_GPT2, "cache")
    if folder is not None:
        one("Gemma-3-270m", "transformers folder (float32 safetensors)", folder, "cache")
    if gemma is not None:
        with tempfile.TemporaryDirectory(prefix="pllscore-cache-") as cache_dir:
            env = {"PLLSCORE_CACHE": cache_dir}
            one("Gemma-3-270m", "GGUF, first load (empty cache: converts, writes it)", gemma, "cache", env)
            one("Gemma-3-270m", "GGUF, second load (cached)", gemma, "cache", env)
        one("Gemma-3-270m", "GGUF, cache=False", gemma, "no-cache")
        if old_src:
            one("Gemma-3-270m", f"GGUF, source tree {old_src}", gemma, "no-cache", {"PYTHONPATH": old_src})
    return rows, got


def blimp_pairs(paradigm: str, n: int) -> tuple[list[str], int]:
    """The good then the bad sentence of the first ``n`` pairs of a BLiMP paradigm; the number of pairs."""
    with open(BLIMP / f"{paradigm}.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()][:n]
    return [r["sentence_good"] for r in rows] + [r["sentence_bad"] for r in rows], len(rows)


WARM, CLI, NO_CACHE = (
    "pllscore (Python: load + score, cache warm)",
    "`pllscore score` (cache warm)",
    "pllscore (Python, cache=False)",
)
LLAMA = "llama-cpp-python (logits_all, one text at a time)"


def job(py: str, pllscore_cmd: list[str], gemma: Path, llama_py: str, args: argparse.Namespace) -> list[str]:
    """The 200-sentence job end to end, each system in a fresh process, the systems interleaved over
    ``args.job_repeats`` rounds (so each sees the same load); median and best wall time, accuracy, agreement."""
    texts, n = blimp_pairs(args.paradigm, args.pairs)
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="pllscore-job-") as tmp:
        data, txt, out_tsv = (Path(tmp) / name for name in ("texts.json", "texts.txt", "out.tsv"))
        data.write_text(json.dumps(texts))
        txt.write_text("\n".join(texts) + "\n")
        env = {"PLLSCORE_CACHE": str(Path(tmp) / "cache")}
        fresh([py, "-c", LOAD, str(gemma), "cache"], env)  # fills the cache: the runs below find it warm
        systems = {
            WARM: lambda: fresh([py, "-c", JOB_PLLSCORE, str(data), str(gemma), "cache"], env),
            CLI: lambda: fresh(
                [*pllscore_cmd, "score", str(txt), "--model", str(gemma), "-o", str(out_tsv), "-q", "--force"], env
            ),
            NO_CACHE: lambda: fresh([py, "-c", JOB_PLLSCORE, str(data), str(gemma), "no-cache"], env),
        }
        if _llama_ok(llama_py, lines):
            systems[LLAMA] = lambda: fresh([llama_py, "-c", JOB_LLAMA, str(data), str(gemma)])
        walls: dict[str, list[float]] = {k: [] for k in systems}
        scores: dict[str, list[float]] = {}
        for _ in range(args.job_repeats):
            for name, run in systems.items():
                wall, out = run()
                walls[name].append(wall)
                scores.setdefault(name, _tsv_scores(out_tsv) if name == CLI else out["scores"])
    rows = [
        f"{len(texts)} sentences: the good and the bad sentence of the first {n} pairs of BLiMP `{args.paradigm}`; "
        f"each system {args.job_repeats} times, interleaved.",
        "",
        "| system | wall time, fresh process: median (best) s | BLiMP accuracy | mean / max abs. difference from pllscore (nats) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, got in scores.items():
        acc = sum(g > b for g, b in zip(got[:n], got[n:])) / n
        diffs = [abs(a - b) for a, b in zip(got, scores[WARM])]
        wall = f"{statistics.median(walls[name]):.2f} ({min(walls[name]):.2f})"
        rows.append(f"| {name} | {wall} | {acc:.2f} | {statistics.mean(diffs):.3g} / {max(diffs):.3g} |")
    if LLAMA in walls:
        for name in (WARM, CLI):
            ratio = statistics.median(walls[LLAMA]) / statistics.median(walls[name])
            rows.append(f"\nllama-cpp-python / {name}, medians: **{ratio:.2f}x**")
    return lines + rows


def _tsv_scores(path: Path) -> list[float]:
    import csv

    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [float(r["causal_logprob"]) for r in rows]


def _llama_ok(llama_py: str, lines: list[str]) -> bool:
    """Whether ``llama_py`` imports llama_cpp; else one line saying llama.cpp is skipped."""
    if not Path(llama_py).exists():
        lines.append(f"llama-cpp-python skipped: no {llama_py} (`make -C benchmarks llama` builds it)\n")
        return False
    done = subprocess.run([llama_py, "-c", "import llama_cpp; print(llama_cpp.__version__)"], capture_output=True)
    if done.returncode != 0:
        lines.append(f"llama-cpp-python skipped: {llama_py} cannot import llama_cpp\n")
        return False
    lines.append(f"llama-cpp-python {done.stdout.decode().strip()} ({llama_py})\n")
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf", type=Path, default=GEMMA, help="the Gemma-3-270m GGUF (make test-real fetches it)")
    ap.add_argument("--llama-python", default=str(LLAMA_PY), help="a Python that imports llama_cpp")
    ap.add_argument("--paradigm", default="anaphor_gender_agreement")
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3, help="fresh processes per start-up case (median)")
    ap.add_argument("--job-repeats", type=int, default=3, help="rounds of the 200-sentence job (median)")
    ap.add_argument("--no-gemma-folder", action="store_true", help="skip saving Gemma as a transformers folder")
    ap.add_argument("--old-src", help="also time the GGUF load of this source tree (cache=False)")
    ap.add_argument("--start-up-only", action="store_true", help="only the start-up table: no loads, no job")
    ap.add_argument("--out", type=Path, default=HERE / "startup-last-run.md")
    args = ap.parse_args()
    py = sys.executable
    script = Path(py).parent / "pllscore"  # the console script beside this Python, else the same entry point
    pllscore_cmd = (
        [str(script)] if script.is_file() else [py, "-c", "import sys; from pllscore.cli import main; main()"]
    )
    report = ["# Start-up and time to first score", "", *cpu(), ""]
    report += ["## Start-up", "", *startup(py, pllscore_cmd, args.repeats)]
    if not args.start_up_only:
        report += _loads_and_job(py, pllscore_cmd, args)
    report.append(f"\nLoad average at the end: {os.getloadavg()[0]:.1f} (`uptime`; 2 means both cores busy).")
    text = "\n".join(report) + "\n"
    print(text)
    args.out.write_text(text)


def _loads_and_job(py: str, pllscore_cmd: list[str], args: argparse.Namespace) -> list[str]:
    """The report's sections after the start-up: the loads and the 200-sentence job."""
    report: list[str] = []
    gemma = args.gguf if args.gguf.is_file() else None
    if gemma is None:
        report.append(f"\nGemma-3-270m skipped: no {args.gguf} (`python -m tests.real.fetch` fetches it)")
    with tempfile.TemporaryDirectory(prefix="pllscore-gemma-folder-") as tmp:
        folder = None
        if gemma is not None and not args.no_gemma_folder:
            fresh([py, "-c", SAVE_FOLDER, str(gemma), tmp])
            folder = Path(tmp)
        rows, got = loads(py, gemma, folder, args.old_src)
    report += ["", "## Loads (`pllscore.load`, torch and transformers already imported)", "", *rows]
    base = got.get("Gemma-3-270m: transformers folder (float32 safetensors)")
    cached = got.get("Gemma-3-270m: GGUF, second load (cached)")
    if base and cached:
        report.append(f"\nGGUF second load / transformers folder: **{cached / base:.2f}x**")
    if gemma is not None:
        report += ["", "## The 200-sentence GGUF job end to end", ""]
        report += job(py, pllscore_cmd, gemma, args.llama_python, args)
    return report


if __name__ == "__main__":
    main()
