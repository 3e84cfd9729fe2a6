"""The one-batch-ahead executor's switch (``overlap``) and its self-check on accelerators.

:func:`pllscore.engine.executor.run_batches` launches batch i + 1 before it finishes batch i, and on CUDA
copies through pinned memory without blocking, with one event per batch (see that module). A race there
(a pinned buffer reused before its copy is done, an event recorded on the wrong stream) would give wrong
numbers silently, on exactly the hardware serious users have, where the test suite has not run. So on an
accelerator the first batch of each path of each engine (the masked copies, the causal batches, the prefix
trees, ...) is checked once per process: after its overlapped result is filed, the same batch runs again
on the plain path (blocking copies, launched and finished at once) and the two results must agree to
:data:`TOLERANCE`; otherwise :class:`~pllscore.errors.ModelError` stops the run, asking for a report and
for ``overlap=False`` (``--no-overlap``) meanwhile. One batch more per path and model: a small cost.

``PLLSCORE_CHECK_OVERLAP=1`` runs the check on the CPU too (for tests; its figures are in the GPUs guide).
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pllscore.engine.scoped import scoped
from pllscore.errors import ModelError

__all__ = ["TOLERANCE", "checked_launch", "overlap_on", "overlapping", "record"]

#: the largest difference allowed between a batch run overlapped and the same batch run one at a time
TOLERANCE = 1e-5
_FORCE = "PLLSCORE_CHECK_OVERLAP"

Launch = Callable[[np.ndarray], Callable[[], None]]


@dataclass
class _Run:
    """How the batches of the current engine run: one ahead or not, and the paths already checked."""

    overlap: bool = True
    checked: set[Any] = field(default_factory=set)


# outside any engine (the executor called directly): overlapped, paths checked once per process
_PROCESS = _Run()
_RUN: ContextVar[_Run | None] = ContextVar("pllscore_run", default=None)
# while a checked batch finishes: the host copies of its outputs, and the device types they came from
_SEEN: ContextVar[list[tuple[dict[str, np.ndarray], set[str]]] | None] = ContextVar("pllscore_seen", default=None)


@contextlib.contextmanager
def overlapping(on: bool = True, checked: set[Any] | None = None) -> Iterator[None]:
    """Run the batches inside one ahead of another (``on``) or each launched and finished in turn with blocking
    copies; ``checked``: the paths whose first batch was checked (an engine's own; default a new set)."""
    with scoped(_RUN, _Run(bool(on), set() if checked is None else checked)):
        yield


def overlap_on() -> bool:
    """Whether batches run one ahead of another here (False: the plain, blocking path)."""
    return (_RUN.get() or _PROCESS).overlap


def record(outputs: dict[str, np.ndarray], devices: set[str]) -> None:
    """Keep the host copies of a batch's outputs (and the types of the devices they were computed on) while its
    first batch is being checked; nothing otherwise."""
    seen = _SEEN.get()
    if seen is not None:
        seen.append((outputs, devices))


def checked_launch(launch: Launch) -> Launch:
    """``launch``, its first batch checked against the plain path where the batches overlap, run on an
    accelerator (or ``PLLSCORE_CHECK_OVERLAP`` is set) and this path was not checked yet."""
    run = _RUN.get() or _PROCESS
    site = _site(launch)
    if not run.overlap or site in run.checked:
        return launch
    first = True

    def launch_checked(batch: np.ndarray) -> Callable[[], None]:
        nonlocal first
        if not first:
            return launch(batch)
        first = False
        finish = launch(batch)

        def finish_checked() -> None:
            ahead = _outputs_of(finish)
            if not ahead:  # outputs that stay on the device (encoder states): checked where they are read
                return
            run.checked.add(site)
            devices = set().union(*(d for _, d in ahead))
            if devices <= {"cpu"} and not _forced():
                return
            with overlapping(False, run.checked):
                plain = _outputs_of(launch(batch))
            _compare(ahead, plain, devices)

        return finish_checked

    return launch_checked


def _outputs_of(finish: Callable[[], None]) -> list[tuple[dict[str, np.ndarray], set[str]]]:
    seen: list[tuple[dict[str, np.ndarray], set[str]]] = []
    with scoped(_SEEN, seen):
        finish()
    return seen


def _forced() -> bool:
    return os.environ.get(_FORCE, "").strip().lower() not in ("", "0", "false", "no")


def _site(launch: Launch) -> Any:
    """The code a launch runs (through :func:`functools.wraps`-style ``__wrapped__``): one path of an engine."""
    inner = inspect.unwrap(launch)
    return getattr(inner, "__code__", inner)


def _compare(
    ahead: list[tuple[dict[str, np.ndarray], set[str]]],
    plain: list[tuple[dict[str, np.ndarray], set[str]]],
    devices: set[str],
) -> None:
    """Refuse to go on when the overlapped outputs differ from the plain ones by more than :data:`TOLERANCE`."""
    worst = 0.0 if len(ahead) == len(plain) else np.inf
    for (a, _), (b, _) in zip(ahead, plain):
        if a.keys() != b.keys():
            worst = np.inf
        for name in a.keys() & b.keys():
            x, y = np.asarray(a[name], dtype=np.float64), np.asarray(b[name], dtype=np.float64)
            if x.shape != y.shape or not np.array_equal(np.isnan(x), np.isnan(y)):
                worst = np.inf
                continue
            both = ~np.isnan(x)
            if both.any():
                gap = np.where(x[both] == y[both], 0.0, np.abs(x[both] - y[both]))  # inf == inf: no gap
                worst = max(worst, float(gap.max()))
    if worst > TOLERANCE:
        where = "/".join(sorted(devices))
        raise ModelError(
            f"self-check failed on {where}: a batch run one ahead of the next gave other numbers than the same "
            f"batch run alone (by {worst:.2g}, more than {TOLERANCE:g}), a fault in pllscore's host/device overlap; "
            "please report it to pllscore's maintainers with this message, torch's version and the GPU, and run "
            "with overlap=False meanwhile"
        )
