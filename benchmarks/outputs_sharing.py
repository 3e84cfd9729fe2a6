"""Per-token outputs (entropy, rank) with and without prefix sharing, on the real GGUF causal LMs.

    PYTHONPATH=src .venv/bin/python benchmarks/outputs_sharing.py            # after: python -m tests.real.fetch

The minimal pairs of two BLiMP paradigms (good and bad sentence of each pair in one call, as
``pllscore blimp`` and lm-eval's ``is_greedy`` read them) are scored with ``outputs=("rank",)``
(what the lm-eval adapter asks for ``is_greedy``) and ``("entropy", "rank")``, prefix sharing on
and off, best of --repeats interleaved runs; scores, entropies and ranks are checked to agree
first. Prints a Markdown table with the machine it ran on.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from real_models import BLIMP, MODELS  # noqa: E402
from real_systems import machine, machine_lines  # noqa: E402

import pllscore  # noqa: E402


def pairs(paradigms: list[str], n: int) -> list[str]:
    texts = []
    for p in paradigms:
        with open(BLIMP / f"{p}.jsonl") as f:
            for line in list(f)[:n]:
                row = json.loads(line)
                texts += [row["sentence_good"], row["sentence_bad"]]
    return texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    ap.add_argument("--paradigms", nargs="+", default=["anaphor_gender_agreement", "determiner_noun_agreement_1"])
    ap.add_argument("--n", type=int, default=200, help="pairs per paradigm")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.manual_seed(0)
    texts = pairs(args.paradigms, args.n)
    lines = [f"# Outputs with prefix sharing ({len(texts)} sentences: {args.n} pairs of {', '.join(args.paradigms)})",
             "", *machine_lines(machine()), "",
             "| model | outputs | shared (s) | not shared (s) | speed-up | max score diff | max entropy diff | ranks that differ |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for key in args.models:
        shared = pllscore.load(MODELS[key], device="cpu")
        plain = pllscore.load(MODELS[key], device="cpu", share_prefixes=False)
        for outputs in [(), ("rank",), ("entropy", "rank")]:
            best = {"shared": float("inf"), "plain": float("inf")}
            got = {}
            for _ in range(args.repeats):
                for name, scorer in (("shared", shared), ("plain", plain)):
                    t0 = time.perf_counter()
                    got[name] = scorer.score(texts, outputs=outputs, progress=False)
                    best[name] = min(best[name], time.perf_counter() - t0)
            a, b = got["shared"], got["plain"]
            diff = max(abs(x.total - y.total) for x, y in zip(a, b))
            ent = max((np.nanmax(np.abs(x.entropy - y.entropy)) for x, y in zip(a, b)), default=0.0) \
                if "entropy" in outputs else float("nan")  # fmt: skip
            ranks = "-"
            if "rank" in outputs:  # float32 rounding in other matrix shapes can move near-tied items
                ra, rb = (np.concatenate([x.rank for x in r]) for r in (a, b))
                ok = ~np.isnan(ra)
                moved = ra[ok] != rb[ok]
                top = (ra[ok] == 1) != (rb[ok] == 1)
                ranks = (
                    f"{moved.sum()} of {ok.sum()} (max {np.abs(ra[ok] - rb[ok]).max():.0f}); top-1 changed: {top.sum()}"
                )
            lines.append(
                f"| {key} | {', '.join(outputs) or '(none)'} | {best['shared']:.2f} | {best['plain']:.2f} | "
                f"{best['plain'] / best['shared']:.2f}x | {diff:.1e} | {ent:.1e} | {ranks} |"
            )
            print(lines[-1], flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
