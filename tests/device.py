"""Where the exactness tests run their models: ``PLLSCORE_TEST_DEVICE`` (``make test-gpu``), else the CPU.

Unset (``make test``), nothing moves and the oracle runs the model itself, as always. Set (``cuda``, or
``cpu`` to check the mechanism on a machine without a GPU), the tests marked ``gpu`` build their models
there, and the oracle (:mod:`tests.oracle`) runs a float64 copy of each on the CPU: an independent
reference whatever the device, its kernels or a process-wide TF32 setting do.
"""

from __future__ import annotations

import copy
import os
import weakref
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


def reference(model: Any) -> Any:
    """The model the oracle runs: ``model`` itself when no test device is set, else its float64 CPU copy."""
    return model if DEVICE is None else float64_copy(model)
