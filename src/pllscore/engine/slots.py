"""The distribution at a slot: batched next-token log-probabilities for predictions.

Each read is a token sequence and a position: a masked LM's copy of a text with masks at its slot
(some filled with a word's first tokens), read at the first mask still open; a causal LM's context
and word prefix, read at its last token (the distribution of the next one). Per read it returns the
best tokens of a class (a boolean mask over the vocabulary, :mod:`pllscore.plan.word_classes`), and
on request log P(E) (the next token is in the end-of-word set, :mod:`pllscore.scoring.bow`) and the
entropy. The selection runs where the model runs: only the chosen tokens come back to the host.
Log-probabilities are computed as the scores' readout computes them (a target's logit minus the
log-sum-exp, in float32), so a word's numbers are those ``score()`` gives it.

A causal LM's reads of one text share its context, and the prefixes of a search share their first
tokens: where the model runs prefix trees exactly (:mod:`pllscore.engine.prefix_tree`, as ``score``
does), a batch's reads are packed into tree rows, so each distinct prefix runs once (the context once
per text and batch, not once per read), and each read is its last node's distribution.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from pllscore.engine.executor import Engine, into, precision, run_batches, to_device, to_host
from pllscore.engine.heads import split_causal_lm, split_masked_lm
from pllscore.engine.last_layer import TargetRowsLastLayer
from pllscore.engine.prefix_tree import ROW_CAPACITY, plan_trees, supports_trees, tree_inputs
from pllscore.plan.prefixes import TreeRow

__all__ = ["Read", "SlotEngine", "Slotted"]


@dataclass(frozen=True)
class Read:
    """One read: ``ids`` read at ``position``; the ``top`` best tokens of class ``allowed`` (None: any
    token) come back, with log P(E) when ``end`` and the entropy when ``entropy``."""

    ids: Sequence[int]
    position: int
    allowed: str | None
    top: int
    end: bool = False
    entropy: bool = False


@dataclass(frozen=True)
class Slotted:
    """What one read gives: token ids and log-probabilities (best first), log P(E) and entropy (NaN
    unless asked)."""

    ids: np.ndarray
    logprobs: np.ndarray
    end: float
    entropy: float


class SlotEngine(Engine):
    """Reads the distribution at given positions of token sequences, with a masked or a causal LM."""

    def __init__(
        self,
        model: Any,
        *,
        causal: bool,
        classes: dict[str, np.ndarray],
        ends: np.ndarray | None,
        share_prefixes: bool = True,
        **engine: Any,
    ) -> None:
        super().__init__(model, **engine)
        self.causal = causal
        self.share_prefixes = share_prefixes
        self.parts = split_causal_lm(model) if causal else split_masked_lm(model)
        self.last_layer = None
        if not causal and self.parts is not None:
            self.last_layer = TargetRowsLastLayer.for_encoder(self.parts[0])
        self._classes = {name: torch.as_tensor(mask) for name, mask in classes.items()}
        self._ends = None if ends is None else torch.as_tensor(ends)
        self._on: dict[tuple[str, torch.device], torch.Tensor] = {}

    def read(self, reads: Sequence[Read], *, max_tokens: int) -> list[Slotted]:
        """Each read's :class:`Slotted`, in order, in batches under ``max_tokens`` padded tokens."""
        out: list[Any] = [None] * len(reads)
        lengths = np.array([len(r.ids) for r in reads], dtype=np.int64)
        with torch.inference_mode(), precision(self.device, self.autocast):
            rows = self._trees(reads, max_tokens)
            if rows is not None:
                trees = rows
                sizes = np.array([r.size for r in trees], dtype=np.int64)
                run_batches(
                    sizes, max_tokens, lambda b: self._launch_rows(reads, [trees[i] for i in b], out), progress=False
                )
                return out
            launch = into(out, lambda batch: self._launch([reads[i] for i in batch]))
            run_batches(lengths, max_tokens, launch, progress=False, padding=self.padding)
        return out

    def _trees(self, reads: Sequence[Read], max_tokens: int) -> list[TreeRow] | None:
        """A causal LM's reads packed into rows of prefix trees, or None where they run plainly."""
        if not (self.causal and self.share_prefixes and self.padding == "pad" and reads):
            return None
        seqs = [np.asarray(r.ids, dtype=np.int64) for r in reads]
        if not supports_trees(self.model, seqs):
            return None
        # a row as wide as a long context and the prefixes after it, so that they still share it
        longest = max(len(s) for s in seqs)
        return plan_trees(seqs, max_tokens, max(ROW_CAPACITY, 2 * longest))

    def _launch_rows(self, reads: Sequence[Read], rows: list[TreeRow], out: list[Any]) -> Callable[[], None]:
        """Launch tree ``rows``: each read is the distribution after its last node (its sequence's last
        position); finishing files its :class:`Slotted` at ``out[read]``."""
        items = np.concatenate([r.items for r in rows])
        rb = np.concatenate([np.full(len(r.items), b, dtype=np.int64) for b, r in enumerate(rows)])
        node = np.array([path[-1] for r in rows for path in r.paths], dtype=np.int64)
        t_ids, t_pos, mask = tree_inputs(self, rows)
        t_rb, t_node = to_device(rb, self.device), to_device(node, self.device)
        if self.parts is None:
            logits = self.model(input_ids=t_ids, attention_mask=mask, position_ids=t_pos, use_cache=False).logits
            logits = logits[t_rb.to(logits.device), t_node.to(logits.device)]
        else:
            decoder, head = self.parts
            states = decoder(input_ids=t_ids, attention_mask=mask, position_ids=t_pos, use_cache=False)[0]
            logits = head(states[t_rb.to(states.device), t_node.to(states.device)])
        logits = logits.float()[:, : self.vocab_size]
        picked = [reads[i] for i in items]
        lp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
        pending = self._outputs(lp, picked)
        nan = to_host({"nan": torch.isnan(lp).any(dim=-1)})

        def finish() -> None:
            got = pending()
            # a NaN or inf in one text reaches the others of its tree row (0 * NaN in attention): the reads
            # that got a NaN run again on their own
            bad = np.flatnonzero(nan()["nan"]).tolist()
            if bad:
                again = self._launch([picked[j] for j in bad])()
                for j, g in zip(bad, again):
                    got[j] = g
            for i, g in zip(items, got):
                out[i] = g

        return finish

    def _mask(self, name: str, device: torch.device) -> torch.Tensor:
        key = (name, device)
        if key not in self._on:
            mask = self._ends if name == "\0ends" else self._classes[name]
            self._on[key] = to_device(mask, device)  # type: ignore[arg-type]
        return self._on[key]

    def _logprobs(self, ids: torch.Tensor, attention: torch.Tensor, rows: torch.Tensor, pos: torch.Tensor) -> Any:
        """Log-probabilities (float32) over the vocabulary at ``(rows, pos)``."""
        if self.parts is None:
            logits = self.model(input_ids=ids, attention_mask=attention).logits
            logits = logits[rows.to(logits.device), pos.to(logits.device)]
        else:
            body, head = self.parts
            if self.last_layer is not None:
                hidden = self.last_layer(ids, attention, rows, pos)
            else:
                kw = {"use_cache": False} if self.causal else {}
                states = body(input_ids=ids, attention_mask=attention, **kw)[0]
                hidden = states[rows.to(states.device), pos.to(states.device)]
            logits = head(hidden)
        logits = logits.float()[:, : self.vocab_size]
        return logits - torch.logsumexp(logits, dim=-1, keepdim=True)

    def _launch(self, reads: list[Read]) -> Callable[[], list[Slotted]]:
        lengths = np.array([len(r.ids) for r in reads], dtype=np.int64)
        ids = np.full((len(reads), int(lengths.max())), self.pad_token_id, dtype=np.int64)
        for row, r in enumerate(reads):
            ids[row, : len(r.ids)] = r.ids
        attention = (np.arange(ids.shape[1])[None, :] < lengths[:, None]).astype(np.int64)
        dev = self.device
        rows = np.arange(len(reads), dtype=np.int64)
        pos = np.array([r.position for r in reads], dtype=np.int64)
        t_ids, t_att, t_rows, t_pos = (to_device(a, dev) for a in (ids, attention, rows, pos))
        return self._outputs(self._logprobs(t_ids, t_att, t_rows, t_pos), reads)

    def _outputs(self, lp: torch.Tensor, reads: list[Read]) -> Callable[[], list[Slotted]]:
        """From the log-probabilities of ``reads`` (a row each), launch what they ask for; the function
        returned waits for it."""
        best = self._select(lp, reads)
        got = {"top": best.indices, "values": best.values}
        if any(r.end for r in reads):
            got["end"] = torch.logsumexp(lp.masked_fill(~self._mask("\0ends", lp.device), float("-inf")), dim=-1)
        if any(r.entropy for r in reads):
            got["entropy"] = -(lp.exp() * lp).nansum(dim=-1)
        pending = to_host(got)

        def finish() -> list[Slotted]:
            host = pending()
            return [_slotted(host, row, r) for row, r in enumerate(reads)]

        return finish

    def _select(self, lp: torch.Tensor, reads: list[Read]) -> Any:
        """Per row, the ids of its ``top`` best tokens of its class (the batch's largest ``top``; a row's
        tokens outside its class come last, at -inf, and are dropped on the host)."""
        top = min(max(r.top for r in reads), lp.shape[1])
        names = sorted({r.allowed for r in reads if r.allowed is not None})
        if names:
            allowed = torch.ones_like(lp, dtype=torch.bool)
            for name in names:
                rows = torch.as_tensor([i for i, r in enumerate(reads) if r.allowed == name], device=lp.device)
                allowed[rows] = self._mask(name, lp.device)[None, : lp.shape[1]]
            lp = lp.masked_fill(~allowed, float("-inf"))
        return torch.topk(lp, top, dim=-1)


def _slotted(host: dict[str, np.ndarray], row: int, read: Read) -> Slotted:
    ids, values = host["top"][row][: read.top], host["values"][row][: read.top].astype(np.float64)
    if read.allowed is not None:
        keep = np.isfinite(values)  # a class smaller than the batch's top: its -inf tail is not in it
        ids, values = ids[keep], values[keep]
    # ties in the order pllscore.plan.search.best_tokens gives them (by id)
    order = np.lexsort((ids, -values))
    end = float(host["end"][row]) if read.end else float("nan")
    entropy = float(host["entropy"][row]) if read.entropy else float("nan")
    return Slotted(ids[order], values[order], end, entropy)
