"""Run items in batches under a token budget, with a progress bar and CUDA out-of-memory back-off.

The executor knows nothing about models: it is given item lengths and a function that *launches* one batch
of item indices and returns its *finish*, a function of no arguments. Launching prepares the batch on the
host, copies it to the device and queues the forward pass and readout there; finishing waits for the
results, copies them to the host and files them per item. :func:`run_batches` launches batch i + 1 before
it finishes batch i, so on a GPU the host prepares the next batch while the device computes this one. For
that no copy may make the host wait: a plain copy from host memory to CUDA, or from CUDA to the host, waits
until the device has run all the work queued before it. :func:`to_device` copies inputs through pinned
memory without blocking; :func:`to_host` starts a batch's outputs for the host (pinned memory,
``non_blocking``) right behind its readout and records a CUDA event after them, and finishing waits on
that event alone: pllscore's one wait per batch (the model's code may add its own: transformers' sdpa
masks test a 2D attention mask for padding). On a CPU the launch computes everything and the finish files
the results, one after the other: the same numbers as a launch and finish in one.

A batch is done once finished. On a CUDA out-of-memory error, whether launching or finishing, the executor
halves the budget and re-packs the items not yet done (those of a batch launched but not finished among
them), so no finished work is lost and no batch is counted twice.

``overlap=False`` (an engine's ``overlap``) launches and finishes each batch in turn with blocking copies; on an
accelerator the first batch of each path is run both ways once and compared (:mod:`pllscore.engine.overlap`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch

from pllscore.engine.batch_log import done_mask
from pllscore.engine.overlap import checked_launch, overlap_on, overlapping, record
from pllscore.engine.placement import input_device
from pllscore.engine.progress import bar as progress_bar
from pllscore.errors import ModelError
from pllscore.plan.batching import pack

__all__ = ["Engine", "Finish", "Launch", "full_float32", "into", "precision", "run_batches", "to_device", "to_host"]

#: what launching a batch returns: waits for its results on the device and files them on the host
Finish = Callable[[], None]
#: launches one batch of item indices (see the module's docstring)
Launch = Callable[[np.ndarray], Finish]


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
        #: batches one ahead of another (False: each launched and finished in turn, blocking copies)
        self.overlap = True
        self._checked: set[Any] = set()  # the paths whose first batch the overlap self-check has run

    @property
    def device(self) -> torch.device:
        return input_device(self.model)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Where the engine's batches run: :func:`precision`, and overlapped or not (:mod:`pllscore.engine.overlap`)."""
        with precision(self.device, self.autocast), overlapping(self.overlap, self._checked):
            yield


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
    launch: Launch,
    *,
    progress: bool | None = None,
    desc: str = "scoring",
    unit: str = "copy",
    counts: np.ndarray | None = None,
    padding: str = "pad",
    min_fill: float = 0.0,
    keep: Any = None,
) -> None:
    """Launch batches of item indices, each finished after the next is launched, until every item is done.

    ``counts``: how far each item moves the progress bar (default 1 each; a row of texts counts its texts),
    when its batch is finished; the bar is :func:`pllscore.engine.progress.bar` (its description after the
    stage's name; told to a file run's bar instead where one is set). ``padding``: whether a batch may mix
    lengths; ``min_fill``: how short its items may be against its longest (:func:`pllscore.plan.batching.pack`).
    ``keep``: the container ``launch`` files into (a dict of arrays, or a list per item), which a file run keeps
    with the batches done when interrupted (:mod:`pllscore.engine.batch_log`): in a resumed run those batches
    are filed from the record, not run, and the others are packed as they were.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    counts = np.ones(len(lengths), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    done = done_mask(lengths, max_tokens, padding, min_fill, keep)
    todo = np.arange(len(lengths))  # all packed at first, as in the run that kept some batches: the same batches
    budget = max_tokens
    ahead, launch = overlap_on(), checked_launch(launch)  # the first batch checked on an accelerator, once a path
    shown = progress_bar(int(counts.sum()), initial=int(counts[done].sum()), desc=desc, unit=unit, progress=progress)
    with contextlib.closing(shown) as bar:
        while not done.all():
            packed = (todo[b] for b in pack(lengths[todo], budget, padding, min_fill=min_fill))
            batches = [b for b in packed if not done[b].all()]
            try:
                for items in (_launch_ahead if ahead else _one_by_one)(batches, launch):
                    done[items] = True
                    bar.update(int(counts[items].sum()))
            except torch.cuda.OutOfMemoryError as e:
                longest = int(lengths[~done].max())
                if budget <= longest:
                    raise ModelError(
                        f"out of GPU memory even for a single input of {longest} tokens; "
                        "use a smaller dtype (bfloat16) or a device with more memory"
                    ) from e
            if not done.all():  # out of memory: the cache emptied once the handler's traceback (its tensors) is gone
                torch.cuda.empty_cache()
                budget //= 2
                todo = np.flatnonzero(~done)


def _launch_ahead(batches: list[np.ndarray], launch: Launch) -> Iterator[np.ndarray]:
    """Launch each batch, then finish the one launched before it and yield that one: batch i + 1 is on its
    way before the host waits for batch i. A batch launched but not yet yielded when an error comes is not
    done."""
    pending: tuple[np.ndarray, Finish] | None = None
    for batch in batches:
        launched = (batch, launch(batch))
        if pending is not None:
            pending[1]()
            yield pending[0]
        pending = launched
    if pending is not None:
        pending[1]()
        yield pending[0]


def _one_by_one(batches: list[np.ndarray], launch: Launch) -> Iterator[np.ndarray]:
    """Each batch launched and finished before the next (``overlap=False``)."""
    for batch in batches:
        launch(batch)()
        yield batch


def into(out: list[Any], launch: Callable[[np.ndarray], Callable[[], Sequence[Any]]]) -> Launch:
    """A :data:`Launch` made of one whose finish returns a batch's results: finishing files the result of item
    ``batch[k]`` at ``out[batch[k]]``."""

    def launch_into(batch: np.ndarray) -> Finish:
        results = launch(batch)

        def finish() -> None:
            for i, values in zip(batch, results()):
                out[i] = values

        return finish

    launch_into.__wrapped__ = launch  # type: ignore[attr-defined]  # its path, for the overlap self-check
    return launch_into


def to_device(data: np.ndarray | torch.Tensor, device: torch.device) -> torch.Tensor:
    """``data`` on ``device``; to a CUDA device through pinned memory, queued without blocking the host."""
    tensor = torch.from_numpy(data) if isinstance(data, np.ndarray) else data
    if torch.device(device).type != "cuda" or tensor.is_cuda or not overlap_on():
        return tensor.to(device)
    # the pinned block is not reused before the copy is done (torch's caching host allocator records it)
    return tensor.pin_memory().to(device, non_blocking=True)


def to_host(tensors: dict[str, torch.Tensor]) -> Callable[[], dict[str, np.ndarray]]:
    """Start copying ``tensors`` to the host as float64; the function returned waits for them and gives them
    as numpy arrays.

    A CUDA tensor is copied into pinned memory with ``non_blocking=True``, queued behind the work that makes
    it, and an event is recorded on its device's stream after the copies: waiting waits on that event, for this
    batch's results only, while later batches' work may already be queued. Other tensors are copied when
    waited for (on a CPU: not copied at all).
    """
    devices = {v.device.type for v in tensors.values()}
    if not overlap_on():  # the plain path: copied now, the host waiting for them
        host = {k: v.double().cpu() for k, v in tensors.items()}
        events = []
    else:
        host = {k: _copy_started(v.double()) for k, v in tensors.items()}
        events = [_recorded(device) for device in {v.device for v in tensors.values() if v.is_cuda}]

    def wait() -> dict[str, np.ndarray]:
        for event in events:
            event.synchronize()
        out = {k: v.cpu().numpy() for k, v in host.items()}
        record(out, devices)  # kept while the overlap self-check runs
        return out

    return wait


def _copy_started(tensor: torch.Tensor) -> torch.Tensor:
    """A CUDA tensor's copy into pinned host memory, queued on its stream; any other tensor as it is."""
    if not tensor.is_cuda:
        return tensor
    return torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True).copy_(tensor, non_blocking=True)


def _recorded(device: torch.device) -> torch.cuda.Event:
    """A CUDA event recorded now on ``device``'s current stream."""
    event = torch.cuda.Event()
    event.record(torch.cuda.current_stream(device))
    return event
