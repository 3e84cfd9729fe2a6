"""The BabyLM reading task's reads through a model: each distinct input once, in padded batches.

In: a :class:`~pllscore.plan.babylm_reading.ReadPlan` and the raw transformers model of its backend
(causal LM, masked LM, encoder-decoder LM). Out: per read, the probability of its target token: the
float32 softmax over the logits at the read's position, as a float (what the official pipeline's
``torch.softmax(logits, -1)[target].item()`` gives, one forward pass per read there).

Rows are packed longest first under a budget of padded tokens times the vocabulary (the logits of a
whole batch are materialised, as the model computes them), right-padded with an attention mask. A
causal LM's row holds many reads (every context it extends); an encoder-decoder row runs the decoder
on its one start token.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from pllscore.engine.babylm_scoring import padded_rows
from pllscore.engine.executor import full_float32
from pllscore.engine.placement import input_device
from pllscore.plan.babylm_reading import ReadPlan
from pllscore.plan.batching import pack

__all__ = ["LOGIT_BUDGET", "read_probabilities"]

#: logits (batch x positions x vocabulary) one batch may hold: 2**27 float32 values, 512 MiB
LOGIT_BUDGET = 2**27


def read_probabilities(
    model: Any,
    plan: ReadPlan,
    *,
    pad_id: int,
    padding: str = "pad",
    max_tokens: int | None = None,
    max_rows: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """The probability of each of ``plan.reads`` (float64 array of float32 values), rows in batches.

    ``padding``: "pad", "equal" or "single" (:func:`pllscore.plan.batching.pack`); ``max_tokens``: padded
    tokens per batch (default: what :data:`LOGIT_BUDGET` allows for the model's vocabulary); ``max_rows``: rows
    per batch at most (None: as many as the budget takes);
    ``progress``: called with the number of rows each finished batch held.
    """
    out = np.full(len(plan.reads), np.nan)
    if not plan.reads:
        return out
    per_row: list[list[int]] = [[] for _ in plan.inputs]
    for k, (row, _, _) in enumerate(plan.reads):
        per_row[row].append(k)
    lengths = [len(r) for r in plan.inputs]
    if max_tokens is None:
        vocab = int(getattr(model.config, "vocab_size", 0) or 50_000)
        max_tokens = max(max(lengths), LOGIT_BUDGET // max(vocab, 1))
    device = input_device(model)
    with torch.inference_mode(), full_float32():
        batches = pack(lengths, max_tokens, padding)
        if max_rows is not None:
            batches = [b[i : i + max_rows] for b in batches for i in range(0, len(b), max(1, max_rows))]
        for batch in batches:
            reads = [k for i in batch for k in per_row[i]]
            out[reads] = _batch(model, plan, batch, reads, pad_id, device)
            if progress is not None:
                progress(len(batch))
    return out


def _batch(model: Any, plan: ReadPlan, batch: np.ndarray, reads: list[int], pad_id: int, device: Any) -> np.ndarray:
    """The probabilities of ``reads`` from one forward pass over the rows ``batch``."""
    ids, attention = padded_rows([plan.inputs[i] for i in batch], pad_id, device)
    slot = {int(i): b for b, i in enumerate(batch)}
    inputs = {"input_ids": ids, "attention_mask": attention}
    if plan.backend == "enc_dec":
        start = torch.full((len(batch), 1), int(plan.decoder_start or 0), dtype=torch.long, device=device)
        inputs.update(decoder_input_ids=start, decoder_attention_mask=torch.ones_like(start))
    rows = torch.tensor([slot[plan.reads[k][0]] for k in reads], dtype=torch.long)
    cols = torch.tensor([plan.reads[k][1] for k in reads], dtype=torch.long)
    targets = torch.tensor([plan.reads[k][2] for k in reads], dtype=torch.long)
    shape = (len(batch), 1 if plan.backend == "enc_dec" else ids.shape[1])
    with _head_at(model, rows, cols, shape) as fired:
        output = model(**inputs)
    logits = output.logits if hasattr(output, "logits") else output[0]
    # the head saw the read positions only (one row of them), or every position
    picked = logits[0] if fired else logits[rows.to(logits.device), cols.to(logits.device)]
    probs = torch.softmax(picked.float(), dim=-1)  # the official softmax runs over float32 logits
    return probs.gather(-1, targets.to(probs.device)[:, None])[:, 0].cpu().double().numpy()


@contextlib.contextmanager
def _head_at(model: Any, rows: torch.Tensor, cols: torch.Tensor, shape: tuple[int, int]) -> Iterator[list[bool]]:
    """While the model runs, its output embeddings (the LM head's projection) see only the hidden states at
    (``rows``, ``cols``), as one row: the head over the vocabulary costs as much as a small model's body, and a
    masked LM's input is read at one position. Yields a list that holds True once the head was so fed; a model
    whose head is not a module taking (batch, position, feature) states computes every position as usual."""
    fired: list[bool] = []

    def only_read(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        h = args[0] if args else None
        if fired or not isinstance(h, torch.Tensor) or h.dim() != 3 or tuple(h.shape[:2]) != shape:
            return None
        fired.append(True)
        return (h[rows.to(h.device), cols.to(h.device)][None], *args[1:])

    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    hook = head.register_forward_pre_hook(only_read) if isinstance(head, torch.nn.Module) else None
    try:
        yield fired
    finally:
        if hook is not None:
            hook.remove()
