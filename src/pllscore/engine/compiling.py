"""Opt-in ``torch.compile`` of a model's encoder or decoder layers (``compile=True``, ``--compile``).

Each layer is compiled on its own (``nn.Module.compile``, dynamic shapes), not the whole model:
the masked engine stops the encoder before its last layer with a forward pre-hook and the causal
engine feeds the decoder custom 4D masks, both of which a whole-model graph would have to trace.
Compiling takes tens of seconds (more on a cold inductor cache) and pays only on long runs, so
it is off by default (BENCHMARKS.md). The compiled layers compute the same function (float
rounding aside; tests check 1e-5 against the oracle).
"""

from __future__ import annotations

from typing import Any

import torch

from pllscore.errors import ModelError

__all__ = ["compile_layers", "find_layers"]


def find_layers(model: Any) -> torch.nn.ModuleList | None:
    """The model's stack of repeated layers: its largest ModuleList whose entries share one class."""
    best: torch.nn.ModuleList | None = None
    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) > 0:
            if len({type(m) for m in module}) == 1 and (best is None or len(module) > len(best)):
                best = module
    return best


def compile_layers(model: Any) -> int:
    """Compile each of ``model``'s layers in place; the number compiled."""
    layers = find_layers(model)
    if layers is None:
        raise ModelError(f"compile=True found no stack of layers in {type(model).__name__}; leave compile off")
    for layer in layers:
        if not getattr(layer, "_pllscore_compiled", False):
            layer.compile(dynamic=True)
            layer._pllscore_compiled = True
    return len(layers)
