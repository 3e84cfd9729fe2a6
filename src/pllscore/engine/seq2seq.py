"""Teacher-forced log-likelihood with an encoder-decoder LM: log P(labels | source), token by token.

Each item is a source (the ids the encoder reads) and labels (the ids the decoder must produce).
The decoder reads ``[decoder_start_token_id] + labels[:-1]`` and label i is scored from the logits
at position i, exactly as the model's own loss scores ``model(input_ids=source, labels=labels)``.

The encoder runs once per distinct source: items that share one (the hypotheses of an n-best list,
a minimal pair under one context, every text without a source) share its hidden states. Sources
and decoder inputs are batched by padded-token budget, right-padded with attention masks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from pllscore.engine.executor import precision, run_batches
from pllscore.engine.padding import Batching
from pllscore.engine.readout import Wants, pick_outputs

__all__ = ["HEAD_LAST", "Seq2SeqEngine", "decoder_start"]

#: architectures whose logits are the output embeddings' (``lm_head``) output, at most plus a bias that
#: broadcasts (BART's ``final_logits_bias``): the head's input can be cut to the positions read, so the
#: head runs on the labels only (not on padding) and no logits are copied; T5's scaling comes before it
HEAD_LAST = frozenset({"t5", "mt5", "umt5", "bart", "mbart", "marian", "pegasus", "m2m_100", "nllb-moe"})


def decoder_start(model: Any) -> int:
    """The token the model's decoder starts from (``decoder_start_token_id``, else its BOS or pad token)."""
    config = model.config
    gen = getattr(model, "generation_config", None)
    for owner in (config, gen):
        for name in ("decoder_start_token_id", "bos_token_id", "pad_token_id"):
            value = getattr(owner, name, None) if owner is not None else None
            if isinstance(value, int):
                return value
    raise ValueError(f"{type(model).__name__} has no decoder_start_token_id")


class Seq2SeqEngine:
    """Scores (source, labels) pairs of token ids with one encoder-decoder LM."""

    def __init__(
        self,
        model: Any,
        *,
        pad_token_id: int,
        vocab_size: int,
        autocast: torch.dtype | None = None,
        padding: Batching = "pad",
    ) -> None:
        self.model = model
        self.padding = padding
        self.pad_token_id = pad_token_id
        self.vocab_size = vocab_size
        self.autocast = autocast
        self.start = decoder_start(model)
        self.encoder = model.get_encoder()
        head = model.get_output_embeddings() if getattr(model.config, "model_type", None) in HEAD_LAST else None
        self.head: torch.nn.Module | None = head if isinstance(head, torch.nn.Module) else None
        # the encoder's own output class, handed back to the model (NLLB-MoE's reads its router_logits field)
        self._encoded: Any = None

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def run(
        self,
        sources: Sequence[Sequence[int]],
        labels: Sequence[Sequence[int]],
        *,
        max_tokens: int,
        wants: Wants | None = None,
        progress: bool | None = None,
    ) -> list[dict[str, np.ndarray]]:
        """Per item, ``logprob`` (and the outputs ``wants`` asks for) of each label given the source (float64)."""
        keys = [tuple(int(t) for t in s) for s in sources]
        distinct = list(dict.fromkeys(keys))
        which = {k: j for j, k in enumerate(distinct)}
        src_of = np.array([which[k] for k in keys], dtype=np.int64)
        labs = [np.asarray(x, dtype=np.int64) for x in labels]
        out: list[Any] = [None] * len(labs)
        with torch.inference_mode(), precision(self.device, self.autocast):
            states = self._encode([np.asarray(k, dtype=np.int64) for k in distinct], max_tokens)

            def run_one(batch: np.ndarray) -> None:
                got = self._decode([states[src_of[i]] for i in batch], [labs[i] for i in batch], wants)
                for i, values in zip(batch, got):
                    out[i] = values

            # a decoder row costs its labels and the cross-attention over its source
            lengths = np.array([len(x) + len(states[src_of[i]]) for i, x in enumerate(labs)], dtype=np.int64)
            run_batches(
                lengths, max_tokens, run_one, progress=progress, desc="sentences", unit="text", padding=self.padding
            )
        return out

    def _encode(self, sources: list[np.ndarray], max_tokens: int) -> list[torch.Tensor]:
        """Per distinct source, the encoder's last hidden states (its length x hidden)."""
        states: list[Any] = [None] * len(sources)

        def run_one(batch: np.ndarray) -> None:
            ids, mask = self._padded([sources[i] for i in batch])
            got = self.encoder(input_ids=ids, attention_mask=mask)
            self._encoded, hidden = type(got), got.last_hidden_state
            for row, i in enumerate(batch):
                states[i] = hidden[row, : len(sources[i])]

        lengths = np.array([len(s) for s in sources], dtype=np.int64)
        run_batches(lengths, max_tokens, run_one, progress=False, padding=self.padding)
        return states

    def _padded(self, seqs: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded ids and their attention mask, on the device."""
        lengths = np.array([len(s) for s in seqs], dtype=np.int64)
        ids = np.full((len(seqs), int(lengths.max())), self.pad_token_id, dtype=np.int64)
        for row, s in enumerate(seqs):
            ids[row, : len(s)] = s
        mask = (np.arange(ids.shape[1])[None, :] < lengths[:, None]).astype(np.int64)
        return torch.from_numpy(ids).to(self.device), torch.from_numpy(mask).to(self.device)

    def _decode(
        self, states: list[torch.Tensor], labels: list[np.ndarray], wants: Wants | None
    ) -> list[dict[str, np.ndarray]]:
        """One batch: the decoder over each item's labels, given its source's hidden states."""
        width = max(len(s) for s in states)
        hidden = states[0].new_zeros((len(states), width, states[0].shape[-1]))
        enc_mask = torch.zeros((len(states), width), dtype=torch.long, device=self.device)
        for row, s in enumerate(states):
            hidden[row, : len(s)] = s
            enc_mask[row, : len(s)] = 1
        inputs = [np.concatenate([[self.start], x[:-1]]) for x in labels]
        dec_ids, dec_mask = self._padded(inputs)
        reads = dec_mask.bool()
        cut = None if self.head is None else self.head.register_forward_pre_hook(lambda m, a: (a[0][reads], *a[1:]))
        try:
            logits = self.model(
                encoder_outputs=self._encoded(last_hidden_state=hidden),
                attention_mask=enc_mask,
                decoder_input_ids=dec_ids,
                decoder_attention_mask=dec_mask,
                use_cache=False,
            ).logits
        finally:
            if cut is not None:
                cut.remove()
        if cut is None:
            logits = logits[reads]
        targets, _ = self._padded(labels)
        kw = {} if wants is None else wants.kwargs(self.device)
        got = pick_outputs(logits[:, : self.vocab_size], targets[reads], **kw)
        flat = {k: v.double().cpu().numpy() for k, v in got.items()}
        bounds = np.cumsum([len(x) for x in labels])[:-1]
        split = {k: np.split(v, bounds) for k, v in flat.items()}
        return [{k: v[row] for k, v in split.items()} for row in range(len(labels))]
