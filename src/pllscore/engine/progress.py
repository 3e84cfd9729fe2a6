"""What the progress bar of a batched run says, and where its batches are counted.

An engine's run of batches (:func:`pllscore.engine.executor.run_batches`) draws its own bar, counted in the
unit its items are (masked copies, texts, windows). Two things set from above change that, for the
duration of a ``with`` block, without passing anything through the scorers between:

- :func:`stage` names what is running (``"model 2 of 2 (tiny-gpt2)"``); a bar's description starts with it
  (``"model 2 of 2 (tiny-gpt2): masked copies"``).
- :func:`reporting` takes a function that is told, after each batch, how much of a run's work is done
  (``done``, ``total``, in the run's own unit): a file run counts texts, its chunk's batches moving its bar
  within the chunk, and the engine draws no bar of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import Any

from pllscore.engine.scoped import scoped

__all__ = ["Report", "bar", "described", "model_stage", "reporting", "stage"]

#: told after each finished batch: how much of a run of batches is done, of its total (in its unit)
Report = Callable[[int, int], None]

_STAGE: ContextVar[str | None] = ContextVar("pllscore_stage", default=None)
_REPORT: ContextVar[Report | None] = ContextVar("pllscore_report", default=None)


def stage(name: str | None) -> AbstractContextManager[None]:
    """Bars drawn in the block say ``name`` first (None: as they are)."""
    return scoped(_STAGE, name)


def reporting(report: Report | None) -> AbstractContextManager[None]:
    """Runs of batches in the block tell ``report`` their progress instead of drawing a bar."""
    return scoped(_REPORT, report)


def model_stage(i: int, n: int, name: str, what: str | None = None) -> str | None:
    """The stage of model ``i`` (from 1) of ``n`` in a run of several (``"model 2 of 2 (tiny-gpt2)"``), then
    ``what`` it scores (``"model 1 of 2 (tiny-bert), words"``); a run of one model says ``what`` only (None: its
    bars say what they count only)."""
    head = f"model {i} of {n} ({name})" if n > 1 else None
    return ", ".join(p for p in (head, what) if p) or None


def described(desc: str) -> str:
    """``desc`` after the stage's name, if one is set."""
    name = _STAGE.get()
    return f"{name}: {desc}" if name else desc


class _Told:
    """A bar's ``update`` and ``close``, told to a :data:`Report` instead of drawn."""

    def __init__(self, report: Report, total: int, initial: int) -> None:
        self.report, self.total, self.n = report, total, initial
        if initial:
            report(initial, total)

    def update(self, n: int) -> None:
        self.n += n
        self.report(self.n, self.total)

    def close(self) -> None:
        pass


def bar(total: int, *, initial: int, desc: str, unit: str, progress: bool | None) -> Any:
    """The bar of one run of batches: drawn by tqdm on stderr (``progress`` None: only when stderr is a terminal;
    False: none), or, inside :func:`reporting` and unless ``progress`` is False, told to its function."""
    report = _REPORT.get()
    if report is not None and progress is not False:
        return _Told(report, total, initial)
    from tqdm.auto import tqdm

    disable = None if progress is None else not progress
    return tqdm(total=total, initial=initial, desc=described(desc), unit=unit, disable=disable, leave=False)
