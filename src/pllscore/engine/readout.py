"""Log-probabilities of target tokens from hidden states, in float32, in bounded memory.

Besides the target's log-probability, :func:`read_outputs` can read, in the same pass over the
vocabulary and never holding more than a slice of logits: the distribution's entropy (nats), the
target's rank, and the log-probability of a set of tokens (a boolean mask over the vocabulary).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from pllscore.engine.executor import to_device
from pllscore.engine.heads import Head

__all__ = ["OUTPUTS", "Wants", "pick_logprobs", "pick_outputs", "read_logprobs", "read_outputs"]

#: the optional per-token outputs besides the log-probability
OUTPUTS = ("entropy", "rank")


@dataclass(frozen=True)
class Wants:
    """What a readout computes besides the target's log-probability (see :func:`read_outputs`)."""

    entropy: bool = False
    rank: bool = False
    token_set: torch.Tensor | None = None

    @property
    def any(self) -> bool:
        return self.entropy or self.rank or self.token_set is not None

    def kwargs(self, device: torch.device) -> dict[str, Any]:
        """The keywords of :func:`read_outputs`, the token set on ``device``."""
        token_set = None if self.token_set is None else to_device(self.token_set, device)
        return {"entropy": self.entropy, "rank": self.rank, "token_set": token_set}


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
    # (Gemma-3) is off by up to 1e-4 nats a token, logsumexp by about 1e-6 (measured against float64).
    # The targets go where the logits are (a model spread over devices: its head's device)
    return logits.gather(1, targets.to(logits.device)[:, None]).squeeze(1) - torch.logsumexp(logits, dim=-1)


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


def read_outputs(
    head: Head,
    hidden: torch.Tensor,
    targets: torch.Tensor,
    vocab_size: int,
    *,
    entropy: bool = False,
    rank: bool = False,
    token_set: torch.Tensor | None = None,
) -> dict[str, torch.Tensor]:
    """``logprob`` as :func:`read_logprobs`, and what is asked besides, per row of ``hidden``.

    ``entropy``: the entropy of the row's distribution in nats (float32). ``rank``: 1 + the number
    of vocabulary items whose logit is strictly larger than the target's (int64; ties share the best
    rank). ``token_set`` (a boolean mask over the vocabulary): ``set`` = log P(the next token is in
    the set), nats. With nothing asked this is :func:`read_logprobs` itself, no extra work.
    """
    if not (entropy or rank or token_set is not None):
        return {"logprob": read_logprobs(head, hidden, targets, vocab_size)}
    if isinstance(head, torch.nn.Linear):
        return _sliced_linear_outputs(head, hidden, targets, entropy, rank, token_set)
    parts: list[dict[str, torch.Tensor]] = []
    step = max(1, _MAX_LOGITS // max(vocab_size, 1))
    for i in range(0, len(targets), step):
        logits = head(hidden[i : i + step]).float()
        parts.append(pick_outputs(logits, targets[i : i + step], entropy=entropy, rank=rank, token_set=token_set))
    if not parts:
        return pick_outputs(hidden.new_zeros((0, 1)), targets, entropy=entropy, rank=rank, token_set=token_set)
    return {k: torch.cat([p[k] for p in parts]) for k in parts[0]}


def pick_outputs(
    logits: torch.Tensor,
    targets: torch.Tensor,
    *,
    entropy: bool = False,
    rank: bool = False,
    token_set: torch.Tensor | None = None,
) -> dict[str, torch.Tensor]:
    """:func:`read_outputs` for full logits of shape (N, V)."""
    logits = logits.float()
    targets = targets.to(logits.device)  # a model spread over devices: its head's device
    lse = torch.logsumexp(logits, dim=-1)
    target = logits.gather(1, targets[:, None]).squeeze(1)
    out = {"logprob": target - lse}
    if entropy:
        out["entropy"] = _entropy(logits, lse)
    if rank:
        out["rank"] = 1 + (logits > target[:, None]).sum(-1)
    if token_set is not None:
        out["set"] = _set_lse(logits, token_set[: logits.shape[1]].to(logits.device)) - lse
    return out


def _entropy(logits: torch.Tensor, lse: torch.Tensor) -> torch.Tensor:
    # -sum p log p with log p = l - lse <= 0: a sum of non-negative terms, no cancellation;
    # where(): a -inf logit has p = 0 and contributes 0, not 0 * -inf
    logp = logits - lse[:, None]
    p = logp.exp()
    return -torch.where(p > 0, p * logp, 0.0).sum(-1)


def _set_lse(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return torch.logsumexp(logits.masked_fill(~mask, float("-inf")), dim=-1)


def _sliced_linear_outputs(
    proj: torch.nn.Linear,
    hidden: torch.Tensor,
    targets: torch.Tensor,
    entropy: bool,
    rank: bool,
    token_set: torch.Tensor | None,
) -> dict[str, torch.Tensor]:
    """:func:`pick_outputs` of ``proj(hidden)``, a vocabulary slice at a time.

    The log-sum-exp and the target's logit are computed exactly as :func:`_sliced_linear_logprobs`
    computes them, so ``logprob`` does not change when more is asked. Entropy is merged slice by slice
    by the chain rule of a mixture: with L the log-sum-exp of the logits seen so far and H their
    entropy, adding a slice (log-sum-exp L_s, entropy H_s) gives, with weights w = exp(L - L'),
    w_s = exp(L_s - L'): H' = w H + w_s H_s + entr(w) + entr(w_s), every term non-negative.
    Rank counts, per slice, the logits strictly above the target's, whose logit is computed up front
    as a row-wise dot product (it can differ from the slice's product in the last bit, so an item
    within float rounding of the target's logit may count either way; the target never counts).
    """
    weight, bias = proj.weight, proj.bias
    vocab = weight.shape[0]
    n = len(targets)
    dev = hidden.device
    out = {"logprob": torch.empty(n, dtype=torch.float32, device=dev)}
    if entropy:
        out["entropy"] = torch.empty(n, dtype=torch.float32, device=dev)
    if rank:
        out["rank"] = torch.empty(n, dtype=torch.int64, device=dev)
    if token_set is not None:
        out["set"] = torch.empty(n, dtype=torch.float32, device=dev)
    for r in range(0, n, _ROW_SLICE):
        h, t = hidden[r : r + _ROW_SLICE], targets[r : r + _ROW_SLICE]
        rows = len(t)
        lse = torch.full((rows,), float("-inf"), dtype=torch.float32, device=dev)
        picked = torch.zeros(rows, dtype=torch.float32, device=dev)
        ent = torch.zeros(rows, dtype=torch.float32, device=dev)
        above = torch.zeros(rows, dtype=torch.int64, device=dev)
        in_set = torch.full((rows,), float("-inf"), dtype=torch.float32, device=dev)
        if rank:
            z = (h.float() * weight[t].float()).sum(-1) + (0 if bias is None else bias[t].float())
        for v in range(0, vocab, _VOCAB_SLICE):
            w = weight[v : v + _VOCAB_SLICE]
            logits = F.linear(h, w, None if bias is None else bias[v : v + _VOCAB_SLICE]).float()
            slice_lse = torch.logsumexp(logits, dim=-1)
            new_lse = torch.logaddexp(lse, slice_lse)
            if entropy:
                # an all -inf slice (or none yet) has weight 0 and adds nothing
                w_old, w_new = (lse - new_lse).exp(), (slice_lse - new_lse).exp()
                h_new = torch.where(w_new > 0, _entropy(logits, slice_lse), 0.0)
                ent = torch.where(w_old > 0, w_old * ent, 0.0) + w_new * h_new
                ent = ent + torch.special.entr(w_old) + torch.special.entr(w_new)
            lse = new_lse
            inside = (t >= v) & (t < v + len(w))
            col = (t - v).clamp(0, len(w) - 1)
            here = logits.gather(1, col[:, None]).squeeze(1)
            picked = torch.where(inside, here, picked)
            if rank:
                bigger = logits > z[:, None]
                bigger.scatter_(1, col[:, None], bigger.gather(1, col[:, None]) & ~inside[:, None])
                above += bigger.sum(-1)
            if token_set is not None:
                in_set = torch.logaddexp(in_set, _set_lse(logits, token_set[v : v + len(w)]))
        sl = slice(r, r + rows)
        out["logprob"][sl] = picked - lse
        if entropy:
            out["entropy"][sl] = ent
        if rank:
            out["rank"][sl] = 1 + above
        if token_set is not None:
            out["set"][sl] = in_set - lse
    return out
