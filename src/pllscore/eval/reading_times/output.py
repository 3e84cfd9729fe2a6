"""The output folder of ``pllscore reading-times``: which folders a run may write into, and how it writes.

A run writes into a new or empty folder, into the folder of a run it continues (one that holds only the
kept surprisals of :mod:`.cache`, as an interrupted run leaves it), or, with ``force``, into the folder of
an earlier reading-times run, which it replaces. Any other folder (a BLiMP or diagnose run, a scratch
folder with files in it) is refused before a model is loaded, with or without ``force``. The tables are
written whole into a new folder beside the output (:func:`pllscore.io.parts.replacing`), which then
takes its place: no file of an earlier run survives (its figures, its tables, the surprisals of models
this run does not have), and a failing run leaves the folder as it was.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.eval.reading_times.cache import CACHE

__all__ = ["KIND", "check_output", "write_output"]

KIND = "reading-times"


def _kind(out: Path) -> str | None:
    try:
        return str(json.loads((out / "meta.json").read_text()).get("kind"))
    except (OSError, ValueError, AttributeError):
        return None


def check_output(output: str | os.PathLike[str] | None, force: bool) -> Path | None:
    """The output folder, checked before any model is loaded (see the module's docstring); None for none."""
    if output is None:
        return None
    out = Path(output)
    where = os.fspath(out)
    if not out.exists():
        return out
    if not out.is_dir():
        raise InputError(f"output {where!r} is a file; give a folder for words.csv and fits.csv")
    names = {p.name for p in out.iterdir()}
    if names <= {CACHE}:  # new, empty, or an interrupted run's kept surprisals: continued
        return out
    kind = _kind(out)
    if kind == KIND:
        if force:
            return out
        raise InputError(
            f"output folder {where!r} holds a reading-times run; pass --force to replace it (its surprisals are "
            "reused where the model, settings and words match), or choose another folder"
        )
    what = f"{kind} results" if kind and kind != "None" else "other files"
    raise InputError(
        f"output folder {where!r} holds {what}, not a reading-times run; choose another folder "
        "(--force replaces only an earlier reading-times run)"
    )


def write_output(out: Path, files: dict[str, Any], meta: dict[str, Any], labels: list[str]) -> None:
    """Write the run into ``out`` as a whole: ``files`` (name -> DataFrame, as csv), ``meta.json``, and the kept
    surprisals of ``labels`` (``surprisals/<label>.json``) that the folder holds."""
    from pllscore.io.parts import replacing, write_json, write_part

    check_output(out, force=True)  # again: another process may have written there while this one scored
    with replacing(out) as fresh:
        for name, frame in files.items():
            write_part(fresh / name, frame, "csv")
        write_json(fresh / "meta.json", meta)
        for label in labels:
            kept = out / CACHE / f"{label}.json"
            if kept.is_file():
                (fresh / CACHE).mkdir(exist_ok=True)
                shutil.copy2(kept, fresh / CACHE / kept.name)
