"""Finished batches kept across an interrupt, so that a resumed run does not compute them again.

A file run scores its input in chunks and commits each finished chunk (:mod:`pllscore.jobs.local`). Inside a
chunk, the engine runs batches whose items (masked copies, texts, windows) are packed by length, so a finished
batch rarely finishes a text; and a text's numbers depend, in the last float32 bits, on the batch it was run in.
What is kept of an unfinished chunk is therefore the engine's own work: for each run of batches of the chunk
(:func:`pllscore.engine.executor.run_batches`), in order, the values its finished batches filed and which items
they were. A resumed run scores the same chunk again under a :class:`BatchLog` made from that record: each run
of batches packs its items as before, files the kept values, and runs only the batches not finished, each with
the same items as the first time, so every number is the one an uninterrupted run computes.

A run of batches is matched by its order in the chunk and by a key of its item lengths, token budget and
packing; at the first that differs (another ``max_tokens``, another model) nothing more is restored. The
record is an ``.npz`` file of plain arrays (read without pickle) with a JSON outline of where each belongs.
"""

from __future__ import annotations

import hashlib
import io
import json
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from pllscore.engine.scoped import scoped

__all__ = ["BatchLog", "done_mask", "keeping"]

_LOG: ContextVar[BatchLog | None] = ContextVar("pllscore_batch_log", default=None)


@dataclass
class _Run:
    key: str
    done: np.ndarray  # the executor's own mask, updated as its batches finish
    values: Any  # the engine's output container (a dict of arrays, or a list per item)


class BatchLog:
    """The runs of batches of one chunk, in order: what each filed, and which of its items are done.

    ``saved``: the bytes :meth:`dump` gave in an interrupted run of the same chunk (None: nothing kept).
    """

    def __init__(self, saved: bytes | None = None) -> None:
        self._runs: list[_Run] = []
        self._saved = _load(saved) if saved else []
        self.restored = 0  # items whose values came from ``saved``

    def join(self, key: str, n: int, values: Any) -> np.ndarray:
        """Register the next run of batches (``n`` items, filing into ``values``); its done mask: the items
        restored from the record, whose values are now in ``values``."""
        done = np.zeros(n, dtype=bool)
        k = len(self._runs)
        if len(self._saved) > k:
            old_key, old_done, old_values = self._saved[k]
            if old_key == key and len(old_done) == n and _restore(values, old_values):
                done |= old_done
                self.restored += int(old_done.sum())
            else:  # another plan from here on: compute the rest afresh
                del self._saved[k:]
        self._runs.append(_Run(key, done, values))
        return done

    @property
    def any_done(self) -> bool:
        """Whether some batch is done (a record worth keeping)."""
        return any(r.done.any() for r in self._runs)

    def dump(self) -> bytes | None:
        """The record of the batches done, or None when there is none (or an engine filed a value this module
        cannot write, which it then does not keep)."""
        if not self.any_done:
            return None
        arrays: list[np.ndarray] = []
        try:
            outline = [{"key": r.key, "done": _flat(r.done.copy(), arrays), "values": _flat(r.values, arrays)}
                       for r in self._runs]  # fmt: skip
        except TypeError:
            return None
        buf = io.BytesIO()
        np.savez(buf, outline=np.array(json.dumps(outline)), **{f"a{i}": a for i, a in enumerate(arrays)})
        return buf.getvalue()


def _load(data: bytes) -> list[tuple[str, np.ndarray, Any]]:
    """The runs a record holds: key, done mask, values; none when it cannot be read."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        outline = json.loads(str(arrays.pop("outline")))
        return [(r["key"], _unflat(r["done"], arrays), _unflat(r["values"], arrays)) for r in outline]
    except (ValueError, KeyError, TypeError, OSError):
        return []


def _flat(value: Any, arrays: list[np.ndarray]) -> Any:
    """``value`` as JSON, its arrays replaced by their place in ``arrays``."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        arrays.append(value)
        return {"a": len(arrays) - 1}
    if isinstance(value, dict):
        return {"d": {str(k): _flat(v, arrays) for k, v in value.items()}}
    if isinstance(value, (list, tuple)):
        return {"l": [_flat(v, arrays) for v in value]}
    raise TypeError(type(value).__name__)


def _unflat(node: Any, arrays: dict[str, np.ndarray]) -> Any:
    if node is None:
        return None
    if "a" in node:
        return arrays[f"a{node['a']}"]
    if "d" in node:
        return {k: _unflat(v, arrays) for k, v in node["d"].items()}
    return [_unflat(v, arrays) for v in node["l"]]


def _restore(values: Any, saved: Any) -> bool:
    """Put ``saved`` into the container ``values`` in place; False when their shapes differ."""
    if isinstance(values, dict) and isinstance(saved, dict) and values.keys() == saved.keys():
        if all(np.shape(values[k]) == np.shape(saved[k]) for k in values):
            values.update(saved)
            return True
    if isinstance(values, list) and isinstance(saved, list) and len(values) == len(saved):
        values[:] = saved
        return True
    return False


def keeping(log: BatchLog | None) -> AbstractContextManager[None]:
    """Runs of batches in the block (those that name their outputs) register with ``log``."""
    return scoped(_LOG, log)


def done_mask(lengths: np.ndarray, max_tokens: int, padding: str, min_fill: float, values: Any) -> np.ndarray:
    """The items of a run of batches already done: those restored by the :class:`BatchLog` of the block, if
    any (``values``: the container the run files into; None: a run that is not kept)."""
    log = _LOG.get()
    if log is None or values is None:
        return np.zeros(len(lengths), dtype=bool)
    h = hashlib.sha256(np.ascontiguousarray(lengths, dtype=np.int64).tobytes())
    h.update(f"{max_tokens}|{padding}|{min_fill!r}".encode())
    return log.join(h.hexdigest(), len(lengths), values)
