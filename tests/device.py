"""Where the exactness tests run their models: ``PLLSCORE_TEST_DEVICE`` (``make test-gpu``), else the CPU.

Unset (``make test``), nothing moves and the oracle runs the model itself, in full float32 whatever the
process-wide precision setting (:func:`exact_float32`). Set (``cuda``, or
``cpu`` to check the mechanism on a machine without a GPU), the tests marked ``gpu`` build their models
there, and the oracle (:mod:`tests.oracle`) runs a float64 copy of each on the CPU: an independent
reference whatever the device, its kernels or a process-wide TF32 setting do.
"""

from __future__ import annotations

import contextlib
import copy
import os
import weakref
from collections.abc import Iterator
from typing import Any

#: the device of the tests marked ``gpu``; None: the CPU, and the oracle on the model itself
DEVICE = os.environ.get("PLLSCORE_TEST_DEVICE") or None

_COPIES: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
# model types that do not run in float64 (XGLM fills a float32 buffer with float64's minimum): their reference
# copy stays float32, on the CPU
FLOAT32_ONLY = frozenset({"xglm"})


def on_device(model: Any) -> Any:
    """``model`` on the test device (in place, as ``Module.to``), or as it is when none is set."""
    return model if DEVICE is None else model.to(DEVICE)


def float64_copy(model: Any) -> Any:
    """A float64 copy of ``model`` on the CPU (float32 for :data:`FLOAT32_ONLY`), made once per model."""
    import torch

    dtype = torch.float32 if getattr(model.config, "model_type", None) in FLOAT32_ONLY else torch.float64
    p = next(model.parameters())
    if p.dtype == dtype and p.device.type == "cpu" and dtype == torch.float64:
        return model  # a copy already
    if model not in _COPIES:
        _COPIES[model] = copy.deepcopy(model).to("cpu", dtype).eval()
    return _COPIES[model]


#: torch's per-backend float32 switches (torch 2.9 and later); ``set_float32_matmul_precision("medium")`` turns the
#: CPU's (oneDNN) to bf16 on CPUs with AMX-BF16 or AVX512-BF16, where an oracle run under it is off by 1e-4 to 1e-3
_FP32_SWITCHES = ("cuda.matmul", "cudnn.conv", "cudnn.rnn", "mkldnn.matmul", "mkldnn.conv", "mkldnn.rnn")


def _switch(path: str) -> Any:
    node: Any = __import__("torch").backends
    for part in path.split("."):
        node = getattr(node, part, None)
    return node


@contextlib.contextmanager
def exact_float32() -> Iterator[None]:
    """float32 products in full float32 for the duration, the process's settings put back afterwards.

    The tests' own guard, independent of pllscore's (the engine's ``full_float32``), so that a fixture that
    lowers the global precision cannot move the oracle with the code under test.
    """
    import torch

    nodes = [n for n in map(_switch, _FP32_SWITCHES) if n is not None and hasattr(n, "fp32_precision")]
    if not nodes:  # torch before 2.9: the legacy switch only
        before = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("highest")
        try:
            yield
        finally:
            torch.set_float32_matmul_precision(before)
        return
    saved = [n.fp32_precision for n in nodes]
    for n in nodes:
        n.fp32_precision = "ieee"
    try:
        yield
    finally:
        for n, b in zip(nodes, saved):
            n.fp32_precision = b


class _Exact:
    """A model whose calls run under :func:`exact_float32`; every other attribute is the model's."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with exact_float32():
            return self._model(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def reference(model: Any) -> Any:
    """The model the oracle runs: ``model`` itself when no test device is set, else its float64 CPU copy; either
    way called in full float32 precision (:func:`exact_float32`)."""
    return _Exact(model if DEVICE is None else float64_copy(model))
