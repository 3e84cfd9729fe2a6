"""Log-probabilities of target tokens from hidden states, in float32, in bounded memory."""

from __future__ import annotations

import torch

from pllscore.engine.heads import Head

__all__ = ["read_logprobs"]

# logits held at once, in elements (256 MiB of float32); keeps large vocabularies in budget
_MAX_LOGITS = 1 << 26


def read_logprobs(head: Head, hidden: torch.Tensor, targets: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """``log p(targets[i] | hidden[i])`` in nats, float32, for hidden states of shape (N, H)."""
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
    return torch.log_softmax(logits, dim=-1).gather(1, targets[:, None]).squeeze(1)
