"""Log-probabilities of target tokens from hidden states, in float32, in bounded memory."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from pllscore.engine.heads import Head

__all__ = ["pick_logprobs", "read_logprobs"]

# logits held at once, in elements (256 MiB of float32); keeps large vocabularies in budget
_MAX_LOGITS = 1 << 26
# A plain output projection is applied in slices of this many vocabulary rows: a product
# (rows x 768) @ (768 x 50257) runs at ~115 GFLOP/s on a 2-core AVX2 CPU, slices of 2048
# at ~145, and each slice's logits stay in cache for the log-sum-exp. On a 2-core AVX-512
# Xeon, 1000 rows against SmolLM2's (49k x 576) and Gemma-3's (262k x 640) heads took half
# the time in slices of 8192 as in slices of 2048, within 10% of the whole product, whose
# logits (1 GB for Gemma-3) cost system time in page faults (BENCHMARKS.md).
_VOCAB_SLICE = 8192
_ROW_SLICE = 1024


def read_logprobs(head: Head, hidden: torch.Tensor, targets: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """``log p(targets[i] | hidden[i])`` in nats, float32, for hidden states of shape (N, H)."""
    if isinstance(head, torch.nn.Linear):
        return _sliced_linear_logprobs(head, hidden, targets)
    out = torch.empty(len(targets), dtype=torch.float32, device=hidden.device)
    step = max(1, _MAX_LOGITS // max(vocab_size, 1))
    for i in range(0, len(targets), step):
        logits = head(hidden[i : i + step]).float()
        out[i : i + step] = _pick(logits, targets[i : i + step])
    return out


def pick_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """``log_softmax(logits)[i, targets[i]]`` in float32, for full logits of shape (N, V)."""
    return _pick(logits.float(), targets)


def _pick(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    # target logit minus logsumexp, not log_softmax: on a CPU, float32 log_softmax over a 262k vocabulary
    # (Gemma-3) is off by up to 1e-4 nats a token, logsumexp by about 1e-6 (measured against float64)
    return logits.gather(1, targets[:, None]).squeeze(1) - torch.logsumexp(logits, dim=-1)


def _sliced_linear_logprobs(proj: torch.nn.Linear, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The same as ``_pick(proj(hidden), targets)``, a vocabulary slice at a time (streaming log-sum-exp)."""
    weight, bias = proj.weight, proj.bias
    vocab = weight.shape[0]
    out = torch.empty(len(targets), dtype=torch.float32, device=hidden.device)
    for r in range(0, len(targets), _ROW_SLICE):
        h, t = hidden[r : r + _ROW_SLICE], targets[r : r + _ROW_SLICE]
        lse = torch.full((len(t),), float("-inf"), dtype=torch.float32, device=h.device)
        picked = torch.zeros(len(t), dtype=torch.float32, device=h.device)
        for v in range(0, vocab, _VOCAB_SLICE):
            w = weight[v : v + _VOCAB_SLICE]
            logits = F.linear(h, w, None if bias is None else bias[v : v + _VOCAB_SLICE]).float()
            lse = torch.logaddexp(lse, torch.logsumexp(logits, dim=-1))
            # where() instead of boolean indexing: no host sync per slice on a GPU
            inside = (t >= v) & (t < v + len(w))
            here = logits.gather(1, (t - v).clamp(0, len(w) - 1)[:, None]).squeeze(1)
            picked = torch.where(inside, here, picked)
        out[r : r + _ROW_SLICE] = picked - lse
    return out
