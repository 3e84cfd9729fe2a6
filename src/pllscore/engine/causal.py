"""Chain-rule log-likelihood with a causal LM: token i is scored from the logits at i - 1."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from pllscore.engine.executor import Engine, Launch, into, run_batches, to_device, to_host
from pllscore.engine.heads import split_causal_lm
from pllscore.engine.prefix_tree import plan_trees, run_trees, supports_trees
from pllscore.engine.readout import Wants, pick_outputs, read_outputs

__all__ = ["CausalEngine"]


class CausalEngine(Engine):
    """Scores token sequences with one causal LM."""

    def __init__(self, model: Any, *, share_prefixes: bool = True, **engine: Any) -> None:
        super().__init__(model, **engine)
        # run shared prefixes once (prefix trees) where the model supports it exactly
        self.share_prefixes = share_prefixes
        self.parts = split_causal_lm(model)

    def run(
        self,
        sequences: Sequence[Sequence[int]],
        *,
        max_tokens: int,
        progress: bool | None = None,
        unit: str = "text",
    ) -> list[np.ndarray]:
        """Per sequence, ``log p(token_i | tokens_<i)`` in nats (float64) for i = 1 .. n-1. ``unit``: what a
        sequence is, as the progress bar counts them (``"window"`` when they are windows of longer texts)."""
        return self._run(sequences, None, max_tokens, progress, unit)

    def run_outputs(
        self,
        sequences: Sequence[Sequence[int]],
        wants: Wants,
        *,
        max_tokens: int,
        progress: bool | None = None,
        unit: str = "text",
    ) -> list[dict[str, np.ndarray]]:
        """Per sequence, ``logprob`` as :meth:`run` gives it and the outputs ``wants`` asks for (float64).

        ``entropy`` and ``rank`` are those of the distribution that scores token i (i = 1 .. n-1);
        ``set`` is log P(next token in the set) at every position 0 .. n-1, the last one included
        (the distribution after the whole sequence).
        """
        if not wants.any:
            runs = self.run(sequences, max_tokens=max_tokens, progress=progress, unit=unit)
            return [{"logprob": lp} for lp in runs]
        return self._run(sequences, wants, max_tokens, progress, unit)

    def _run(
        self,
        sequences: Sequence[Sequence[int]],
        wants: Wants | None,
        max_tokens: int,
        progress: bool | None,
        unit: str,
    ) -> list[Any]:
        seqs = [np.asarray(s, dtype=np.int64) for s in sequences]
        with torch.inference_mode(), self.running():
            trees = self.share_prefixes and self.padding == "pad" and supports_trees(self.model, seqs)
            rows = plan_trees(seqs, max_tokens) if trees else None
            if rows is not None:
                out = run_trees(self, seqs, rows, wants, max_tokens=max_tokens, progress=progress, unit=unit)
                # a NaN or inf in one text reaches the others of its tree row (0 * NaN in attention): run
                # the texts that got one again on their own, so that the error names the text it is in
                logprobs = [v if wants is None else v["logprob"] for v in out]
                if not logprobs or np.isfinite(np.concatenate(logprobs)).all():  # one test for all (the usual case)
                    return out
                redo = np.array([i for i, lp in enumerate(logprobs) if not np.isfinite(lp).all()], dtype=np.int64)
                if len(redo):
                    lengths = np.array([len(seqs[i]) for i in redo], dtype=np.int64)
                    launch = self._launcher(seqs, wants, out)
                    run_batches(lengths, max_tokens, lambda b: launch(redo[b]), progress=False, padding=self.padding)
                return out
            out = [None] * len(seqs)
            lengths = np.array([len(s) for s in seqs], dtype=np.int64)
            launch = self._launcher(seqs, wants, out)
            run_batches(
                lengths,
                max_tokens,
                launch,
                progress=progress,
                desc=f"{unit}s",
                unit=unit,
                padding=self.padding,
                keep=out,
            )
        return out

    def _launcher(self, seqs: list[np.ndarray], wants: Wants | None, out: list[Any]) -> Launch:
        """Launches padded batches of ``seqs`` (indices), each text's values filed at ``out[text]``."""
        return into(out, lambda batch: self._launch_batch([seqs[i] for i in batch], wants))

    def _launch_batch(self, seqs: list[np.ndarray], wants: Wants | None = None) -> Callable[[], list[Any]]:
        """One padded batch, launched: what it returns waits for the results and gives per sequence its
        log-probabilities, or with ``wants`` a dict of outputs."""
        lengths = np.array([len(s) for s in seqs], dtype=np.int64)
        ids = np.full((len(seqs), int(lengths.max())), self.pad_token_id, dtype=np.int64)
        for row, s in enumerate(seqs):
            ids[row, : len(s)] = s
        cols = np.arange(ids.shape[1])
        attention = (cols[None, :] < lengths[:, None]).astype(np.int64)
        # position j predicts token j + 1; with outputs the last position is read too (its ``set`` is the
        # distribution after the sequence): its target is a placeholder, its logprob, entropy, rank dropped
        n_reads = lengths - 1 if wants is None else lengths
        # the (row, position) of every read, row by row as a boolean mask would take them, found here: indexing a
        # GPU tensor by a boolean mask waits for the GPU (to count it), by positions it does not
        rows, at = np.nonzero(cols[None, :] < n_reads[:, None])
        shifted = np.concatenate([ids[:, 1:], np.zeros((len(ids), 1), dtype=np.int64)], axis=1)
        dev = self.device
        t_ids, t_att, t_rows, t_at, targets = (to_device(a, dev) for a in (ids, attention, rows, at, shifted[rows, at]))
        kw = {} if wants is None else wants.kwargs(dev)
        if self.parts is not None:
            decoder, head = self.parts
            # use_cache=False: a key/value cache would only copy every layer's keys and values
            hidden = decoder(input_ids=t_ids, attention_mask=t_att, use_cache=False)[0]
            on = hidden.device  # a model spread over devices: its last layer's
            got = read_outputs(head, hidden[t_rows.to(on), t_at.to(on)], targets, self.vocab_size, **kw)
        else:
            logits = self.model(input_ids=t_ids, attention_mask=t_att, use_cache=False).logits
            on = logits.device
            got = pick_outputs(logits[t_rows.to(on), t_at.to(on)], targets, **kw)
        pending = to_host(got)
        bounds = np.cumsum(n_reads)[:-1]

        def finish() -> list[Any]:
            flat = pending()
            if wants is None:
                return np.split(flat["logprob"], bounds)
            split = {k: np.split(v, bounds) for k, v in flat.items()}
            return [{k: (v[row] if k == "set" else v[row][:-1]) for k, v in split.items()} for row in range(len(seqs))]

        return finish
