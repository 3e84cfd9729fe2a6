"""The BabyLM sentence tasks' reads through a model: batched, each distinct read once, every temperature.

In: :class:`~pllscore.plan.babylm_reads.Read` s (an input, an optional decoder input, positions and the
target token read at each) and temperatures. Out: per read a float32 array (temperatures x positions) of
``log_softmax(logits / T)[target]``, as the official pipeline computes it (logits divided by the Python
float ``T``, in float32). Reads of like lengths are padded together (right padding, attention mask);
only the read positions go through the LM head where the model splits into body and head.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from pllscore.engine.executor import full_float32
from pllscore.engine.heads import split_causal_lm, split_masked_lm
from pllscore.engine.placement import input_device
from pllscore.plan.babylm_reads import Read
from pllscore.plan.batching import pack

__all__ = ["choose_rows", "padded_rows", "read_all", "sum_rows", "temperature_range"]

# logits held at once while reading, in elements (128 MiB of float32)
_MAX_LOGITS = 1 << 25


def temperature_range(minimum: float = 1.0, maximum: float | None = None, interval: float = 0.05) -> list[float]:
    """The official pipeline's temperatures: ``minimum`` alone, or ``torch.arange(minimum, maximum +
    interval, interval)`` in float32, clamped at 1e-6 (so ``1.05`` is the float32 nearest it)."""
    if maximum is None:
        return (torch.ones(1) * minimum).tolist()
    return torch.arange(minimum, maximum + interval, interval).clamp(min=1e-6).tolist()


def _split(model: Any, kind: str) -> tuple[Any, Callable[[torch.Tensor], Any]] | None:
    """(body, LM head) where the model splits so (an encoder-decoder never does here), else None."""
    return split_causal_lm(model) if kind == "causal" else split_masked_lm(model) if kind == "masked" else None


def _hidden_and_head(model: Any, kind: str) -> tuple[Callable[..., torch.Tensor], Callable[[torch.Tensor], Any]]:
    """(inputs -> per-position outputs, outputs at the read rows -> logits) for ``model`` (``kind``: ``"causal"``,
    ``"masked"`` or ``"seq2seq"``): the body and the LM head where the model splits (:mod:`pllscore.engine.heads`),
    so the head runs only where read; else the whole model's logits, read as they are."""
    split = _split(model, kind)
    if split is None:
        return (lambda **inputs: model(**inputs).logits), (lambda rows: rows)
    body, head = split
    return (lambda **inputs: body(**inputs)[0]), head


def padded_rows(rows: Sequence[tuple[int, ...]], pad: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """``rows`` right-padded with ``pad`` into one tensor of ids and its attention mask, on ``device``."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
        mask[i, : len(r)] = 1
    return ids.to(device), mask.to(device)


def _run_batch(
    model: Any, reads: Sequence[Read], kind: str, temperatures: Sequence[float], pad: int
) -> list[np.ndarray]:
    device = input_device(model)
    forward, head = _hidden_and_head(model, kind)
    ids, mask = padded_rows([r.ids for r in reads], pad, device)
    inputs = {"input_ids": ids, "attention_mask": mask}
    if kind == "seq2seq":
        dec, dec_mask = padded_rows([r.decoder or () for r in reads], pad, device)
        inputs.update(decoder_input_ids=dec, decoder_attention_mask=dec_mask)
    hidden = forward(**inputs)
    rows = torch.tensor([i for i, r in enumerate(reads) for _ in r.at], dtype=torch.long, device=device)
    at = torch.tensor([p for r in reads for p in r.at], dtype=torch.long, device=device)
    targets = torch.tensor([t for r in reads for t in r.targets], dtype=torch.long, device=device)
    picked = hidden[rows, at]
    # filled on the model's device and copied back once (one wait per batch, whatever the temperatures)
    out = torch.empty((len(temperatures), len(at)), dtype=torch.float32, device=picked.device)
    vocab = int(getattr(model.config, "vocab_size", 0) or 1)
    step = max(1, _MAX_LOGITS // vocab)
    for start in range(0, len(at), step):
        logits = head(picked[start : start + step]).float()  # a spread model's head may answer elsewhere
        logits = logits.to(out.device)
        want = targets[start : start + step].unsqueeze(-1)
        for j, t in enumerate(temperatures):
            out[j, start : start + step] = F.log_softmax(logits / t, dim=-1).gather(-1, want).squeeze(-1)
    values = out.cpu().numpy()
    bounds = np.cumsum([0] + [len(r.at) for r in reads])
    return [values[:, bounds[i] : bounds[i + 1]] for i in range(len(reads))]


def read_all(
    model: Any,
    reads: Sequence[Read],
    temperatures: Sequence[float],
    *,
    kind: str,
    pad_token_id: int,
    max_tokens: int = 8192,
    max_rows: int = 64,
    progress: Callable[[int], None] | None = None,
) -> list[np.ndarray]:
    """Per read, ``(len(temperatures), len(read.at))`` float32 log-probabilities (``kind``: ``"causal"``,
    ``"masked"`` or ``"seq2seq"``). Batches hold at most ``max_rows`` reads and ``max_tokens`` padded
    tokens; ``progress`` is told how many reads each batch finished."""
    out: list[np.ndarray] = [np.empty((len(temperatures), 0), dtype=np.float32)] * len(reads)
    if _split(model, kind) is None:
        # the whole model's logits at every position: the budget bounds them (about 512 MiB of float32)
        vocab = int(getattr(model.config, "vocab_size", 0) or 1)
        max_tokens = max(1, min(max_tokens, (1 << 27) // vocab))
    lengths = [r.length for r in reads]
    todo = [i for i, r in enumerate(reads) if r.at]
    batches = pack([lengths[i] for i in todo], max_tokens) if todo else []
    with torch.inference_mode(), full_float32():
        for batch in batches:
            for start in range(0, len(batch), max_rows):
                chunk = [todo[int(k)] for k in batch[start : start + max_rows]]
                for i, values in zip(
                    chunk, _run_batch(model, [reads[i] for i in chunk], kind, temperatures, pad_token_id)
                ):
                    out[i] = values
                if progress is not None:
                    progress(len(chunk))
    return out


def sum_rows(rows: Sequence[np.ndarray], widths: Sequence[int]) -> np.ndarray:
    """Each float32 row's sum by ``torch.sum`` along a row of ``widths[i]`` places (the row, then zeros): the
    official code's reductions, whose rounding depends on the row's width, so near-ties are decided as there.
    Rows of one width are summed as one table (a table's rows round as rows alone do)."""
    out = np.zeros(len(rows), dtype=np.float32)
    by_width: dict[int, list[int]] = {}
    for i, w in enumerate(widths):
        by_width.setdefault(max(int(w), len(rows[i])), []).append(i)
    for width, members in by_width.items():
        table = np.zeros((len(members), width), dtype=np.float32)
        for j, i in enumerate(members):
            table[j, : len(rows[i])] = rows[i]
        out[members] = torch.from_numpy(table).sum(dim=1).numpy()
    return out


def choose_rows(scores: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per item (its sentences' float32 scores) the best sentence and the first's softmax share, by
    ``torch.max`` and ``torch.softmax`` over the items with as many sentences stacked, as the official code
    chooses (the first of equal scores; the share's float32 rounding)."""
    choices = np.zeros(len(scores), dtype=np.int64)
    firsts = np.zeros(len(scores), dtype=np.float64)
    by_count: dict[int, list[int]] = {}
    for i, row in enumerate(scores):
        by_count.setdefault(len(row), []).append(i)
    for count, rows in by_count.items():
        if count == 0:
            continue
        table = torch.from_numpy(np.stack([np.asarray(scores[i], dtype=np.float32) for i in rows]))
        choices[rows] = torch.max(table, dim=1)[1].numpy()
        firsts[rows] = torch.softmax(table, dim=1)[:, 0].double().numpy()
    return choices, firsts
