"""A/B in one process on a real causal LM: prefix sharing on/off, the LM head split or not, a plain loop.

Run (from the repository root, with the project's venv; about 2-10 minutes on 2 cores):
    python benchmarks/causal_probe.py MODEL [--paradigm UID] [--pairs N] [--reps R] [--loop] [--compile]
MODEL is anything pllscore.load takes (a GGUF file). Texts: the good and bad sentences of the first
N pairs of one BLiMP paradigm (../shared/data/blimp). Per variant: wall, user and system seconds
(os.times of this process, so other processes' load does not count), and the largest per-token
difference from the first pllscore variant. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import torch

import pllscore

BLIMP = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "blimp"


def plain_loop(scorer, texts: list[str], batch: int = 16) -> list[np.ndarray]:
    """What a user writes with transformers: batches of 16, full log_softmax, BOS in front."""
    tok, model = scorer.tokenizer, scorer.model
    bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    out = []
    with torch.inference_mode():
        for i in range(0, len(texts), batch):
            enc = [[bos, *tok(x, add_special_tokens=False)["input_ids"]] for x in texts[i : i + batch]]
            width = max(map(len, enc))
            ids = torch.tensor([e + [0] * (width - len(e)) for e in enc])
            att = torch.tensor([[1] * len(e) + [0] * (width - len(e)) for e in enc])
            lp = torch.log_softmax(model(input_ids=ids, attention_mask=att).logits.float(), -1)
            for b, e in enumerate(enc):
                out.append(lp[b, torch.arange(len(e) - 1), torch.tensor(e[1:])].double().numpy())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--paradigm", default="anaphor_gender_agreement")
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--loop", action="store_true", help="also time the plain transformers loop")
    ap.add_argument("--compile", action="store_true", help="then compile the layers and time again")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    rows = [json.loads(line) for line in open(BLIMP / f"{args.paradigm}.jsonl")][: args.pairs]
    texts = [r["sentence_good"] for r in rows] + [r["sentence_bad"] for r in rows]
    t0 = time.perf_counter()
    scorer = pllscore.load(args.model, device="cpu")
    print(f"load {time.perf_counter() - t0:.1f}s; {len(texts)} texts; torch threads {torch.get_num_threads()}")
    parts = scorer.engine.parts

    def pll(share: bool, split: bool = True):
        def run() -> list[np.ndarray]:
            scorer.engine.share_prefixes = share
            scorer.engine.parts = parts if split else None
            return [r.logprobs for r in scorer.score(texts)]

        return run

    variants = [("share", pll(True)), ("no-share", pll(False))]
    if parts is not None:
        variants.append(("no-share, full logits", pll(False, split=False)))
    if args.loop:
        variants.append(("plain loop", lambda: plain_loop(scorer, texts)))
    reference = None

    def timed(name, fn) -> None:
        nonlocal reference
        c0, w0 = os.times(), time.perf_counter()
        values = fn()
        c1, w1 = os.times(), time.perf_counter()
        reference = reference or values
        diff = max(float(np.nanmax(np.abs(a - b))) for a, b in zip(values, reference))
        print(
            f"{name:24s} wall {w1 - w0:7.2f}s  user {c1.user - c0.user:7.2f}s  sys {c1.system - c0.system:6.2f}s  "
            f"max |diff| per token {diff:.1e}",
            flush=True,
        )

    for _ in range(args.reps):
        for name, fn in variants:
            timed(name, fn)
    if args.compile:
        from pllscore.engine.compiling import compile_layers

        t0 = time.perf_counter()
        compile_layers(scorer.model)
        pll(True)()
        print(f"compile and first run {time.perf_counter() - t0:.1f}s")
        for _ in range(args.reps):
            timed("compiled share", pll(True))
            timed("compiled no-share", pll(False))


if __name__ == "__main__":
    main()
