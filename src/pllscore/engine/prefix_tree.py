"""Each distinct prefix once: a causal LM run over rows of prefix trees with a tree attention mask.

:func:`pllscore.plan.prefixes.pack_trees` packs the sequences into rows of tries; here each row
runs in one pass of the decoder, with a 4D attention mask (a node attends to its ancestors and
itself) and position ids equal to the node depths. A node's hidden state is then what the plain
pass computes at the same position of any sequence through it, up to float rounding (exact to
~1e-6 nats; tests check 1e-5). The LM head reads each node once, from its parent's hidden state.

This needs a model that takes a custom 4D mask and position ids as given: the families in
:data:`TREE_TYPES` with sdpa or eager attention (tested against the plain pass). Sequences longer
than a sliding attention window would see differently in a tree, so such batches run plainly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from pllscore.engine.executor import Finish, run_batches, to_device, to_host
from pllscore.engine.readout import Wants, pick_outputs, read_outputs
from pllscore.plan.prefixes import TreeRow, ancestor_mask, pack_trees

__all__ = ["TREE_TYPES", "plan_trees", "run_trees", "supports_trees", "tree_inputs"]

# families whose decoder uses a given 4D mask and position ids as is (transformers' masking_utils):
# exactly those tests/engine/test_architectures.py proves equal to the plain pass (BLOOM's ALiBi and
# Mamba's scan are not; nor Falcon with ALiBi)
TREE_TYPES = {
    *("gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma3_text", "falcon", "gpt_neox", "gptj", "olmo2"),
    *("gemma2", "opt", "phi", "phi3", "stablelm", "starcoder2", "xglm"),
}
# nodes per row: attention costs rows x capacity^2, so rows are kept short (a whole batch still
# holds max_tokens nodes), and longer rows share little more: over all of BLiMP (SmolLM2's
# tokenizer) rows of 128, 192 and 256 nodes hold 0.604, 0.597 and 0.593 of the tokens (BENCHMARKS.md)
ROW_CAPACITY = 192
# below this saving (nodes vs tokens) the plain pass runs: its causal mask needs no mask tensor,
# which matters for long texts on a GPU (flash attention takes no custom mask)
MIN_SAVING = 0.1


def supports_trees(model: Any, sequences: Sequence[np.ndarray]) -> bool:
    """Whether ``model`` can run ``sequences`` as prefix trees exactly."""
    config = model.config
    if getattr(config, "model_type", None) not in TREE_TYPES:
        return False
    if getattr(config, "_attn_implementation", None) not in ("sdpa", "eager") or getattr(config, "alibi", False):
        return False
    window = getattr(config, "sliding_window", None)
    longest = max((len(s) for s in sequences), default=0)
    return not (window and longest > window)


def plan_trees(seqs: list[np.ndarray], max_tokens: int, capacity: int = ROW_CAPACITY) -> list[TreeRow] | None:
    """Rows of prefix trees of at most ``capacity`` nodes for ``seqs``, or None when they would save less
    than :data:`MIN_SAVING`."""
    rows = pack_trees(seqs, max(1, min(capacity, max_tokens)))
    tokens = sum(len(s) for s in seqs)
    return rows if sum(r.size for r in rows) <= (1 - MIN_SAVING) * tokens else None


def run_trees(
    engine: Any,
    seqs: list[np.ndarray],
    rows: list[TreeRow],
    wants: Wants | None = None,
    *,
    max_tokens: int,
    progress: bool | None = None,
    unit: str = "text",
) -> list[Any]:
    """Per sequence what ``CausalEngine.run`` gives (``wants`` None) or ``CausalEngine.run_outputs`` gives
    (``unit``: what a sequence is, as the progress bar counts them)."""
    out: list[Any] = [None] * len(seqs)

    def launch(batch: np.ndarray) -> Finish:
        picked = [rows[r] for r in batch]
        pending = _run_rows(engine, picked, wants)
        return lambda: _file(out, picked, pending(), wants is None)

    run_batches(
        np.array([r.size for r in rows], dtype=np.int64),
        max_tokens,
        launch,
        progress=progress,
        desc=f"{unit}s",
        unit=unit,
        counts=np.array([len(r.items) for r in rows], dtype=np.int64),
        keep=out,
    )
    return out


def _file(out: list[Any], rows: list[TreeRow], per_node: list[dict[str, np.ndarray]], logprob_only: bool) -> None:
    """Each item of ``rows`` its values, at ``out[item]``, from its row's values per node."""
    for row, nodes in zip(rows, per_node):
        if logprob_only:
            logprob = nodes["logprob"]
            for item, path in zip(row.items, row.paths):
                out[item] = logprob[path[1:]]
            continue
        for item, path in zip(row.items, row.paths):
            # a node's logprob, entropy and rank score it (read at its parent); its ``set`` is read at
            # itself: the distribution after it, for every position of the sequence, the last included
            out[item] = {k: (v[path] if k == "set" else v[path[1:]]) for k, v in nodes.items()}


def tree_inputs(engine: Any, rows: list[TreeRow]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The decoder's inputs for ``rows`` on ``engine``'s device: token ids, position ids (the node depths)
    and the 4D attention mask (a node sees its ancestors and itself), padded to the longest row."""
    width = max(r.size for r in rows)
    ids = np.full((len(rows), width), engine.pad_token_id, dtype=np.int64)
    positions = np.zeros((len(rows), width), dtype=np.int64)
    # padding nodes see only themselves: no row of the mask is empty
    allowed = np.broadcast_to(np.eye(width, dtype=bool), (len(rows), width, width)).copy()
    for b, r in enumerate(rows):
        ids[b, : r.size] = r.tokens
        positions[b, : r.size] = r.depths
        allowed[b, : r.size, : r.size] = ancestor_mask(r.parents)
    dev = engine.device
    t_ids, t_pos, mask = (to_device(a, dev) for a in (ids, positions, allowed))
    mask = mask[:, None]
    if engine.model.config._attn_implementation == "eager":
        # eager attention adds the mask to the scores, in the weights' type (float32 under autocast)
        kind = next(engine.model.parameters()).dtype
        mask = torch.zeros(mask.shape, dtype=kind, device=dev).masked_fill_(~mask, torch.finfo(kind).min)
    return t_ids, t_pos, mask


def _run_rows(engine: Any, rows: list[TreeRow], wants: Wants | None) -> Callable[[], list[dict[str, np.ndarray]]]:
    """Launch ``rows``; the function returned waits for their results and gives per row and node: the
    log-probability (and outputs ``wants`` asks for) of the node given its ancestors (NaN for roots); ``set``
    at every node, read from the node's own hidden state."""
    t_ids, t_pos, mask = tree_inputs(engine, rows)
    # the reads: each node from its parent's hidden state (its own token the target); with a token set,
    # each node without children from its own state too (a placeholder target), for the ``set`` after it
    want_set = wants is not None and wants.token_set is not None
    reads = [_reads(r, want_set) for r in rows]
    rb = np.concatenate([np.full(len(nodes), b, dtype=np.int64) for b, (nodes, _) in enumerate(reads)])
    node = np.concatenate([nodes for nodes, _ in reads])
    at = np.concatenate([at for _, at in reads])

    dev = engine.device
    t_rb, t_node, t_at = (to_device(a, dev) for a in (rb, node, at))
    targets = t_ids[t_rb, t_node]
    kw = {} if wants is None else wants.kwargs(dev)
    if engine.parts is not None:
        decoder, head = engine.parts
        hidden = decoder(input_ids=t_ids, attention_mask=mask, position_ids=t_pos, use_cache=False)[0]
        on = hidden.device  # a model spread over devices: its last layer's
        got = read_outputs(head, hidden[t_rb.to(on), t_at.to(on)], targets, engine.vocab_size, **kw)
    else:
        logits = engine.model(input_ids=t_ids, attention_mask=mask, position_ids=t_pos, use_cache=False).logits
        on = logits.device
        got = pick_outputs(logits[t_rb.to(on), t_at.to(on)], targets, **kw)
    pending = to_host(got)
    return lambda: _per_node(rows, reads, pending())


def _per_node(
    rows: list[TreeRow], reads: list[tuple[np.ndarray, np.ndarray]], flat: dict[str, np.ndarray]
) -> list[dict[str, np.ndarray]]:
    """Per row and node its values, from the values of the reads of all rows in turn (``flat``)."""
    result = []
    start = 0
    for r, (nodes, where) in zip(rows, reads):
        stop = start + len(nodes)
        edge = where != nodes  # read at the parent: it scores the node
        per_node = {}
        for k, v in flat.items():
            values = np.full(r.size, np.nan)
            if k == "set":  # the distribution at ``where``, whichever target was read there
                values[where] = v[start:stop]
            else:
                values[nodes[edge]] = v[start:stop][edge]
            per_node[k] = values
        result.append(per_node)
        start = stop
    return result


def _reads(row: TreeRow, leaves: bool) -> tuple[np.ndarray, np.ndarray]:
    """(target node, node whose hidden state is read) of each read of ``row``: every non-root node from
    its parent, and with ``leaves`` every node without children from itself."""
    child = np.flatnonzero(row.parents >= 0)
    nodes, at = child, row.parents[child]
    if leaves:
        has_child = np.zeros(row.size, dtype=bool)
        has_child[row.parents[child]] = True
        leaf = np.flatnonzero(~has_child)
        nodes, at = np.concatenate([nodes, leaf]), np.concatenate([at, leaf])
    return nodes.astype(np.int64), at.astype(np.int64)
