"""Whether a text is its model's greedy choice: every scored token the model's top prediction.

lm-evaluation-harness's ``loglikelihood`` returns ``(logprob, is_greedy)``. pllscore's engines
read only the target's log-probability, so :func:`is_greedy` runs the same sequences (the
same masked copies for a masked LM, the same windows for a causal LM) once more with full
logits and compares their argmax with each target. It costs a second pass, slower than the
engine's (full logits, small batches): measured 4x a causal scoring pass, 1.5x a masked one.
A masked LM's token is greedy when it is the top prediction in the masked copy that scores it
under the metric. Ties count as greedy only when the target is the first maximum (torch's argmax).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from pllscore.plan.masks import build_plan
from pllscore.scoring.stitching import CausalWork, MaskedWork, causal_values

__all__ = ["is_greedy"]

# sequences per forward pass: small, since this pass keeps full logits
_ROWS = 8


def is_greedy(
    scorer: Any, texts: list[str], *, context: Sequence[str] | str | None, sep: str, convention: str, metric: str | None
) -> list[bool]:
    """Per text, whether every one of its scored tokens is the model's argmax where it is scored."""
    encoded = scorer._encode(texts, None, context, sep, convention)
    if scorer.kind == "causal":
        work = CausalWork.build(encoded, scorer.max_length, scorer.stride)
        hits = [_causal_hits(scorer, seq) for seq in _chunks(work.sequences)]
        runs = [h for chunk in hits for h in chunk]
        out = []
        for e, lp in zip(encoded, work.logprobs(runs)):
            values, read = causal_values(e, lp)
            out.append(bool(np.all(values[read] > 0.5)))
        return out
    work = MaskedWork.build(encoded, [None] * len(encoded), scorer.max_length)
    plan = build_plan(work.sequences, work.alignments, [metric or scorer.metric[0]])
    reads = _masked_hits(scorer, plan)
    return [bool(np.all(work.values(plan, reads, 0, i) > 0.5)) for i in range(len(encoded))]


def _chunks(seqs: list[list[int]]) -> list[list[list[int]]]:
    return [seqs[i : i + _ROWS] for i in range(0, len(seqs), _ROWS)]


def _padded(scorer: Any, seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    lengths = np.array([len(s) for s in seqs], dtype=np.int64)
    ids = np.full((len(seqs), int(lengths.max())), scorer._pad_id, dtype=np.int64)
    for row, s in enumerate(seqs):
        ids[row, : len(s)] = s
    attention = (np.arange(ids.shape[1])[None, :] < lengths[:, None]).astype(np.int64)
    dev = scorer.device
    return torch.from_numpy(ids).to(dev), torch.from_numpy(attention).to(dev), lengths


@torch.inference_mode()
def _causal_hits(scorer: Any, seqs: list[list[int]]) -> list[np.ndarray]:
    """Per sequence, 1.0 where token j + 1 is the argmax of the logits at j (the engine's ``lp`` layout)."""
    ids, attention, lengths = _padded(scorer, seqs)
    top = scorer.model(input_ids=ids, attention_mask=attention).logits[:, :-1].argmax(-1)
    hit = (top == ids[:, 1:]).double().cpu().numpy()
    return [hit[row, : n - 1] for row, n in enumerate(lengths)]


@torch.inference_mode()
def _masked_hits(scorer: Any, plan: Any) -> np.ndarray:
    """Per read of ``plan``, 1.0 where the original token is the argmax at its masked position."""
    out = np.zeros(plan.n_reads, dtype=np.float64)
    seqs = plan.sequences
    copies = np.arange(len(plan.copy_seq))
    for start in range(0, len(copies), _ROWS):
        batch = copies[start : start + _ROWS]
        ids, attention, _ = _padded(scorer, [list(seqs[plan.copy_seq[c]]) for c in batch])
        a, b = plan.read_ptr[batch], plan.read_ptr[batch + 1]
        reads = np.concatenate([np.arange(x, y) for x, y in zip(a, b)])
        rows = torch.from_numpy(np.repeat(np.arange(len(batch)), b - a)).to(ids.device)
        pos = torch.from_numpy(plan.read_pos[reads].astype(np.int64)).to(ids.device)
        targets = ids[rows, pos].clone()
        for row, c in enumerate(batch):
            for x, y in plan.copy_runs[c]:
                ids[row, x:y] = scorer.tokenizer.mask_token_id
        top = scorer.model(input_ids=ids, attention_mask=attention).logits[rows, pos].argmax(-1)
        out[reads] = (top == targets).double().cpu().numpy()
    return out
