"""Models spread over several devices by accelerate (``device_map``): the load options, and where inputs go.

A model loaded with ``device_map="auto"`` has its layers on the GPUs, then the CPU, then disk, as
``max_memory`` allows. accelerate's hooks move each module's inputs to the device it runs on and load
offloaded weights just before it runs, so every part the engines call (an encoder, a decoder, an LM
head, a layer's projections) works as a module. What they need from here: the device the inputs go to
(:func:`input_device`), and whether a module's weights may be read outside its forward pass
(:func:`is_spread`: not when the model is spread, where they may sit on the ``meta`` device until the hook
loads them). Tensors read from two parts' outputs are moved to the device of the output they index.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import torch

from pllscore.engine.models import unavailable
from pllscore.errors import InputError, ModelError
from pllscore.settings.fields import check_device_map, parse_max_memory

__all__ = ["input_device", "is_spread", "placement_options", "placement_record"]

ACCELERATE = "pip install accelerate"


def placement_options(
    device_map: str | dict[str, Any] | None,
    max_memory: str | dict[Any, Any] | None,
    offload_folder: str | os.PathLike[str] | None,
    device: str | torch.device,
) -> dict[str, Any]:
    """The ``from_pretrained`` keywords that spread a model (``device_map``, ``max_memory``, ``offload_folder``),
    checked; empty without a device map."""
    if device_map is None:
        for name, value in (("max_memory", max_memory), ("offload_folder", offload_folder)):
            if value is not None:
                raise InputError(f"{name} is for a device map: add device_map='auto', or drop it")
        return {}
    check_device_map(device_map)
    if device != "auto":
        raise InputError(
            f"give either device={str(device)!r} or device_map={device_map!r}: a device map places the model itself"
        )
    try:
        import accelerate  # noqa: F401
    except ImportError:
        raise ModelError(f"device_map needs the accelerate package: {ACCELERATE}") from None
    out: dict[str, Any] = {"device_map": device_map}
    if max_memory is not None:
        out["max_memory"] = parse_max_memory(max_memory)
    _check_named_devices(out.get("max_memory") or {}, "max_memory")
    if isinstance(device_map, dict):
        _check_named_devices({v: None for v in device_map.values()}, "device_map")
    if offload_folder is not None:
        out["offload_folder"] = os.fspath(offload_folder)
    return out


def _check_named_devices(devices: dict[Any, Any], option: str) -> None:
    """Refuse a device named in ``max_memory`` or a device map that this machine lacks, before accelerate
    warns and fails deep in the load."""
    for key in devices:
        if key == "disk":
            continue
        device = torch.device("cuda", key) if isinstance(key, int) else torch.device(str(key))
        why = unavailable(device)
        if why is not None:
            name = f"cuda:{key}" if isinstance(key, int) else str(key)
            raise InputError(f"{option} names {name}, which is not available: {why}; leave {name} out of it")


def placement_record(model: Any, options: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """Where accelerate put ``model``, for provenance: the device map it got (``hf_device_map``: each module's
    device, ``cuda:N``, ``cpu`` or ``disk``) and the ``max_memory`` (bytes per device) and ``offload_folder`` of
    ``options``, the keywords it was loaded with; None for a model that no device map placed."""
    placed = model.__dict__.get("hf_device_map")
    if not placed:
        return None
    options = options or {}
    memory = options.get("max_memory")
    folder = options.get("offload_folder")
    return {
        "device_map": {str(module): _device_name(device) for module, device in placed.items()},
        "max_memory": None if memory is None else {_device_name(d): size for d, size in memory.items()},
        "offload_folder": None if folder is None else os.path.abspath(folder),
    }


def _device_name(device: Any) -> str:
    """accelerate's name of a device (an int is a CUDA GPU) as torch writes it: ``cuda:0``, ``cpu``, ``disk``."""
    return f"cuda:{device}" if isinstance(device, int) and not isinstance(device, bool) else str(device)


def is_spread(model: Any) -> bool:
    """Whether accelerate placed ``model`` on more than one device, or offloaded some of it (to the CPU or disk)."""
    placed = model.__dict__.get("hf_device_map")
    if not placed:
        return False
    devices = {str(d) for d in placed.values()}
    return len(devices) > 1 or "disk" in devices


def input_device(model: Any) -> torch.device:
    """The device ``model``'s inputs go to: its parameters' device, or for a spread model the device its input
    embeddings run on (accelerate's execution device; their weights may be offloaded)."""
    if "hf_device_map" not in model.__dict__ or not is_spread(model):
        return next(model.parameters()).device
    embeddings = model.get_input_embeddings()
    hook = getattr(embeddings, "_hf_hook", None)
    for h in getattr(hook, "hooks", None) or [hook]:
        device = getattr(h, "execution_device", None)
        if device is not None:
            return torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
    first = next(model.parameters()).device
    return torch.device("cpu") if first.type == "meta" else first
