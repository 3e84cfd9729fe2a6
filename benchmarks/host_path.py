"""The host side of scoring (issue 27, item 3): this tree against an older one, in interleaved processes, on the CPU.

    git archive <commit> src | tar -x -C /tmp/old                      # the tree to compare with
    .venv/bin/python benchmarks/host_path.py --old-src /tmp/old/src    # BLiMP 4,000 on tiny-gpt2, 400 on tiny-bert
    .venv/bin/python benchmarks/host_path.py --old-src /tmp/old/src --shapes   # run.py's bert-base and GPT-2-small

Each round runs one process per tree, in turn (A B A B ...), so that a busy shared machine slows both alike.
A process loads the model, scores a warm-up slice, then scores the texts ``--repeats`` times through the
Python API (totals only) and reports, for the median call by CPU time: CPU time (``time.process_time``)
and wall time of the whole call, of ``scorer.encode`` alone, of the torch work (the model's forward pass
and the log-probability readout, timed around the engine's calls), the rest being host Python (encoding,
alignment, planning, stitching, result building), and of that rest the garbage collector's passes
(``gc.callbacks``), which grow with the Python objects a call keeps alive. The totals of both trees are
compared (first round).

Cases: the shared tiny models (tiny-gpt2 on the 4,000 BLiMP sentences of gpu.py, tiny-bert-cased on the
first ``--n-masked`` of them), one torch thread. ``--shapes`` adds the models of the CPU benchmark
(run.py: bert-base word-l2r on EventsAdapt, GPT-2-small on EventsAdapt and Brown, random weights, its
tokenizers), with its two torch threads: the figures ``make -C benchmarks quick`` times, pllscore alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
PARADIGMS = ("anaphor_gender_agreement", "anaphor_number_agreement")  # as gpu.py: 2 x 1,000 pairs


def blimp(n: int) -> list[str]:
    """The good then the bad sentences of the two BLiMP paradigms of gpu.py, the first ``n``."""
    good, bad = [], []
    for p in PARADIGMS:
        with open(SHARED / "data" / "blimp" / f"{p}.jsonl", encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        good += [r["sentence_good"] for r in rows]
        bad += [r["sentence_bad"] for r in rows]
    return (good + bad)[:n]


def texts(name: str, n: int) -> list[str]:
    if name == "blimp":
        return blimp(n)
    import numpy as np
    import pandas as pd

    if name == "eventsadapt":
        return pd.read_csv(SHARED / "data" / "eventsadapt" / "EventsAdapt.csv")["Sentence"].tolist()[:n]
    brown = pd.read_csv(SHARED / "data" / "brown" / "brown_stimuli.csv")["sentence"].tolist()  # run.py's sample
    return [brown[i] for i in sorted(np.random.default_rng(0).choice(len(brown), size=1000, replace=False))][:n]


def scorer_for(model: str):  # type: ignore[no-untyped-def]
    """The scorer of a shared model's folder, or of run.py's ``bert-base`` / ``gpt2-small`` (random weights)."""
    import pllscore

    if model not in ("bert-base", "gpt2-small"):
        return pllscore.load(model)
    sys.path.insert(0, str(HERE))
    import run as cpu_run

    if model == "bert-base":
        tok = cpu_run.wordpiece_tokenizer()
        return pllscore.MaskedScorer(cpu_run.bert_base(tok), tok)
    tok = cpu_run.bpe_tokenizer()
    return pllscore.CausalScorer(cpu_run.gpt2_small(tok), tok)


def child(args: argparse.Namespace) -> None:
    """One process: load, warm up, score ``--repeats`` times; print the median call as one JSON line."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gc
    import importlib

    import torch

    torch.set_num_threads(args.threads)
    xs = texts(args.texts, args.n)
    scorer = scorer_for(args.model)
    metric = {"metric": args.metric} if args.metric else {}
    clock = {"torch": 0.0, "gc": 0.0, "gc_start": 0.0}

    def timed(fn):  # type: ignore[no-untyped-def]
        def wrapper(*a, **k):  # type: ignore[no-untyped-def]
            c = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                clock["torch"] += time.process_time() - c

        return wrapper

    engine = scorer.engine
    if getattr(engine, "parts", None) is not None:
        engine.parts = (timed(engine.parts[0]), engine.parts[1])
    if getattr(engine, "last_layer", None) is not None:
        engine.last_layer = timed(engine.last_layer)
    for name in ("pllscore.engine.prefix_tree", "pllscore.engine.causal", "pllscore.engine.masked"):
        mod = importlib.import_module(name)
        for fn in ("read_outputs", "pick_outputs", "read_logprobs", "pick_logprobs"):
            if hasattr(mod, fn):
                setattr(mod, fn, timed(getattr(mod, fn)))

    def collecting(phase: str, info: dict) -> None:
        if phase == "start":
            clock["gc_start"] = time.process_time()
        else:
            clock["gc"] += time.process_time() - clock["gc_start"]

    gc.callbacks.append(collecting)
    scorer.score(xs[: max(1, len(xs) // 20)], progress=False, **metric)
    calls = []
    for _ in range(args.repeats):
        c0 = time.process_time()
        scorer.encode(xs)
        encode_cpu = time.process_time() - c0
        clock["torch"] = clock["gc"] = 0.0
        c0, w0 = time.process_time(), time.perf_counter()
        totals = scorer.score(xs, progress=False, **metric).totals
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        calls.append(
            {"cpu": cpu, "wall": wall, "encode_cpu": encode_cpu, "torch_cpu": clock["torch"], "gc_cpu": clock["gc"]}
        )
    middle = sorted(calls, key=lambda g: g["cpu"])[len(calls) // 2]  # the median call by CPU time (GC passes included)
    middle["totals"] = [float(t) for t in totals]
    print(json.dumps(middle))


def run_child(src: Path, case: tuple, args: argparse.Namespace) -> dict:
    _, model, name, n, metric, threads = case
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, __file__, "--child", "--model", model, "--texts", name, "--n", str(n)]
    cmd += ["--repeats", str(args.repeats), "--threads", str(threads), *(["--metric", metric] if metric else [])]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode:
        sys.exit(f"host_path.py: {src}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def median(xs: list[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2


def cpu_model() -> str:
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Model name")), "?")


def report(label: str, runs: dict[str, list[dict]]) -> list[str]:
    """The table of one case: medians over the rounds per tree, and old / new per round."""
    out = [
        "",
        f"| {label} | score CPU s | wall s | torch CPU s | host CPU s | host share | of which GC s | encode alone CPU s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t, got in runs.items():
        m = {k: median([x[k] for x in got]) for k in ("cpu", "wall", "torch_cpu", "gc_cpu", "encode_cpu")}
        host = median([x["cpu"] - x["torch_cpu"] for x in got])
        share = median([(x["cpu"] - x["torch_cpu"]) / x["cpu"] for x in got])
        out.append(
            f"| {t} | {m['cpu']:.3f} | {m['wall']:.3f} | {m['torch_cpu']:.3f} | {host:.3f} | {share:.0%} "
            f"| {m['gc_cpu']:.3f} | {m['encode_cpu']:.3f} |"
        )
    if len(runs) == 2:
        old, new = runs["old"], runs["new"]
        diff = max(abs(a - b) for a, b in zip(old[0]["totals"], new[0]["totals"]))
        ratio = {k: median([o[k] / w[k] for o, w in zip(old, new)]) for k in ("cpu", "wall")}
        host = median([(o["cpu"] - o["torch_cpu"]) / (w["cpu"] - w["torch_cpu"]) for o, w in zip(old, new)])
        out += [
            "",
            f"old / new, median over rounds: score CPU {ratio['cpu']:.2f}x, wall {ratio['wall']:.2f}x, "
            f"host CPU {host:.2f}x; largest difference of totals {diff:.1e} nats",
        ]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old-src", type=Path, help="the src/ folder of the tree to compare with (else the new one only)")
    ap.add_argument("--new-src", type=Path, default=HERE.parent / "src", help="the tree measured (default: this one)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (one process per tree each)")
    ap.add_argument("--repeats", type=int, default=3, help="scoring calls per process (the median by CPU counts)")
    ap.add_argument("--n-causal", type=int, default=4000, help="BLiMP sentences for tiny-gpt2")
    ap.add_argument("--n-masked", type=int, default=400, help="BLiMP sentences for tiny-bert-cased")
    ap.add_argument("--shapes", action="store_true", help="also run.py's bert-base and GPT-2-small, 2 threads")
    ap.add_argument("--only-shapes", action="store_true", help="run.py's models only")
    ap.add_argument("--only", help="only the cases whose name contains this text (e.g. 'EventsAdapt 400')")
    ap.add_argument("--out", type=Path, help="also write the tables to this file")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    for hidden in ("--model", "--texts", "--metric"):
        ap.add_argument(hidden, help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    models = SHARED / "models"
    cases = [] if args.only_shapes else [
        (f"tiny-gpt2, BLiMP {args.n_causal}", str(models / "tiny-gpt2"), "blimp", args.n_causal, None, 1),
        (f"tiny-bert-cased word-l2r, BLiMP {args.n_masked}", str(models / "tiny-bert-cased"), "blimp", args.n_masked,
         None, 1),
    ]  # fmt: skip
    if args.shapes or args.only_shapes:
        cases += [
            ("bert-base shape word-l2r, EventsAdapt 60", "bert-base", "eventsadapt", 60, "word-l2r", 2),
            ("GPT-2-small shape, EventsAdapt 400", "gpt2-small", "eventsadapt", 400, None, 2),
            ("GPT-2-small shape, Brown 100", "gpt2-small", "brown", 100, None, 2),
        ]
    cases = [c for c in cases if args.only is None or args.only in c[0]]
    trees = {"new": args.new_src} if args.old_src is None else {"old": args.old_src, "new": args.new_src}
    lines = [f"CPU: {cpu_model()}; {args.rounds} rounds, the median of {args.repeats} calls each"]
    print(lines[0])
    for case in cases:
        runs: dict[str, list[dict]] = {t: [] for t in trees}
        for r in range(args.rounds):
            for t, src in trees.items():
                runs[t].append(run_child(src, case, args))
            print(f"{case[0]}: round {r + 1}/{args.rounds} done", file=sys.stderr)
        table = report(f"{case[0]} ({case[5]} thread{'s' if case[5] > 1 else ''})", runs)
        print("\n".join(table), flush=True)
        lines += table
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
