"""Run a :class:`~pllscore.plan.masks.MaskPlan` through a masked LM.

Each batch of masked copies goes through the encoder once; the LM head, and for
BERT-style encoders the last layer too (:mod:`pllscore.engine.last_layer`), run only at
the positions where a score is read.

``read_offset`` says where a masked token's distribution is read: 0 at its own position (a
masked LM), 1 one position before it (masked next-token prediction, GPT-BERT's: the output at
``i - 1`` predicts the masked token ``i``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from pllscore.engine.executor import Engine, Finish, run_batches, to_device, to_host
from pllscore.engine.heads import split_masked_lm
from pllscore.engine.last_layer import TargetRowsLastLayer
from pllscore.engine.readout import Wants, pick_logprobs, pick_outputs, read_logprobs, read_outputs
from pllscore.plan.masks import MaskPlan

__all__ = ["MaskedEngine"]


class MaskedEngine(Engine):
    """Scores the reads of mask plans with one masked LM."""

    def __init__(self, model: Any, *, mask_token_id: int, read_offset: int = 0, **engine: Any) -> None:
        super().__init__(model, **engine)
        self.mask_token_id = mask_token_id
        self.read_offset = read_offset
        self.parts = split_masked_lm(model)
        self.last_layer = TargetRowsLastLayer.for_encoder(self.parts[0]) if self.parts is not None else None

    def run(self, plan: MaskPlan, *, max_tokens: int, progress: bool | None = None) -> np.ndarray:
        """Log-probability (nats, float64) of every read of ``plan``, in read order."""
        return self.run_outputs(plan, Wants(), max_tokens=max_tokens, progress=progress)["logprob"]

    def run_outputs(
        self, plan: MaskPlan, wants: Wants, *, max_tokens: int, progress: bool | None = None
    ) -> dict[str, np.ndarray]:
        """Per read of ``plan`` (read order), ``logprob`` and what ``wants`` asks for (entropy and rank of
        the distribution the target is read from), float64."""
        names = ["logprob"] + [n for n in ("entropy", "rank") if getattr(wants, n)]
        out = {n: np.full(plan.n_reads, np.nan, dtype=np.float64) for n in names}
        seqs = [np.asarray(s, dtype=np.int64) for s in plan.sequences]

        def launch(copies: np.ndarray) -> Finish:
            reads, pending = self._launch_batch(plan, seqs, copies, wants)

            def finish() -> None:
                got = pending()
                for n in names:
                    out[n][reads] = got[n]

            return finish

        with torch.inference_mode(), self.running():
            lengths = plan.copy_lengths()
            run_batches(
                lengths, max_tokens, launch, progress=progress, desc="masked copies", padding=self.padding, keep=out
            )
        return out

    def _launch_batch(
        self, plan: MaskPlan, seqs: list[np.ndarray], copies: np.ndarray, wants: Wants
    ) -> tuple[np.ndarray, Callable[[], dict[str, np.ndarray]]]:
        """One batch of masked copies, launched: its reads, and a function that waits for their outputs."""
        lengths = np.array([len(seqs[plan.copy_seq[c]]) for c in copies], dtype=np.int64)
        ids = np.full((len(copies), int(lengths.max())), self.pad_token_id, dtype=np.int64)
        for row, c in enumerate(copies):
            ids[row, : lengths[row]] = seqs[plan.copy_seq[c]]
        starts, stops = plan.read_ptr[copies], plan.read_ptr[copies + 1]
        reads = np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)])
        rows = np.repeat(np.arange(len(copies)), stops - starts)
        targets = ids[rows, plan.read_pos[reads]]  # the original tokens, read before masking
        pos = plan.read_pos[reads] - self.read_offset  # where each target's distribution is
        if len(pos) and pos.min() < 0:  # a negative index would read the copy's last position
            raise ValueError("a target at position 0 has no position before it to be read from")
        for row, c in enumerate(copies):
            for a, b in plan.copy_runs[c]:
                ids[row, a:b] = self.mask_token_id
        attention = (np.arange(ids.shape[1])[None, :] < lengths[:, None]).astype(np.int64)

        dev = self.device
        t_ids, t_att, t_rows, t_pos, t_tgt = (to_device(a, dev) for a in (ids, attention, rows, pos, targets))
        if self.parts is not None:
            encoder, head = self.parts
            if self.last_layer is not None:
                at_reads = self.last_layer(t_ids, t_att, t_rows, t_pos)
            else:
                hidden = encoder(input_ids=t_ids, attention_mask=t_att)[0]
                on = hidden.device  # a model spread over devices: its last layer's
                at_reads = hidden[t_rows.to(on), t_pos.to(on)]
            if wants.any:
                got = read_outputs(head, at_reads, t_tgt, self.vocab_size, **wants.kwargs(dev))
            else:
                got = {"logprob": read_logprobs(head, at_reads, t_tgt, self.vocab_size)}
        else:
            logits = self.model(input_ids=t_ids, attention_mask=t_att).logits
            t_rows, t_pos = t_rows.to(logits.device), t_pos.to(logits.device)
            if wants.any:
                got = pick_outputs(logits[t_rows, t_pos], t_tgt, **wants.kwargs(dev))
            else:
                got = {"logprob": pick_logprobs(logits[t_rows, t_pos], t_tgt)}
        return reads, to_host(got)
