"""pllscore vs lm-eval vs minicons vs the plain loop on the real GGUF causal LMs (SmolLM2-135M, Gemma-3-270m).

    make -C benchmarks real                                   # the full run (the figures in BENCHMARKS.md)
    PYTHONPATH=src python benchmarks/real_models.py --n 32 --e2e-limit 16   # a dry run

Per model, float32 (GGUF dequantized by transformers, as pllscore.load does):
1. the first --n good sentences of BLiMP anaphor_gender_agreement are scored by every system and the
   per-sentence log-likelihoods are checked against the plain loop with a float64 log_softmax (the
   reference): the run aborts if any differs by more than --tol nats. Only then is anything timed.
2. in one process, each system on the same sentences (best of --repeats interleaved runs):
   pllscore, lm-eval's HFLM (batch 16; the loaded model is handed to it), minicons (16 per call)
   and the plain loop (batches of 16, full float32 log_softmax). pllscore's matrix-multiply FLOPs (vocabulary head included, counted by
   torch's FLOP counter) over its time, as a share of the best fp32 GEMM timed in the same run.
3. bfloat16 autocast against float32 (pllscore, same sentences): speed and per-token error.
4. end to end, each in a fresh process from the GGUF file: ``pllscore blimp`` against
   ``lm_eval --model hf`` (batch 16, a task YAML with ``dataset_path: json`` on the local files)
   on --paradigms; their accuracies and per-sample log-likelihoods are checked to agree.

The Markdown report is printed and written to benchmarks/real-models-last-run.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from real_systems import (  # noqa: E402
    blimp_good,
    lm_eval_ll,
    lm_eval_samples,
    lm_eval_task,
    machine,
    machine_lines,
    minicons_ll,
    plain_loop,
)
from run import gemm_peak, matmul_flops, timed  # noqa: E402

REAL = Path.home() / ".cache" / "pllscore" / "real-models"
MODELS = {
    "smollm2": REAL / "smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma3": REAL / "gemma3" / "gemma-3-270m-q4_k_m.gguf",
}
PLAIN = "plain loop (full float32 log_softmax)"
# how far a float32 log_softmax may move a sentence's total (measured: 2.5e-4 on Gemma-3's 262k vocabulary)
F32_SOFTMAX_TOL = 1e-3
BLIMP = HERE.parent.parent / "shared" / "data" / "blimp"


class Disagree(Exception):
    """Systems that do not compute the same scores: the run stops before timing them."""

    def __init__(self, message: str, rows: list[str] | None = None) -> None:
        super().__init__(message)
        self.rows = rows or []


def agreement(outputs: dict[str, np.ndarray], exact: np.ndarray, plain32: np.ndarray, tol: float) -> list[str]:
    """Table rows; raises Disagree (after the rows are kept) when a system computes something else.

    pllscore must be within ``tol`` of the float64 reference. Another system passes when it is
    within ``tol`` of the float64 reference or of the same loop with a float32 log_softmax: that
    is, it computes the same quantity up to the rounding of its own float32 log_softmax (over
    Gemma-3's 262k entries that alone moves a sentence by up to ~3e-4 nats). That float32 loop
    must itself be within ``F32_SOFTMAX_TOL`` of the float64 one.
    """
    rows, bad = [], []
    ours = outputs["pllscore"]
    for name, got in outputs.items():
        d64, d32, dus = (np.abs(got - r) for r in (exact, plain32, ours))
        if name == "pllscore":
            ok = d64.max() <= tol
        elif name == PLAIN:  # the float32 reference itself: it differs from float64 only in its log_softmax
            ok = d64.max() <= max(tol, F32_SOFTMAX_TOL)
        else:
            ok = min(d64.max(), d32.max()) <= tol
        rows.append(f"| {name} | {len(got)} | {d64.max():.2e} | {d64.mean():.2e} | {d32.max():.2e} | "
                    f"{'' if name == 'pllscore' else f'{dus.max():.2e}'} | {'yes' if ok else '**NO**'} |")  # fmt: skip
        print(rows[-1], flush=True)
        if not ok:
            bad.append(f"{name} (max |diff| {d64.max():.2e} vs float64, {d32.max():.2e} vs float32)")
    if bad:
        raise Disagree(f"per-sentence disagreement over {tol:.0e} nats: {'; '.join(bad)}; nothing timed", rows)
    return rows


def in_process(key: str, args, peak: float, lines: list[str]) -> None:
    """Agreement, then timings, FLOP rate and bfloat16 for one model, all in this process."""
    from lm_eval.models.huggingface import HFLM
    from minicons import scorer as mscorer

    import pllscore

    path = MODELS[key]
    ours = pllscore.load(path, device="cpu")
    model, tok = ours.model, ours.tokenizer
    texts = blimp_good(args.data, "anaphor_gender_agreement", args.n)
    tokens = sum(len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts)
    lm = HFLM(pretrained=model, tokenizer=tok, batch_size=args.batch, device="cpu")
    mc = mscorer.IncrementalLMScorer(model, "cpu", tokenizer=tok)
    systems = {
        "pllscore": lambda: ours.score(texts, progress=False).totals,
        f"lm-eval HFLM (batch {args.batch})": lambda: lm_eval_ll(lm, texts),
        f"minicons ({args.batch} per call)": lambda: minicons_ll(mc, texts, args.batch),
        PLAIN: lambda: plain_loop(model, tok, texts, args.batch),
    }
    lines += [f"\n### {key}: `{path.name}`, {len(texts)} sentences ({tokens} tokens, plus a BOS before each)\n"]
    lines += [
        "Agreement, per sentence, nats, before any timing: against the plain loop with a float64 log_softmax "
        "(the reference), the same loop in float32, and pllscore:\n",
        "| system | sentences | max abs diff vs float64 | mean | max vs float32 loop | max vs pllscore | agrees |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    exact = plain_loop(model, tok, texts, args.batch, exact=True)
    outputs = {name: fn() for name, fn in systems.items()}  # also the warm-up of each system
    try:
        lines += agreement(outputs, exact, outputs[PLAIN], args.tol)
    except Disagree as e:
        lines += e.rows
        raise
    lines += [f"\nBest of {args.repeats} interleaved runs; lm-eval, minicons and the plain loop in batches of "
              f"{args.batch}, pllscore in its own (up to 1024 padded tokens):\n"]  # fmt: skip
    lines += ["| system | s | sentences/s | tokens/s | pllscore is x faster |", "|---|---:|---:|---:|---:|"]
    seconds = dict.fromkeys(systems, float("inf"))
    for _ in range(args.repeats):  # interleaved, best of --repeats: the least disturbed run of each
        for name, fn in systems.items():
            seconds[name] = min(seconds[name], timed(fn)[1])
    for name, s in seconds.items():
        ratio = "" if name == "pllscore" else f"{s / seconds['pllscore']:.2f}x"
        lines.append(f"| {name} | {s:.2f} | {len(texts) / s:.1f} | {tokens / s:.0f} | {ratio} |")
        print(lines[-1], flush=True)
    flops = matmul_flops(systems["pllscore"])
    rate = flops / seconds["pllscore"] / 1e9
    lines.append(f"\npllscore: {flops / 1e12:.3f} TFLOP of matrix products (vocabulary head included), "
                 f"{rate:.1f} GFLOP/s = **{100 * rate / peak:.0f}%** of the measured GEMM peak ({peak:.1f} GFLOP/s)")  # fmt: skip
    print(lines[-1], flush=True)

    # bfloat16 autocast over the same float32 weights, against float32
    bf16 = pllscore.CausalScorer(model, tok, dtype="bfloat16")
    t32 = t16 = float("inf")
    for _ in range(args.repeats):
        exact, t, _ = timed(lambda: ours.score(texts, progress=False))
        approx, t_, _ = timed(lambda: bf16.score(texts, progress=False))
        t32, t16 = min(t32, t), min(t16, t_)
    err = np.concatenate([np.abs(a.logprobs - b.logprobs) for a, b in zip(exact, approx)])
    sent = np.abs(exact.totals - approx.totals)
    lines.append(f"\nbfloat16 autocast vs float32 (pllscore, {len(texts)} sentences): **{t32 / t16:.2f}x** the float32 "
                 f"speed ({t16:.2f} s vs {t32:.2f} s); per-token |error| mean {err.mean():.4f}, max {err.max():.4f} "
                 f"nats; per-sentence max {sent.max():.4f} nats")  # fmt: skip
    print(lines[-1], flush=True)


def end_to_end(key: str, args, lines: list[str]) -> None:
    """``pllscore blimp`` against ``lm_eval --model hf`` from the GGUF file, each a fresh process."""
    import pandas as pd

    path = MODELS[key]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "OMP_NUM_THREADS": str(args.threads)}  # fmt: skip
    limit = ["--limit", str(args.e2e_limit)] if args.e2e_limit else []
    with tempfile.TemporaryDirectory(prefix="pllbench-") as tmp:
        tasks = [lm_eval_task(Path(tmp) / "tasks", args.data, p) for p in args.paradigms]
        ours = [sys.executable, "-m", "pllscore.cli", "blimp", "-m", str(path), "--data", str(args.data), "-q",
                "--device", "cpu", "-o", f"{tmp}/ours", *[a for p in args.paradigms for a in ("--paradigm", p)], *limit]  # fmt: skip
        theirs = [sys.executable, "-m", "lm_eval", "run", "--model", "hf", "--model_args",
                  f"pretrained={path.parent},gguf_file={path.name},dtype=float32", "--tasks", *tasks,
                  "--include_path", f"{tmp}/tasks", "--batch_size", str(args.batch), "--device", "cpu",
                  "--log_samples", "--output_path", f"{tmp}/theirs", *limit]  # fmt: skip
        seconds = {}
        for name, cmd in (("pllscore blimp", ours), (f"lm_eval --model hf (batch {args.batch})", theirs)):
            t0 = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True, env=env)
            seconds[name] = time.perf_counter() - t0
            if done.returncode:
                raise SystemExit(f"{name} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        pairs = pd.read_parquet(f"{tmp}/ours/pairs.parquet")
        worst, acc_ours, acc_theirs = 0.0, [], []
        for paradigm, task in zip(args.paradigms, tasks):
            got = lm_eval_samples(Path(tmp) / "theirs", task)
            mine = pairs[pairs["paradigm"] == paradigm]
            assert len(mine) == len(got), (paradigm, len(mine), len(got))
            for r in mine.itertuples():
                worst = max(worst, abs(r.good_score - got[r.pair_id][0]), abs(r.bad_score - got[r.pair_id][1]))
            acc_ours.append(100 * (mine["good_score"] > mine["bad_score"]).mean())
            acc_theirs.append(100 * np.mean([g > b for g, b in got.values()]))
    n = len(pairs)
    lines += [f"\n{key}, end to end ({', '.join(args.paradigms)}; {n} pairs = {2 * n} sentences; "
              "wall clock of a fresh process: start, GGUF dequantization, scoring, tables):\n"]  # fmt: skip
    lines += ["| command | s | pairs/s | accuracy % per paradigm |", "|---|---:|---:|---|"]
    for (name, s), acc in zip(seconds.items(), (acc_ours, acc_theirs)):
        lines.append(f"| {name} | {s:.1f} | {n / s:.1f} | {', '.join(f'{a:.1f}' for a in acc)} |")
    first, second = seconds.values()
    lines.append(f"\npllscore blimp is **{second / first:.2f}x** as fast as lm-eval end to end; per-sample "
                 f"log-likelihoods agree to {worst:.2e} nats (tolerance {args.e2e_tol:.0e})")  # fmt: skip
    print("\n".join(lines[-5:]), flush=True)
    if not worst <= args.e2e_tol:
        raise Disagree(f"end to end: pllscore and lm-eval differ by {worst:.2e} nats > {args.e2e_tol:.0e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    ap.add_argument("--n", type=int, default=400, help="good sentences of anaphor_gender_agreement (of 1000)")
    ap.add_argument("--batch", type=int, default=16, help="batch size of lm-eval, minicons and the plain loop")
    # 2e-3: on the AMX Xeon one SmolLM2 sentence of 400 is 1.2e-3 nats from float64 in pllscore's batch shapes
    # (float32 summation order; 4e-4 alone), every other within 1e-4 (BENCHMARKS.md)
    ap.add_argument("--tol", type=float, default=2e-3, help="largest per-sentence difference allowed, nats")
    ap.add_argument("--e2e-tol", type=float, default=3e-3,
                    help="end to end, pllscore vs lm-eval per sentence: both are float32 (measured up to 2.5e-3 on "
                    "SmolLM2 over 4,000 sentences; lm-eval's log_softmax over Gemma-3's 262k vocabulary ~3e-4)")  # fmt: skip
    ap.add_argument("--paradigms", nargs="+", default=["anaphor_gender_agreement", "anaphor_number_agreement"])
    ap.add_argument("--e2e-limit", type=int, default=None, help="pairs per paradigm end to end (default all)")
    ap.add_argument("--skip-e2e", action="store_true", help="leave out the end-to-end comparison")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of each system, interleaved; the best counts")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--data", type=Path, default=BLIMP, help="folder of BLiMP <paradigm>.jsonl files")
    ap.add_argument("--out", type=Path, default=HERE / "real-models-last-run.md")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    missing = [str(MODELS[k]) for k in args.models if not MODELS[k].exists()]
    if missing:
        raise SystemExit(f"missing {', '.join(missing)}: fetch them with `make test-real` first")
    info = machine()
    peak = max(gemm_peak(), gemm_peak(n=1024, k=1024, m=4096))
    cmd = " ".join(["python benchmarks/real_models.py", *sys.argv[1:]])
    lines = [f"## Real models, {time.strftime('%Y-%m-%d %H:%M')}\n", f"Command: `{cmd}`\n", *machine_lines(info)]
    lines += [f"* **fp32 GEMM peak** measured in this run: {peak:.1f} GFLOP/s", "* float32 unless said otherwise"]
    print("\n".join(lines), flush=True)
    try:
        for key in args.models:
            in_process(key, args, peak, lines)
            if not args.skip_e2e:
                end_to_end(key, args, lines)
    except Disagree as e:
        lines.append(f"\n**Aborted**: {e}")
        raise SystemExit(f"aborted: {e}") from None
    finally:
        args.out.write_text("\n".join(lines) + "\n")
        print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
