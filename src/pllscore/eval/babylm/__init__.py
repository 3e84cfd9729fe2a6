"""The BabyLM Challenge's zero-shot evaluation (``pllscore babylm``), with the official numbers and pllscore's own.

:mod:`.layout` finds the task folders of an evaluation folder (``fast_eval``, ``full_eval``) and names the
official results tree's paths; :mod:`.checkpoints` resolves the revisions (Hub revisions, or a local folder whose
sub-folders are the checkpoints); the task modules read, tokenise and score each task (:mod:`.tasks_data` and
:mod:`.zero_shot` the sentence tasks, :mod:`.reading` the reading times); :mod:`.run` loads each checkpoint once
and runs every task on it (locally or on Ray actors), writing each (revision, task) atomically so that an
interrupted run resumes; :mod:`.summary` gathers every task and grouping x every revision into one table.
``pllscore.babylm`` is :func:`pllscore.eval.babylm.run.babylm`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = ["BabylmRun", "babylm"]

# the task modules import this package; the run (which imports them) loads only when asked for
_LAZY = {"babylm": "pllscore.eval.babylm.run", "BabylmRun": "pllscore.eval.babylm.run"}

if TYPE_CHECKING:
    from pllscore.eval.babylm.run import BabylmRun, babylm


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pllscore.eval.babylm' has no attribute {name!r}")
