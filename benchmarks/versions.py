"""Two pllscore source trees timed against each other, interleaved, on the workloads of run.py.

    python benchmarks/versions.py OLD_SRC NEW_SRC [--eventsadapt 100] [--brown 40] [--rounds 3] [--gguf FILE]

Each round runs one fresh process per tree (old, then new, then the next round new first), each
scoring masked word-l2r and causal LL with pllscore on run.py's bert-base and GPT-2-small sized
random models (same seeds, same tokenizers). Interleaving puts both trees under the same load, so
the ratio holds on a busy machine where absolute times do not. Prints each time and the median
ratio new / old per workload. Nothing here is part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(n_ea: int, n_brown: int, gguf: str | None) -> None:
    """Runs in a fresh process whose PYTHONPATH names the tree: the timings as one JSON line."""
    import numpy as np
    import pandas as pd
    import torch

    sys.path.insert(0, str(HERE))
    import run as harness

    import pllscore

    torch.set_num_threads(int(os.environ.get("THREADS", torch.get_num_threads())))
    wp, bpe = harness.wordpiece_tokenizer(), harness.bpe_tokenizer()
    bert, gpt = harness.bert_base(wp), harness.gpt2_small(bpe)
    ea = pd.read_csv(harness.SHARED / "eventsadapt" / "EventsAdapt.csv")["Sentence"].tolist()[:n_ea]
    brown_all = harness.brown_sentences()
    rng = np.random.default_rng(0)
    brown = [brown_all[i] for i in sorted(rng.choice(len(brown_all), size=1000, replace=False))][:n_brown]
    masked, causal = pllscore.MaskedScorer(bert, wp), pllscore.CausalScorer(gpt, bpe)
    out = {"pllscore": pllscore.__file__}
    for name, texts in (("EventsAdapt", ea), ("Brown", brown)):
        for what, fn in (
            ("word-l2r", lambda t=texts: masked.score(t, metric="word-l2r", progress=False)),
            ("causal LL", lambda t=texts: causal.score(t, progress=False)),
        ):
            fn(texts[:4])  # warm-up
            best = float("inf")
            for _ in range(2):
                t0 = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t0)
            out[f"{name} {what}"] = best
    if gguf:  # a real causal LM: 200 good BLiMP sentences, as real_models.py reads them
        import json as _json

        real = pllscore.load(gguf)
        path = harness.SHARED / "blimp" / "anaphor_gender_agreement.jsonl"
        texts = [_json.loads(line)["sentence_good"] for line in path.read_text().splitlines()[:200]]
        real.score(texts[:4], progress=False)
        best = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            real.score(texts, progress=False)
            best = min(best, time.perf_counter() - t0)
        out[f"BLiMP {Path(gguf).name}"] = best
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--eventsadapt", type=int, default=100)
    ap.add_argument("--brown", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gguf", help="also time a real causal LM from this GGUF file (200 BLiMP sentences)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.eventsadapt, args.brown, args.gguf)
        return
    times: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for r in range(args.rounds):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        for which in order:
            src = getattr(args, which).resolve()
            env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1"}
            cmd = [sys.executable, __file__, str(args.old), str(args.new), "--child",
                   "--eventsadapt", str(args.eventsadapt), "--brown", str(args.brown),
                   *(["--gguf", args.gguf] if args.gguf else [])]  # fmt: skip
            line = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout.strip()
            got = json.loads(line.splitlines()[-1])
            print(f"round {r + 1} {which}: {got}", flush=True)
            times[which].append(got)
    print("\n| workload | old s (median) | new s (median) | new / old |\n|---|---:|---:|---:|")
    for key in [k for k in times["old"][0] if k != "pllscore"]:
        old = statistics.median(t[key] for t in times["old"])
        new = statistics.median(t[key] for t in times["new"])
        print(f"| {key} | {old:.2f} | {new:.2f} | {new / old:.3f} |")


if __name__ == "__main__":
    main()
