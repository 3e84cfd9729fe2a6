"""Teacher-forced log-likelihood with an encoder-decoder LM: log P(labels | source), token by token.

Each item is a source (the ids the encoder reads) and labels (the ids the decoder must produce).
The decoder reads ``[decoder_start_token_id] + labels[:-1]`` and label i is scored from the logits
at position i, exactly as the model's own loss scores ``model(input_ids=source, labels=labels)``.

The encoder runs once per distinct source: items that share one (the hypotheses of an n-best list,
a minimal pair under one context, every text without a source) share its hidden states. Sources
and decoder inputs are batched by padded-token budget, right-padded with attention masks.

Where the model allows it exactly (:data:`STEM_SHARING`: T5's keys and values carry no position, its
relative positions are counted back from the cache's end), items with one source whose decoder inputs
share a prefix run it once (:mod:`pllscore.plan.stems`): the stem's keys and values are cached, and each
member continues from them, its stem placed at the end of a left-padded cache.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from pllscore.engine.executor import Engine, Finish, Launch, into, run_batches, to_device, to_host
from pllscore.engine.readout import Wants, pick_outputs
from pllscore.plan.stems import StemPlan, plan_stems

__all__ = ["HEAD_LAST", "STEM_SHARING", "Seq2SeqEngine", "decoder_start"]

#: architectures whose logits are the output embeddings' (``lm_head``) output, at most plus a bias that
#: broadcasts (BART's ``final_logits_bias``): the head's input can be cut to the positions read, so the
#: head runs on the labels only (not on padding) and no logits are copied; T5's scaling comes before it
HEAD_LAST = frozenset({"t5", "mt5", "umt5", "bart", "mbart", "marian", "pegasus", "m2m_100", "nllb-moe"})
#: architectures whose decoder continues exactly from a left-padded cache of a shared prefix (relative
#: positions, no position in the keys and values; the matrix proves it)
STEM_SHARING = frozenset({"t5", "mt5", "umt5"})
# share stems only when they save at least this share of the decoder's tokens (each stem is one more pass)
_MIN_SAVING = 0.1
# a decoder batch ends at an item shorter than this share of its longest (plan.batching.pack's min_fill)
MIN_FILL = 0.75


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


class Seq2SeqEngine(Engine):
    """Scores (source, labels) pairs of token ids with one encoder-decoder LM."""

    def __init__(self, model: Any, *, share_stems: bool = True, **engine: Any) -> None:
        super().__init__(model, **engine)
        self.start = decoder_start(model)
        self.encoder = model.get_encoder()
        head = model.get_output_embeddings() if getattr(model.config, "model_type", None) in HEAD_LAST else None
        self.head: torch.nn.Module | None = head if isinstance(head, torch.nn.Module) else None
        # the encoder's own output class, handed back to the model (NLLB-MoE's reads its router_logits field)
        self._encoded: Any = None
        arch = getattr(model.config, "model_type", None)
        self.share_stems = share_stems and self.padding == "pad" and arch in STEM_SHARING

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
        with torch.inference_mode(), self.running():
            states = self._encode([np.asarray(k, dtype=np.int64) for k in distinct], max_tokens)

            todo = np.arange(len(labs))
            plan = self._stem_plan(labs, src_of)
            if plan is not None:
                self._run_stems(plan, states, src_of, labs, wants, max_tokens, out, progress)
                todo = plan.alone

            launch = into(out, lambda b: self._decode([states[src_of[i]] for i in b], [labs[i] for i in b], wants))
            # a decoder row costs its labels and the cross-attention over its source
            lengths = np.array([len(labs[i]) + len(states[src_of[i]]) for i in todo], dtype=np.int64)
            self._run_texts(lengths, max_tokens, lambda b: launch(todo[b]), progress, out)
        return out

    def _run_texts(
        self, lengths: np.ndarray, max_tokens: int, launch: Launch, progress: bool | None, out: list[Any]
    ) -> None:
        """Run decoder rows of ``lengths`` (``launch`` files each text into ``out``), the bar counting texts."""
        run_batches(
            lengths, max_tokens, launch, progress=progress, desc="texts", unit="text", padding=self.padding,
            min_fill=MIN_FILL, keep=out,
        )  # fmt: skip

    def _stem_plan(self, labs: list[np.ndarray], src_of: np.ndarray) -> StemPlan | None:
        """The shared stems worth running once (None: none, or the model cannot)."""
        if not self.share_stems or len(labs) < 2:
            return None
        plan = plan_stems([self._inputs(x) for x in labs], src_of)
        return plan if plan.saved >= _MIN_SAVING * sum(len(x) for x in labs) else None

    def _inputs(self, labels: np.ndarray) -> np.ndarray:
        """What the decoder reads to predict ``labels``: the start token, then all labels but the last."""
        return np.concatenate([[self.start], labels[:-1]]).astype(np.int64)

    def _run_stems(
        self,
        plan: StemPlan,
        states: list[torch.Tensor],
        src_of: np.ndarray,
        labs: list[np.ndarray],
        wants: Wants | None,
        max_tokens: int,
        out: list[Any],
        progress: bool | None,
    ) -> None:
        """The grouped items of ``plan``: each stem once (its keys and values kept; its last position read for
        every member's next label), then each member's rest from it (the run that ``progress`` shows)."""
        group_src = [int(src_of[m[0]]) for m in plan.members]
        kept: list[Any] = [None] * len(plan.stems)
        firsts: list[Any] = [None] * len(plan.stems)

        def launch_stems(batch: np.ndarray) -> Finish:
            picks = []
            for g in batch:
                c, members = len(plan.stems[g]), plan.members[g]
                positions = np.concatenate([np.arange(c - 1), np.full(len(members), c - 1)])
                picks.append((positions, np.concatenate([plan.stems[g][1:], [labs[i][c - 1] for i in members]])))
            stems = [plan.stems[g] for g in batch]
            pending, caches = self._forward([states[group_src[g]] for g in batch], stems, picks, wants, keep=True)

            def finish() -> None:
                for row, (g, got) in enumerate(zip(batch, pending())):
                    firsts[g], kept[g] = got, caches[row]

            return finish

        lengths = np.array([len(s) + len(states[g]) for s, g in zip(plan.stems, group_src)], dtype=np.int64)
        run_batches(lengths, max_tokens, launch_stems, progress=False, padding=self.padding, min_fill=MIN_FILL)

        def stem_part(g: int, k: int) -> dict[str, np.ndarray]:
            """Member ``k`` of group ``g``: the stem's shared values, then its own at the stem's last position."""
            c = len(plan.stems[g])
            return {name: np.concatenate([v[: c - 1], v[c - 1 + k : c + k]]) for name, v in firsts[g].items()}

        items = []
        for g, members in enumerate(plan.members):
            for k, i in enumerate(members):
                if len(labs[i]) == len(plan.stems[g]):  # its whole input is the stem
                    out[int(i)] = stem_part(g, k)
                else:
                    items.append((g, k, int(i)))

        def launch_members(batch: np.ndarray) -> Finish:
            chosen = [items[j] for j in batch]
            c = [len(plan.stems[g]) for g, _, _ in chosen]
            suffixes = [self._inputs(labs[i])[n:] for (_, _, i), n in zip(chosen, c)]
            picks = [(np.arange(len(x)), labs[i][n:]) for x, (_, _, i), n in zip(suffixes, chosen, c)]
            past = [kept[g] for g, _, _ in chosen]
            pending, _ = self._forward([states[src_of[i]] for _, _, i in chosen], suffixes, picks, wants, past=past)

            def finish() -> None:
                for (g, k, i), values in zip(chosen, pending()):
                    own = stem_part(g, k)
                    out[i] = {name: np.concatenate([own[name], v]) for name, v in values.items()}

            return finish

        # a member's row is its suffix (what the decoder runs; its stem's cache is only attended to)
        cost = [len(labs[i]) - len(plan.stems[g]) for g, _, i in items]
        self._run_texts(np.array(cost, dtype=np.int64), max_tokens, launch_members, progress, out)

    def _encode(self, sources: list[np.ndarray], max_tokens: int) -> list[torch.Tensor]:
        """Per distinct source, the encoder's last hidden states (its length x hidden)."""
        states: list[Any] = [None] * len(sources)

        def launch(batch: np.ndarray) -> Callable[[], list[torch.Tensor]]:
            ids, mask = self._padded([sources[i] for i in batch])
            got = self.encoder(input_ids=ids, attention_mask=mask)
            self._encoded, hidden = type(got), got.last_hidden_state
            # the states stay on the device: nothing to wait for
            return lambda: [hidden[row, : len(sources[i])] for row, i in enumerate(batch)]

        lengths = np.array([len(s) for s in sources], dtype=np.int64)
        run_batches(lengths, max_tokens, into(states, launch), progress=False, padding=self.padding)
        return states

    def _padded(self, seqs: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded ids and their attention mask, on the device."""
        lengths = np.array([len(s) for s in seqs], dtype=np.int64)
        ids = np.full((len(seqs), int(lengths.max())), self.pad_token_id, dtype=np.int64)
        for row, s in enumerate(seqs):
            ids[row, : len(s)] = s
        mask = (np.arange(ids.shape[1])[None, :] < lengths[:, None]).astype(np.int64)
        return to_device(ids, self.device), to_device(mask, self.device)

    def _decode(
        self, states: list[torch.Tensor], labels: list[np.ndarray], wants: Wants | None
    ) -> Callable[[], list[dict[str, np.ndarray]]]:
        """One batch launched: the decoder over each item's labels, given its source's hidden states."""
        picks = [(np.arange(len(x)), x) for x in labels]
        return self._forward(states, [self._inputs(x) for x in labels], picks, wants)[0]

    def _forward(
        self,
        states: list[torch.Tensor],
        inputs: list[np.ndarray],
        picks: list[tuple[np.ndarray, np.ndarray]],
        wants: Wants | None,
        *,
        keep: bool = False,
        past: list[Any] | None = None,
    ) -> tuple[Callable[[], list[dict[str, np.ndarray]]], list[Any]]:
        """One batch launched: a function that waits for, per row, the outputs read at its ``picks`` (positions
        of its ``inputs``, a position may repeat, and the target read there).

        ``keep``: also return per row the decoder's keys and values at its positions (one (keys, values)
        pair per layer); ``past``: per row such keys and values, which the row's inputs continue.
        """
        width = max(len(s) for s in states)
        hidden = states[0].new_zeros((len(states), width, states[0].shape[-1]))
        enc_mask = torch.zeros((len(states), width), dtype=torch.long, device=self.device)
        for row, s in enumerate(states):
            hidden[row, : len(s)] = s
            enc_mask[row, : len(s)] = 1
        dec_ids, dec_mask = self._padded(inputs)
        width = dec_ids.shape[1]
        flat = np.concatenate([row * width + positions for row, (positions, _) in enumerate(picks)])
        reads = to_device(flat, self.device)
        targets = to_device(np.concatenate([t for _, t in picks]).astype(np.int64), self.device)
        extra: dict[str, Any] = {}
        if past is not None:
            cache, stem_mask = _left_padded_cache(past)
            extra = {_cache_arg(): cache, "use_cache": True}
            dec_mask = torch.cat([stem_mask, dec_mask], dim=1)
        cut = None
        if self.head is not None:  # the head's input cut to the rows read
            cut = self.head.register_forward_pre_hook(
                lambda m, a: (a[0].reshape(-1, a[0].shape[-1])[reads.to(a[0].device)], *a[1:])
            )
        try:
            got_model = self.model(
                encoder_outputs=self._encoded(last_hidden_state=hidden),
                attention_mask=enc_mask,
                decoder_input_ids=dec_ids,
                decoder_attention_mask=dec_mask,
                **(extra or {"use_cache": keep}),
            )
        finally:
            if cut is not None:
                cut.remove()
        logits = got_model.logits
        if cut is None:
            logits = logits.reshape(-1, logits.shape[-1])[reads.to(logits.device)]
        kw = {} if wants is None else wants.kwargs(self.device)
        got = pick_outputs(logits[:, : self.vocab_size], targets, **kw)
        pending = to_host(got)
        bounds = np.cumsum([len(p) for p, _ in picks])[:-1]

        def rows() -> list[dict[str, np.ndarray]]:
            split = {k: np.split(v, bounds) for k, v in pending().items()}
            return [{k: v[row] for k, v in split.items()} for row in range(len(inputs))]

        caches = _rows_of_cache(getattr(got_model, _cache_arg()), [len(x) for x in inputs]) if keep else []
        return rows, caches


@functools.cache
def _cache_arg() -> str:
    """The keyword (and output field) of the decoder's cache: ``cache`` in transformers >= 5.x, else
    ``past_key_values``."""
    import inspect

    from transformers import T5ForConditionalGeneration

    return "cache" if "cache" in inspect.signature(T5ForConditionalGeneration.forward).parameters else "past_key_values"


def _rows_of_cache(cache: Any, lengths: list[int]) -> list[list[tuple[torch.Tensor, torch.Tensor]]]:
    """Per row of a right-padded batch, the self-attention keys and values of its ``lengths[row]`` positions."""
    own = cache.self_attention_cache
    layers = [(layer.keys, layer.values) for layer in own.layers]
    return [[(k[row, :, :n].clone(), v[row, :, :n].clone()) for k, v in layers] for row, n in enumerate(lengths)]


def _left_padded_cache(rows: list[list[tuple[torch.Tensor, torch.Tensor]]]) -> tuple[Any, torch.Tensor]:
    """An encoder-decoder cache of the rows' keys and values, each row's at the end (zeros and mask 0 before
    it), the cross-attention left to compute; and the rows' attention mask over it."""
    from transformers.cache_utils import DynamicCache, EncoderDecoderCache

    width = max(k.shape[1] for k, _ in (r[0] for r in rows))
    mask = torch.zeros((len(rows), width), dtype=torch.long, device=rows[0][0][0].device)
    layers = []
    for layer in range(len(rows[0])):
        k0 = rows[0][layer][0]
        keys = k0.new_zeros((len(rows), k0.shape[0], width, k0.shape[2]))
        values = rows[0][layer][1].new_zeros((len(rows), k0.shape[0], width, rows[0][layer][1].shape[2]))
        for row, r in enumerate(rows):
            k, v = r[layer]
            keys[row, :, width - k.shape[1] :] = k
            values[row, :, width - v.shape[1] :] = v
            mask[row, width - k.shape[1] :] = 1
        layers.append((keys, values))
    return EncoderDecoderCache(DynamicCache(layers), DynamicCache()), mask
