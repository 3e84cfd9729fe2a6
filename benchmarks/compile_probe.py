"""Steady-state gain of torch.compile on the bert-base encoder, on batches shaped like pllscore's CPU batches.

Run: benchmarks/.venv/bin/python benchmarks/compile_probe.py (about 2 minutes). Not part of the test suite.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402

# (copies, length) of typical batches under the CPU budget of 1024 padded tokens
SHAPES = [(78, 13), (64, 16), (56, 18), (93, 11)]


def timed_passes(encoder, batches, reps: int = 3) -> float:
    """Seconds per pass over ``batches``, after one warm-up pass."""
    with torch.inference_mode():
        for ids, mask in batches:
            encoder(input_ids=ids, attention_mask=mask)
        t0 = time.perf_counter()
        for _ in range(reps):
            for ids, mask in batches:
                encoder(input_ids=ids, attention_mask=mask)
    return (time.perf_counter() - t0) / reps


def main() -> None:
    torch.set_num_threads(2)
    tok = bench.wordpiece_tokenizer()
    encoder = bench.bert_base(tok).bert
    batches = [(torch.randint(5, len(tok), s), torch.ones(s, dtype=torch.long)) for s in SHAPES]
    eager = timed_passes(encoder, batches)
    t0 = time.perf_counter()
    compiled = torch.compile(encoder, dynamic=True)
    with torch.inference_mode():
        for ids, mask in batches:
            compiled(input_ids=ids, attention_mask=mask)
    first = time.perf_counter() - t0
    steady = timed_passes(compiled, batches)
    with torch.inference_mode():
        diff = max(
            (compiled(input_ids=i, attention_mask=m)[0] - encoder(input_ids=i, attention_mask=m)[0]).abs().max().item()
            for i, m in batches
        )
    print(
        f"eager {eager:.3f} s per pass over {len(batches)} batches; compiled {steady:.3f} s ({eager / steady:.2f}x); "
        f"compile + first pass {first:.1f} s; max |hidden difference| {diff:.1e}"
    )


if __name__ == "__main__":
    main()
