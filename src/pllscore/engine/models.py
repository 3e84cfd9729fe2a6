"""What every model loader shares: the model kinds, the loaded model, device and dtype, and load checks.

Both loaders build on this module: :mod:`pllscore.engine.loading` (a Hub name or a model folder)
and :mod:`pllscore.engine.gguf` (a GGUF file). Nothing here loads a model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from pllscore.errors import InputError

Kind = Literal["masked", "causal", "seq2seq", "mntp"]

#: the model kinds, in the order errors name them; ``mntp`` reads a masked LM as masked next-token prediction
#: (GPT-BERT) trained it: a masked token is read from the output one position before it
KINDS: tuple[str, ...] = ("masked", "causal", "seq2seq", "mntp")

__all__ = [
    "KINDS",
    "Kind",
    "Loaded",
    "check_available",
    "check_kind",
    "class_kind",
    "compute_types",
    "detect_kind",
    "dtype_keyword",
    "float32_weights",
    "machine_devices",
    "missing_weights",
    "model_kind",
    "one_line",
    "resolve_device",
    "resolve_dtype",
    "unavailable",
    "weights_dtype",
]

_DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
}


@dataclass(frozen=True)
class Loaded:
    """A loaded model with its tokenizer and what pllscore learned about it."""

    model: Any
    tokenizer: Any
    kind: Kind
    name: str
    revision: str | None
    device: torch.device
    #: the accelerate keywords it was placed with (``device_map``, ``max_memory``, ``offload_folder``), or empty
    placement: Mapping[str, Any] = field(default_factory=dict)


def check_kind(kind: str | None) -> None:
    """Refuse a model kind other than masked, causal, seq2seq, mntp or None (found from the model)."""
    if kind is not None and kind not in KINDS:
        raise InputError(f"unknown kind {kind!r}; use 'masked', 'causal', 'seq2seq', 'mntp' or leave it out")


def model_kind(kind: Kind) -> Kind:
    """The kind of model a scoring kind reads: ``mntp`` reads a masked LM, every other kind its own."""
    return "masked" if kind == "mntp" else kind


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` picks cuda, then mps, then cpu; anything else is passed to ``torch.device`` and must be on this
    machine (:func:`check_available`)."""
    if isinstance(device, torch.device):
        check_available(device)
        return device
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        chosen = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise InputError(f"invalid device {device!r}; use 'auto', 'cpu', 'cuda', 'cuda:1' or 'mps'") from e
    check_available(chosen, given=device)
    return chosen


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return mps is not None and mps.is_available()


def machine_devices() -> list[str]:
    """The devices torch can use on this machine: ``cuda:0``, ``cuda:1``, ..., ``mps``, then ``cpu``."""
    out = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    return [*out, *(["mps"] if _mps_available() else []), "cpu"]


def unavailable(device: torch.device) -> str | None:
    """Why ``device`` is not on this machine (what is missing, what there is), or None when it is.

    A CUDA or MPS device torch cannot reach fails deep inside the first ``.to`` with an AssertionError or a
    RuntimeError (or in accelerate, with a page of warnings first): asking here costs nothing."""
    gpus = machine_devices()[:-1]
    has = f"{', '.join(gpus)} and the CPU" if gpus else "only the CPU"
    if device.type == "cuda":
        if not torch.backends.cuda.is_built():
            return f"this torch ({torch.__version__}) is built without CUDA, and this machine has {has}"
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            return f"torch sees no CUDA GPU (is CUDA_VISIBLE_DEVICES empty?), and this machine has {has}"
        if device.index is not None and device.index >= count:
            return f"this machine has {count} CUDA GPU{'s' if count > 1 else ''}: {has}"
    elif device.type == "mps" and not _mps_available():
        return f"torch finds no Apple GPU (MPS) here; this machine has {has}"
    elif device.type not in ("cpu", "cuda", "mps", "meta"):
        module = getattr(torch, device.type, None)
        if module is not None and hasattr(module, "is_available") and not module.is_available():
            return f"torch finds no {device.type} device here; this machine has {has}"
    return None


def check_available(device: torch.device, given: Any = None) -> None:
    """Refuse a device this machine does not have, in one line naming what it has, before any model loads."""
    why = unavailable(device)
    if why is not None:
        name = str(given if given is not None else device)
        fix = "use device='cpu' (or 'auto': the best device there is)"
        raise InputError(f"device={name!r} is not available: {why}; {fix}")


def resolve_dtype(dtype: str | torch.dtype | None) -> torch.dtype:
    """``None`` means float32, the exact setting; strings like ``"bfloat16"`` are accepted.

    A model loaded with bfloat16 or float16 has its weights in that type (:func:`weights_dtype`); the
    log-softmax over the vocabulary is float32 in every case (:mod:`pllscore.engine.readout`).
    """
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        if dtype in (torch.float32, torch.bfloat16, torch.float16):
            return dtype
    elif isinstance(dtype, str) and dtype.lower().removeprefix("torch.") in _DTYPES:
        return _DTYPES[dtype.lower().removeprefix("torch.")]
    raise InputError(f"unsupported dtype {dtype!r}; use float32, bfloat16 or float16")


def detect_kind(config: Any) -> Kind | None:
    """Masked, causal or encoder-decoder (seq2seq) LM, from the config's architectures, else its model type."""
    archs = list(getattr(config, "architectures", None) or [])
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    if any(a.endswith("ForMaskedLM") for a in archs):
        return "masked"
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        return "causal"
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    model_type = getattr(config, "model_type", None)
    if getattr(config, "is_decoder", False) and model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "causal"
    if model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "masked"
    if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "causal"
    return None


def class_kind(model: Any) -> Kind | None:
    """The kind of LM a loaded model is, from its class name (``...ForMaskedLM``), else from its config."""
    if getattr(model.config, "is_encoder_decoder", False):
        return "seq2seq"
    name = type(model).__name__
    if name.endswith("ForMaskedLM"):
        return "masked"
    if name.endswith(("ForCausalLM", "LMHeadModel")):
        return "causal"
    return detect_kind(model.config)


def weights_dtype(dtype: str | torch.dtype | None, autocast: bool = False) -> torch.dtype:
    """The type a model's weights are loaded in: ``dtype`` (float32 by default), or float32 with ``autocast``
    (float32 weights, the matrix products autocast to ``dtype`` while scoring)."""
    compute = resolve_dtype(dtype)
    if autocast and compute == torch.float32:
        raise InputError(
            "autocast=True runs float32 weights in a reduced type: give dtype='bfloat16' or 'float16' with it, "
            "or leave autocast out"
        )
    return torch.float32 if autocast else compute


def compute_types(dtype: str | torch.dtype | None, weights: torch.dtype) -> tuple[torch.dtype, torch.dtype | None]:
    """(the type a scorer computes in, the type it autocasts to or None) for a model whose weights are ``weights``.

    Weights are used as they are: ``dtype`` None is the weights' own type (float32 for any other); float32
    weights with a reduced ``dtype`` are autocast to it; reduced weights with another ``dtype`` are refused.
    """
    reduced = weights in (torch.bfloat16, torch.float16)
    if dtype is None:
        return (weights if reduced else torch.float32), None
    asked = resolve_dtype(dtype)
    if not reduced:
        return asked, (None if asked == torch.float32 else asked)
    if asked != weights:
        have, want = str(weights).removeprefix("torch."), str(asked).removeprefix("torch.")
        raise InputError(
            f"the model's weights are {have}, not {want}: leave dtype out (or give {have!r}) to score with them, "
            f"or convert the model first (model.to(torch.{want}))"
        )
    return asked, None


def dtype_keyword(dtype: torch.dtype) -> dict[str, torch.dtype]:
    """The ``from_pretrained`` keyword that loads weights as ``dtype`` (``dtype`` from transformers 5 on,
    ``torch_dtype`` before)."""
    import transformers

    key = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
    return {key: dtype}


def float32_weights() -> dict[str, torch.dtype]:
    """The ``from_pretrained`` keyword that loads weights as float32."""
    return dtype_keyword(torch.float32)


def missing_weights(info: Mapping[str, Any]) -> list[str]:
    """The weights a checkpoint lacked or had in another shape, from ``output_loading_info``'s report.

    transformers initialises these at random, so a model with any of them would score noise.
    """
    mismatched = {k[0] if isinstance(k, (tuple, list)) else k for k in info.get("mismatched_keys") or ()}
    return sorted(set(info.get("missing_keys") or ()) | mismatched)


def one_line(e: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none), for a one-line error."""
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
