"""What a BabyLM run keeps beside the official results tree: a record per finished (revision, task), and provenance.

Each task's files are written into a new folder beside their place, which then takes it whole
(:func:`~pllscore.io.parts.replacing`), and only then is its record written (atomically,
:func:`~pllscore.io.parts.write_json`): ``RESULTS/<model>/.pllscore/done/<backend>/<convention>/<revision>/
<task folder>.json``. A record holds the task's summary rows and what made them (the checkpoint's identity, the
data files' content, the settings), so a run stopped by Ctrl-C or a kill resumes by (revision, task), and the
summary is made from the records, whichever run wrote them. ``RESULTS/<model>/provenance.json`` lists every run
(command, date, versions, settings, checkpoints). Nothing here is in the official tree, which stays exactly the
pipeline's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.eval.babylm.checkpoints import Checkpoint
from pllscore.eval.babylm.layout import TaskFolder

__all__ = ["Records", "Unit", "by_checkpoint", "commit_task", "data_fingerprint"]

_HIDDEN = ".pllscore"


@dataclass(frozen=True)
class Unit:
    """One (checkpoint, convention, task): what runs, is written and is resumed as one."""

    checkpoint: Checkpoint
    convention: str
    task: TaskFolder

    @property
    def label(self) -> str:
        """``chck_1M/blimp_fast`` (``chck_1M/blimp_fast (pllscore)`` for pllscore's convention)."""
        tail = "" if self.convention == "babylm" else f" ({self.convention})"
        return f"{self.checkpoint.revision}/{self.task.folder}{tail}"


def by_checkpoint(units: Sequence[Unit]) -> list[tuple[Checkpoint, list[Unit]]]:
    """The units grouped by checkpoint, in order."""
    groups: dict[Checkpoint, list[Unit]] = {}
    for u in units:
        groups.setdefault(u.checkpoint, []).append(u)
    return list(groups.items())


def data_fingerprint(task: TaskFolder) -> str:
    """SHA-256 over a task's data files (its JSONL files by name, or the reading csv)."""
    from pllscore.io.provenance import content_fingerprint

    files = [task.path] if task.path.is_file() else sorted(p for p in task.path.rglob("*") if p.is_file())
    return content_fingerprint(files)


class Records:
    """The records under ``RESULTS/<model>/`` (``root``) of one backend."""

    def __init__(self, root: Path, backend: str) -> None:
        self.root, self.backend = root, backend
        self._hidden = root / _HIDDEN

    def _path(self, unit: Unit) -> Path:
        rev = unit.checkpoint.revision
        return self._hidden / "done" / self.backend / unit.convention / rev / f"{unit.task.folder}.json"

    def read(self, unit: Unit) -> dict[str, Any] | None:
        """The record of ``unit``, or None (never finished, or unreadable: then it runs again)."""
        try:
            return json.loads(self._path(unit).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def write(self, unit: Unit, made_by: dict[str, Any], rows: Sequence[tuple[str, float]]) -> None:
        """Record ``unit`` as finished, with its summary rows."""
        from pllscore.io.parts import write_json
        from pllscore.io.provenance import now

        path = self._path(unit)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, {**made_by, "date": now(), "summary": [[str(g), float(v)] for g, v in rows]})

    def all(self) -> list[dict[str, Any]]:
        """Every record under the root, of every backend, with where it is from (backend, convention, revision,
        task folder)."""
        out = []
        done = self._hidden / "done"
        for path in sorted(done.glob("*/*/*/*.json")) if done.is_dir() else []:
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            backend, convention, revision = path.parts[-4:-1]
            out.append({**record, "backend": backend, "convention": convention, "revision": revision,
                        "folder": path.stem})  # fmt: skip
        return out

    def add_run(self, run: dict[str, Any]) -> None:
        """Add (or update: the same ``run["id"]``) this run's entry of ``provenance.json``."""
        from pllscore.io.parts import write_json

        path = self.root / "provenance.json"
        try:
            earlier = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            earlier = {}
        runs = [r for r in earlier.get("runs", []) if r.get("id") != run["id"]]
        self.root.mkdir(parents=True, exist_ok=True)
        write_json(path, {"kind": "babylm", "runs": [*runs, run]})


def commit_task(out: Path, write: Callable[[Path], None]) -> None:
    """Write one task's files through ``write(folder)`` into a new folder that then takes ``out``'s place whole:
    an interrupted task leaves no file of its own behind, and an earlier run's files of it none beside the new."""
    from pllscore.io.parts import replacing

    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with replacing(out) as fresh:
            write(fresh)
    except OSError as e:
        raise InputError(f"cannot write {os.fspath(out)}: {e.strerror or e}") from None
