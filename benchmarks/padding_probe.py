"""The load-time padding probe (pllscore/engine/padding.py) on real causal LMs: its cost and its margins.

Run (from the repository root, with the project's venv; under a minute on 2 cores):
    python benchmarks/padding_probe.py [MODEL ...] [--reps R] [--threads T]
MODEL is anything pllscore.load takes; by default the two GGUF files of `make test-real`
(PLLSCORE_REAL_CACHE, default ~/.cache/pllscore/real-models). Their architectures (llama,
gemma3_text) are on the proven list, so load does not probe them: the probe is timed here as it
runs for an architecture off the list (on one thread on a CPU, whatever torch's count). Per model: the probe's wall and CPU seconds (median of R,
after one warm-up; os.times of this process, so other processes' load does not count in CPU
seconds), its decision, and the two gaps it compares with its tolerances: padded vs alone
(PROBE_TOLERANCE) and masked-out tokens changed (CONTENT_TOLERANCE). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import torch

import pllscore
from pllscore.engine import padding

CACHE = Path(os.environ.get("PLLSCORE_REAL_CACHE", Path.home() / ".cache" / "pllscore" / "real-models"))
DEFAULT = [CACHE / "smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf", CACHE / "gemma3" / "gemma-3-270m-q4_k_m.gguf"]


def gaps(model, short: list[int], long: list[int], pad: int) -> tuple[float, float]:
    """(padded vs alone, masked-out tokens changed): the largest differences the probe compares, in nats."""
    with torch.inference_mode():
        alone = [padding.probe_read(model, [s], [len(s)], pad)[0] for s in (short, long)]
        n = len(short)
        batch = padding.probe_read(model, [long, short, short + long[n:]], [len(long), n, n], pad)
    padded = max(float((batch[0] - alone[1]).abs().max()), float((batch[1] - alone[0]).abs().max()))
    return padded, float((batch[1] - batch[2]).abs().max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=[str(p) for p in DEFAULT])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--threads", type=int, default=None, help="torch threads for load (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    for name in args.models:
        t0 = time.perf_counter()
        scorer = pllscore.load(name, device="cpu")
        load_s = time.perf_counter() - t0
        model, tok = scorer.model, scorer.tokenizer
        short, long = (tok(text)["input_ids"] for text in padding.PROBE_TEXTS)
        pad = scorer.engine.pad_token_id
        padding.probe(model, short, long, pad)  # warm-up
        walls, cpus = [], []
        for _ in range(args.reps):
            t0, c0 = time.perf_counter(), os.times()
            mode, why = padding.probe(model, short, long, pad)
            c1 = os.times()
            walls.append(time.perf_counter() - t0)
            cpus.append(c1.user + c1.system - c0.user - c0.system)
        padded, content = gaps(model, short, long, pad)
        print(
            f"{Path(name).name}: {model.config.model_type}, {torch.get_num_threads()} threads, "
            f"{len(short)}+{len(long)} tokens: load {load_s:.1f} s without the probe; probe wall {statistics.median(walls):.3f} s "
            f"(min {min(walls):.3f}), CPU {statistics.median(cpus):.3f} s; decides {mode!r}; "
            f"padded vs alone {padded:.1e} (tolerance {padding.PROBE_TOLERANCE:.0e}), "
            f"masked-out tokens {content:.1e} (tolerance {padding.CONTENT_TOLERANCE:.0e})"
        )


if __name__ == "__main__":
    main()
