"""The BabyLM evaluation folder (the tasks found in it) and the official results tree (where each task's files go).

An evaluation folder is the pipeline's ``fast_eval`` or ``full_eval`` as users download it: one sub-folder per
task (``blimp_fast``, ``supplement_fast``, ...) and ``reading/reading_data.csv``. :func:`find_tasks` names the
tasks in it (a known folder that is missing is skipped with one line saying so; an unknown one is named), and
:func:`select` keeps those ``--tasks`` asks for. The results tree is the official pipeline's, so that its
``collate_preds.py`` collects a run as it is: ``RESULTS/<model name>/<revision>/zero_shot/<backend>/<task>/
<dataset>/`` (``best_temperature_report.txt``, ``predictions.json``) and ``.../zero_shot/<backend>/reading/``.
pllscore's own convention writes the same files under ``pllscore/`` in place of ``zero_shot/``. Pure logic: no
model, no torch.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from pllscore.errors import InputError

__all__ = ["BACKENDS", "CONVENTIONS", "FAST", "FULL", "TaskFolder", "find_tasks", "model_name", "select", "task_output"]

#: the official backends, under their names
BACKENDS = ("causal", "mlm", "mntp", "enc_dec_mask", "enc_dec_prefix")
#: ``babylm``: the official pipeline's numbers; ``pllscore``: pllscore's exact metrics
CONVENTIONS = ("babylm", "pllscore")
#: the top folder of each convention's files under ``RESULTS/<model>/<revision>/``
_TOP = {"babylm": "zero_shot", "pllscore": "pllscore"}


@dataclass(frozen=True)
class TaskFolder:
    """One task of an evaluation folder. ``folder``: its name in the evaluation folder (``blimp_fast``), which
    also names it in ``--tasks``, the summary and the resume records; ``short``: the name ``--tasks`` takes for it
    in either suite (``blimp``, ``supplement``); ``task``: the official task (``blimp`` for the supplement too,
    ``reading``); ``dataset``: the results tree's last folder (the data folder's name; None for reading);
    ``path``: the folder (for reading, the csv file)."""

    folder: str
    short: str
    task: str
    dataset: str | None
    path: Path

    @property
    def reading(self) -> bool:
        """Whether this is the reading-times task (a csv file, not a folder of JSONL files)."""
        return self.task == "reading"


# (folder, short, task) of each suite; reading is the file reading/reading_data.csv in both
_COMMON = (
    ("wug_adj_nominalization", "wug_adj", "wug_adj"),
    ("wug_past_tense", "wug_past", "wug_past"),
    ("comps", "comps", "comps"),
    ("reading", "reading", "reading"),
)
FAST = (
    ("blimp_fast", "blimp", "blimp"),
    ("supplement_fast", "supplement", "blimp"),
    ("ewok_fast", "ewok", "ewok"),
    ("entity_tracking_fast", "entity_tracking", "entity_tracking"),
    *_COMMON,
)
FULL = (
    ("blimp_filtered", "blimp", "blimp"),
    ("supplement_filtered", "supplement", "blimp"),
    ("ewok_filtered", "ewok", "ewok"),
    ("entity_tracking", "entity_tracking", "entity_tracking"),
    *_COMMON,
)
READING_FILE = "reading_data.csv"


def _suite(names: set[str]) -> tuple[str, tuple[tuple[str, str, str], ...]]:
    """``("full_eval", FULL)`` when the folder holds a folder only the full suite has, else the fast suite."""
    only_full = {f for f, _, _ in FULL} - {f for f, _, _ in FAST}
    return ("full_eval", FULL) if names & only_full else ("fast_eval", FAST)


def find_tasks(data: str | os.PathLike[str]) -> tuple[list[TaskFolder], list[str]]:
    """The tasks of evaluation folder ``data``, in the pipeline's order, and one note per task skipped (its
    folder is missing) or folder not known (left alone). No task at all is an :class:`InputError`."""
    root = Path(data)
    if not root.is_dir():
        raise InputError(f"--data {os.fspath(root)!r} is not a folder; give the BabyLM evaluation folder (fast_eval)")
    present = {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")}
    suite, known = _suite(present)
    tasks, notes = [], []
    for folder, short, task in known:
        path = root / folder / READING_FILE if task == "reading" else root / folder
        if not path.exists():
            shown = f"{folder}/{READING_FILE}" if task == "reading" else f"{folder}/"
            notes.append(f"skipped {short}: {os.fspath(root)} has no {shown}")
            continue
        tasks.append(TaskFolder(folder, short, task, None if task == "reading" else folder, path))
    for name in sorted(present - {f for f, _, _ in known}):
        notes.append(f"{os.fspath(root / name)}: not a {suite} task folder; left alone")
    if not tasks:
        raise InputError(
            f"{os.fspath(root)} holds no BabyLM task folder (such as blimp_fast/, ewok_fast/ or reading/"
            f"{READING_FILE}); give the pipeline's evaluation folder (fast_eval or full_eval)"
        )
    return tasks, notes


def select(tasks: Sequence[TaskFolder], wanted: Sequence[str] | None) -> list[TaskFolder]:
    """The tasks named in ``wanted`` (short or folder names, comma-separated or not), in the pipeline's order;
    all of them for None. A name that is no task of the folder is an :class:`InputError` listing those it has."""
    if not wanted:
        return list(tasks)
    names = [n.strip() for w in wanted for n in str(w).split(",") if n.strip()]
    known = {n for t in tasks for n in (t.short, t.folder)}
    everywhere = {n for suite in (FAST, FULL) for f, s, _ in suite for n in (f, s)}
    for name in names:
        if name not in known:
            why = "is missing from the data folder" if name in everywhere else "is not a BabyLM task"
            raise InputError(f"--tasks {name}: {name} {why}; choose from {', '.join(t.short for t in tasks)}")
    return [t for t in tasks if t.short in names or t.folder in names]


def model_name(model: str | os.PathLike[str]) -> str:
    """The results tree's model folder: the stem of the model's name or path, as the official pipeline and its
    ``collate_preds.py`` take it (``Path(name).stem``: ``org/SmolLM2-135M`` -> ``SmolLM2-135M``; a dot's tail is
    cut, ``gpt-1.5`` -> ``gpt-1``)."""
    text = os.fspath(model).rstrip("/\\")
    return PurePath(text).stem or text


def task_output(
    results: str | os.PathLike[str], model: str, revision: str, convention: str, backend: str, task: TaskFolder
) -> Path:
    """The folder of one task's files: ``RESULTS/<model>/<revision>/zero_shot/<backend>/<task>/<dataset>/``,
    or ``.../<backend>/reading/``; ``pllscore/`` in place of ``zero_shot/`` for pllscore's convention.

    The official ``eval_zero_shot_fast.sh`` writes an encoder-decoder's reading times under ``enc_dec/``, where
    ``collate_preds.py`` does not look for them (it reads ``<backend>/reading/``): they go where it looks."""
    base = Path(results) / model / revision / _TOP[convention] / backend / task.task
    return base if task.dataset is None else base / task.dataset
