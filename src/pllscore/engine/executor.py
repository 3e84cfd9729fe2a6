"""Run items in batches under a token budget, with a progress bar and CUDA out-of-memory back-off.

The executor knows nothing about models: it is given item lengths and a function that
runs one batch of item indices. On a CUDA out-of-memory error it halves the budget and
re-packs the items not yet done, so no finished work is lost.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from pllscore.engine.placement import input_device
from pllscore.errors import ModelError
from pllscore.plan.batching import pack

__all__ = ["Engine", "full_float32", "precision", "run_batches"]


class Engine:
    """What every engine (masked, causal, encoder-decoder) holds: the model, how its batches are padded
    (``padding``: "pad", items of any lengths share a batch; "equal"/"single", never padded: engine/padding.py),
    its pad token, its vocabulary size and the type it autocasts to (None: float32, exact). The engine of a kind
    takes its own options and hands these on to this constructor (its keywords ``**engine``)."""

    def __init__(
        self,
        model: Any,
        *,
        pad_token_id: int,
        vocab_size: int,
        autocast: torch.dtype | None = None,
        padding: str = "pad",
    ) -> None:
        self.model = model
        self.padding = padding
        self.pad_token_id = pad_token_id
        self.vocab_size = vocab_size
        self.autocast = autocast

    @property
    def device(self) -> torch.device:
        return input_device(self.model)


def precision(device: torch.device, dtype: torch.dtype | None) -> Any:
    """Autocast to ``dtype`` on ``device``, or, for float32 (the exact setting), float32 matrix products in full
    float32 whatever the process has set (:func:`full_float32`)."""
    if dtype is None or dtype == torch.float32:
        return full_float32()
    return torch.autocast(device_type=device.type, dtype=dtype)


# the backends whose float32 products a global setting can lower: TF32 on CUDA (cuBLAS, cuDNN), bf16 or TF32
# through oneDNN on CPUs that have them (torch.set_float32_matmul_precision("medium") / "high")
_FP32_BACKENDS = ("cuda.matmul", "cudnn.conv", "cudnn.rnn", "mkldnn.matmul", "mkldnn.conv", "mkldnn.rnn")


def _backend(path: str) -> Any:
    node: Any = torch.backends
    for part in path.split("."):
        node = getattr(node, part)
    return node


@contextlib.contextmanager
def full_float32() -> Iterator[None]:
    """float32 products computed in float32 for the duration, then the process's own settings put back.

    Lightning and many training scripts call ``torch.set_float32_matmul_precision("high")`` or set
    ``torch.backends.cuda.matmul.allow_tf32 = True``; under them a float32 forward pass on an Ampere or
    newer GPU runs in TF32 and moves scores by about 1e-3 nats. pllscore's float32 promise holds anyway.
    """
    if not hasattr(torch.backends.cuda.matmul, "fp32_precision"):  # torch before 2.9: the legacy switches
        saved = (torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32)
        cudnn = torch.backends.cudnn.allow_tf32
        torch.set_float32_matmul_precision("highest")
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
        try:
            yield
        finally:
            torch.set_float32_matmul_precision(saved[0])
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved[1], cudnn
        return
    nodes = [_backend(p) for p in _FP32_BACKENDS]
    before = [n.fp32_precision for n in nodes]
    if all(b == "ieee" for b in before):
        yield
        return
    for n in nodes:
        n.fp32_precision = "ieee"
    try:
        yield
    finally:
        for n, b in zip(nodes, before):
            n.fp32_precision = b


def run_batches(
    lengths: np.ndarray,
    max_tokens: int,
    run: Callable[[np.ndarray], None],
    *,
    progress: bool | None = None,
    desc: str = "scoring",
    unit: str = "copy",
    counts: np.ndarray | None = None,
    padding: str = "pad",
    min_fill: float = 0.0,
) -> None:
    """Call ``run`` on batches of item indices until every item is done.

    ``counts``: how far each item moves the progress bar (default 1 each; a row of texts counts its texts).
    ``padding``: whether a batch may mix lengths; ``min_fill``: how short its items may be against its longest
    (:func:`pllscore.plan.batching.pack`).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    counts = np.ones(len(lengths), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    todo = np.arange(len(lengths))
    budget = max_tokens
    # progress=None: tqdm shows a bar only when stderr is a terminal
    with tqdm(
        total=int(counts.sum()), desc=desc, unit=unit, disable=None if progress is None else not progress, leave=False
    ) as bar:
        while len(todo):
            done = np.zeros(len(todo), dtype=bool)
            try:
                for batch in pack(lengths[todo], budget, padding, min_fill=min_fill):
                    run(todo[batch])
                    done[batch] = True
                    bar.update(int(counts[batch].sum()))
            except torch.cuda.OutOfMemoryError as e:
                torch.cuda.empty_cache()
                if budget <= int(lengths[todo[~done]].max()):
                    raise ModelError(
                        f"out of GPU memory even for a single input of {int(lengths[todo[~done]].max())} tokens; "
                        "use a smaller dtype (bfloat16) or a device with more memory"
                    ) from e
                budget //= 2
            todo = todo[~done]
