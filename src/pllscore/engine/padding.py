"""Whether padding changes a model's scores, decided once per model: the proven list, else a probe.

The engines pad the texts (or masked copies) of a batch to its longest and pass an attention mask.
For most architectures the padded positions then change nothing, but not for all: ConvBERT's
span-based dynamic convolution and Nystromformer's convolution over values read the padded
positions, so a text's score would depend on the longest text of its batch. Each model therefore
runs in one of three batching modes (:func:`pllscore.plan.batching.pack`):

- ``"pad"``: batches of any lengths, padded (an architecture in :data:`PADDED`, or one the probe passes);
- ``"equal"``: batches of equal-length items only, so nothing is padded (:data:`UNPADDED`, or the
  probe finds padding leaks but texts of one length batch exactly);
- ``"single"``: one item per forward pass (the probe finds even equal-length batches leak).

A model whose architecture is in neither list is probed at load (:func:`probe`): a short and a long
text scored alone, padded together, and the long one batched with another of its length; a few
forward passes of under 40 tokens. A model the probe finds not even reproducible alone, or one in
:data:`REFUSED` (no way to score it without the padding entering its scores), is refused with a
one-line :class:`ModelError`. The lists are exactly what ``tests/engine/test_architectures.py``
proves against the independent token-by-token loop.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, Literal

import torch

from pllscore.errors import ModelError

__all__ = ["PADDED", "PROBE_TEXTS", "PROBE_TOLERANCE", "UNPADDED", "Batching", "batching_for", "probe"]

Batching = Literal["pad", "equal", "single"]

#: architectures (config ``model_type``) whose padded batches equal one text per pass (the matrix proves it)
PADDED = frozenset(
    {
        # masked LMs
        *("bert", "roberta", "xlm-roberta", "camembert", "electra", "albert", "distilbert", "deberta"),
        *("deberta-v2", "mpnet", "ernie", "roformer", "megatron-bert", "data2vec-text", "modernbert"),
        *("squeezebert", "big_bird", "longformer", "mobilebert"),
        # causal LMs
        *("gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "gpt_neox", "phi", "phi3"),
        *("falcon", "opt", "bloom", "gptj", "olmo2", "starcoder2", "stablelm", "mamba", "xglm"),
    }
)
#: architectures exact only without padding (equal-length batches), and why
UNPADDED = {
    "convbert": "its span-based dynamic convolution reads padded positions",
    "nystromformer": "its convolution over the attention values reads padded positions",
}
#: the largest difference (nats, any position) between a text alone and padded that the probe lets pass;
#: float32 rounding between batch shapes is ~1e-7 on the tiny models, ~1e-6 on 135M-parameter ones
PROBE_TOLERANCE = 1e-5

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
    mode, why = probe(model, short, long, pad_id)
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

    Compares, at every position, the log-softmax read at the position's own token (any function of
    the hidden states would do) of: each text alone; the two padded together; ``long`` batched with
    another text of its length. Returns (mode, why), mode None when two identical passes differ.
    """
    long, inner = list(long), list(short[1:-1]) or list(short)
    # the same length as ``long``, other tokens (the short text's, repeated), the ends kept
    other = long[:1] + (inner * len(long))[: len(long) - 2] + long[-1:]
    with torch.inference_mode():
        alone = [_read(model, [s], pad_id)[0] for s in (short, long, other)]
        again = _read(model, [short], pad_id)[0]
        if _differ(again, alone[0], tolerance):
            return None, f"two identical forward passes of one text differ by {_gap(again, alone[0]):.1e} nats"
        padded = _read(model, [long, short], pad_id)
        gap = max(_gap(padded[0], alone[1]), _gap(padded[1], alone[0]))
        if gap <= tolerance:
            return "pad", ""
        why = f"padding a text changed its log-probabilities by up to {gap:.1e} nats (probe at load)"
        equal = _read(model, [long, other], pad_id)
        if _differ(equal[0], alone[1], tolerance) or _differ(equal[1], alone[2], tolerance):
            return "single", why + "; texts of equal length batched together differ too"
        return "equal", why


def _read(model: Any, seqs: Sequence[Sequence[int]], pad_id: int) -> list[torch.Tensor]:
    """Per sequence, the float64 log-softmax at each of its positions, read at the position's own token."""
    width = max(len(s) for s in seqs)
    device = next(model.parameters()).device
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, s in enumerate(seqs):
        ids[row, : len(s)] = torch.tensor(list(s), dtype=torch.long)
        attention[row, : len(s)] = 1
    ids, attention = ids.to(device), attention.to(device)
    logits = model(input_ids=ids, attention_mask=attention).logits.double()
    read = torch.log_softmax(logits, -1).gather(-1, ids[..., None])[..., 0].cpu()
    return [read[row, : len(s)] for row, s in enumerate(seqs)]


def _gap(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


def _differ(a: torch.Tensor, b: torch.Tensor, tolerance: float) -> bool:
    return not _gap(a, b) <= tolerance  # NaN differs
