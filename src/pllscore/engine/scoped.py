"""A context variable set for the duration of a ``with`` block.

The engine's run-wide state (the stage a bar names, where progress is told, the batch log of a file run, whether
batches overlap) reaches every run of batches inside a block this way, without passing anything through the
scorers between.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["scoped"]

T = TypeVar("T")


@contextlib.contextmanager
def scoped(var: ContextVar[T], value: T) -> Iterator[None]:
    """``var`` is ``value`` inside the block, and what it was before after it (also when the block raises)."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)
