"""Whether padding changes a model's scores, decided once per model: the proven lists, else a probe.

The engines pad the texts (or masked copies) of a batch to its longest and pass an attention mask.
For most architectures the padded positions then change nothing, but not for all: ConvBERT's
span-based dynamic convolution and Nystromformer's convolution over values read padded positions,
and MobileBERT's trigram input reads the embedding of the token after the text, so a text's score
would depend on the longest text of its batch. Each model therefore runs in one of three batching
modes (:func:`pllscore.plan.batching.pack`):

- ``"pad"``: batches of any lengths, padded (an architecture in :data:`PADDED`, or one the probe passes);
- ``"equal"``: batches of equal-length items only, so nothing is padded (:data:`UNPADDED`, or the
  probe finds padding leaks but texts of one length batch exactly);
- ``"single"``: one item per forward pass (the probe finds even equal-length batches leak).

A model whose architecture is in neither list is probed at load (:func:`probe`: a short and a long
text alone, then padded together; three forward passes of under 70 tokens in all for a model that
passes). A model that cannot be scored exactly at all (not reproducible alone; Funnel's pooling;
Nystromformer's fixed-length landmarks) is refused with a one-line :class:`ModelError`. The lists
are exactly what ``tests/engine/test_architectures.py`` proves against the independent
token-by-token loop, with a random (not zero) padding embedding.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal

import torch

from pllscore.engine.executor import full_float32
from pllscore.engine.placement import input_device
from pllscore.errors import ModelError

__all__ = [
    "CONTENT_TOLERANCE",
    "PADDED",
    "PROBE_TEXTS",
    "PROBE_TOLERANCE",
    "probe_read",
    "UNPADDED",
    "Batching",
    "batching_for",
    "probe",
]

Batching = Literal["pad", "equal", "single"]

#: architectures (config ``model_type``) whose padded batches equal one text per pass (the matrix proves it)
PADDED = frozenset(
    {
        # masked LMs
        *("bert", "roberta", "xlm-roberta", "camembert", "electra", "albert", "distilbert", "deberta"),
        *("deberta-v2", "mpnet", "ernie", "roformer", "megatron-bert", "data2vec-text", "modernbert"),
        *("squeezebert", "big_bird", "longformer"),
        # causal LMs
        *("gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "gpt_neox", "phi", "phi3"),
        *("falcon", "opt", "bloom", "gptj", "olmo2", "starcoder2", "stablelm", "mamba", "xglm"),
    }
)
#: architectures exact only without padding (equal-length batches), and why
UNPADDED = {
    "convbert": "its span-based dynamic convolution reads padded positions",
    "nystromformer": "its convolution over the attention values reads padded positions",
    "mobilebert": "its trigram input reads the embedding of the token after the text, a padding token when padded",
}
#: the largest difference (nats, any position) between a text alone and padded that the probe lets pass;
#: float32 rounding between batch shapes is ~1e-7 on the tiny models, up to 2e-5 on SmolLM2 and Gemma 3 (BENCHMARKS.md)
PROBE_TOLERANCE = 1e-4
#: the same for weights in bfloat16 or float16, whose rounding between batch shapes is ~1e-2 (a leak is still
#: caught by :data:`CONTENT_TOLERANCE`: same shapes, so bit-identical without one)
REDUCED_TOLERANCE = 0.1
#: the largest difference the probe lets masked-out tokens make (same batch shape: a leak-free model
#: gives bit-identical numbers; the matrix's leakers differ by 3e-4 and more)
CONTENT_TOLERANCE = 1e-7

#: the probe's texts, short and long, encoded by the model's tokenizer with its special tokens
PROBE_TEXTS = ("The cat sat.", "She went to the store yesterday, and the old cat sat on the warm mat by the door!")


def _refusal(config: Any) -> str | None:
    """Why a model of this config cannot be scored exactly at all (None: it can)."""
    kind = getattr(config, "model_type", None)
    if kind == "funnel":
        return (
            "Funnel Transformer pools the sequence, so padded batches change its scores; pllscore cannot score "
            "with it exactly: use a BERT, RoBERTa, ELECTRA or similar masked LM"
        )
    if kind == "nystromformer":
        landmarks, length = getattr(config, "num_landmarks", None), getattr(config, "segment_means_seq_len", None)
        if landmarks != length:
            return (
                f"nystromformer with num_landmarks={landmarks} below segment_means_seq_len={length} averages its "
                f"landmarks over a fixed {length}-token input, so every text must be padded to {length} and the "
                "padding enters its scores"
            )
    return None


def batching_for(model: Any, tokenizer: Any, pad_id: int, *, note: Callable[[str], None] | None = None) -> Batching:
    """How ``model`` must be batched to score exactly: the proven lists by architecture, else :func:`probe`.

    Refuses (:class:`ModelError`) a model that cannot be scored exactly; ``note`` (default: one line on
    stderr) says why a model runs without padding.
    """
    config = model.config
    arch = getattr(config, "model_type", None) or type(model).__name__
    refusal = _refusal(config)
    if refusal is not None:
        raise ModelError(f"{type(model).__name__} ({arch}) cannot be scored exactly: {refusal}")
    if arch in PADDED:
        return "pad"
    say = note or _stderr
    if arch in UNPADDED:
        say(f"{arch} runs without padding (batches of equal length, slower): {UNPADDED[arch]}")
        return "equal"
    short, long = (tokenizer(text)["input_ids"] for text in PROBE_TEXTS)
    reduced = next(model.parameters()).dtype in (torch.bfloat16, torch.float16)
    try:
        mode, why = probe(model, short, long, pad_id, tolerance=REDUCED_TOLERANCE if reduced else PROBE_TOLERANCE)
    except (RuntimeError, TypeError, ValueError, IndexError) as e:  # it would fail to score the same way
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ModelError(f"{type(model).__name__} ({arch}) failed a padded forward pass at load: {first}") from e
    if mode is None:
        raise ModelError(f"{type(model).__name__} ({arch}) cannot be scored exactly: {why}")
    if mode != "pad":
        how = "batches of equal length" if mode == "equal" else "one text per forward pass"
        say(f"{arch} is not on pllscore's proven list and runs without padding ({how}, slower): {why}")
    return mode


def _stderr(message: str) -> None:
    print(f"pllscore: note: {message}", file=sys.stderr)


def probe(
    model: Any, short: Sequence[int], long: Sequence[int], pad_id: int, *, tolerance: float = PROBE_TOLERANCE
) -> tuple[Batching | None, str]:
    """The batching mode under which ``model`` scores ``short`` and ``long`` (token ids) as it does alone.

    Compares, at every real position, the log-softmax read at the position's own token (any function
    of the hidden states would do). Three passes for a model that passes: each text alone, then one
    batch of ``long``, ``short`` padded, and ``short`` with other tokens (``long``'s) in its masked-out
    positions. Padding passes when the padded rows are within ``tolerance`` of alone (float rounding
    between batch shapes) and the masked-out tokens change nothing beyond :data:`CONTENT_TOLERANCE`
    (same shapes, so a leak-free model gives the same numbers to the last bit). Otherwise ``long``
    is batched with another text of its length (equal-length batches) and run alone again (a model
    whose two identical passes differ is refused). Returns (mode, why), mode None when refused.
    """
    threads = torch.get_num_threads()
    # inputs this small gain nothing from threads, and on busy shared cores lose much to them (0.35 s on one
    # thread, 4.6 s on two, on two cores shared with other jobs); torch's thread count is the process's, so it
    # is lowered only while no other Python thread runs that could see it, and put back before returning
    one = threads > 1 and input_device(model).type == "cpu" and threading.active_count() == 1
    if one:
        torch.set_num_threads(1)
    try:
        return _probe(model, list(short), list(long), pad_id, tolerance)
    finally:
        if one:
            torch.set_num_threads(threads)


def _probe(model: Any, short: list[int], long: list[int], pad_id: int, tolerance: float) -> tuple[Batching | None, str]:
    """:func:`probe` on the device's threads as they are."""
    # read the short text's positions and the long one's last two (the leaks seen so far reach them all)
    cols = [*range(len(short)), len(long) - 2, len(long) - 1]
    read = partial(probe_read, model, pad_id=pad_id, cols=cols)
    with torch.inference_mode(), full_float32():  # the probe judges float32 numbers, whatever the process set
        alone = [read([s], [len(s)])[0] for s in (short, long)]
        n = len(short)
        batch = read([long, short, short + long[n:]], [len(long), n, n])
        gap = max(_gap(batch[0], alone[1]), _gap(batch[1], alone[0]))
        content = _gap(batch[1], batch[2])
        if gap <= tolerance and content <= CONTENT_TOLERANCE:
            return "pad", ""
        why = f"padding a text changed its log-probabilities by up to {max(gap, content):.1e} nats (probe at load)"
        again = read([short], [n])[0]
        if _differ(again, alone[0], tolerance):
            return None, f"two identical forward passes of one text differ by {_gap(again, alone[0]):.1e} nats"
        # the same length as ``long``, other tokens (the short text's, repeated), the ends kept
        inner = short[1:-1] or short
        other = long[:1] + (inner * len(long))[: len(long) - 2] + long[-1:]
        equal = read([long, other], [len(long)] * 2)
        if _differ(equal[0], alone[1], tolerance) or _differ(equal[1], read([other], [len(other)])[0], tolerance):
            return "single", why + "; texts of equal length batched together differ too"
        return "equal", why


def probe_read(
    model: Any, rows: Sequence[Sequence[int]], lengths: Sequence[int], pad_id: int, cols: Sequence[int] | None = None
) -> list[torch.Tensor]:
    """Per row, the float64 log-softmax at each of its first ``lengths`` positions (the rest masked out;
    filled with the row's further tokens, else ``pad_id``), read at the position's own token.

    ``cols``: only these positions (of those), and only they go through the LM head where the model's
    output embeddings take the hidden states as (batch, position, feature): the head of a large
    vocabulary costs more than the body of a small model.
    """
    width = max(max(len(r) for r in rows), max(lengths))
    device = input_device(model)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (r, n) in enumerate(zip(rows, lengths)):
        ids[i, : len(r)] = torch.tensor(list(r), dtype=torch.long)
        attention[i, :n] = 1
    keep = torch.tensor(sorted({c for c in (range(width) if cols is None else cols) if c < width}), dtype=torch.long)
    ids, attention = ids.to(device), attention.to(device)

    def only_kept(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        h = args[0] if args else None
        if isinstance(h, torch.Tensor) and h.dim() == 3 and tuple(h.shape[:2]) == tuple(ids.shape):
            return (h[:, keep.to(h.device)], *args[1:])
        return None

    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    hook = head.register_forward_pre_hook(only_kept) if isinstance(head, torch.nn.Module) else None
    try:
        logits = model(input_ids=ids, attention_mask=attention).logits
    finally:
        if hook is not None:
            hook.remove()
    if logits.shape[1] == width and len(keep) < width:  # the head saw every position
        logits = logits[:, keep.to(logits.device)]
    kept_ids = ids[:, keep.to(device)]
    read = torch.log_softmax(logits.double(), -1).gather(-1, kept_ids[..., None])[..., 0].cpu()
    return [read[i, : int((keep < n).sum())] for i, n in enumerate(lengths)]


def _gap(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


def _differ(a: torch.Tensor, b: torch.Tensor, tolerance: float) -> bool:
    return not _gap(a, b) <= tolerance  # NaN differs
