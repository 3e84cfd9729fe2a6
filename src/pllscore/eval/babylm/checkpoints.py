"""The checkpoints of a BabyLM run: Hub revisions, or the sub-folders of a local folder.

``--revision`` (repeatable) and ``--revisions-file`` (one a line; ``#`` starts a comment) name them. For a Hub
model each is a branch, tag or commit, checked against the Hub's list (or, offline, the local cache) before
anything runs. For a local folder the revisions are its sub-folders: transformers silently ignores
``revision=`` for a local path, so a revision is never passed to it. A folder that is itself a model (it has a
``config.json``) is the one checkpoint ``main``, unless its sub-folders hold the revisions asked for; a folder of
checkpoints without ``--revision`` runs all of its sub-folders that hold a model, in their natural order
(``chck_2M`` before ``chck_10M``). A revision the model does not have is one line naming what it has.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pllscore.errors import InputError, ModelError

__all__ = ["Checkpoint", "checkpoints", "read_revisions"]

MAIN = "main"


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint: ``revision`` names its results folder (``main``, ``chck_1M``); ``source`` is what is loaded
    (a local folder, or the Hub name); ``hub_revision`` the ``revision=`` for the Hub (None for a local folder)."""

    revision: str
    source: str
    hub_revision: str | None = None


def read_revisions(path: str | os.PathLike[str]) -> list[str]:
    """The revisions of a file, one a line (blank lines and ``#`` comments left out)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read --revisions-file {os.fspath(path)!r}: {e.strerror}") from None
    out = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    out = [r for r in out if r]
    if not out:
        raise InputError(f"--revisions-file {os.fspath(path)!r} names no revision (one a line)")
    return out


def _natural(name: str) -> list[object]:
    """Sort key: digits as numbers (``chck_2M`` before ``chck_10M``)."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def _is_model(folder: Path) -> bool:
    return (folder / "config.json").is_file() or any(folder.glob("*.gguf"))


def _local(root: Path, revisions: Sequence[str]) -> list[Checkpoint]:
    subs = sorted((p.name for p in root.iterdir() if p.is_dir() and _is_model(p)), key=_natural)
    if not revisions:
        if _is_model(root):
            return [Checkpoint(MAIN, os.fspath(root))]
        if not subs:
            raise InputError(
                f"model folder {os.fspath(root)!r} is empty: it holds no config.json and no checkpoint sub-folder "
                "with one; give a saved model, or a folder whose sub-folders are the checkpoints"
            )
        return [Checkpoint(s, os.fspath(root / s)) for s in subs]
    out = []
    for rev in revisions:
        if rev in subs:
            out.append(Checkpoint(rev, os.fspath(root / rev)))
        elif rev == MAIN and _is_model(root):
            out.append(Checkpoint(MAIN, os.fspath(root)))
        else:
            has = ", ".join(subs[:6]) + (f" and {len(subs) - 6} more" if len(subs) > 6 else "") if subs else "none"
            raise ModelError(
                f"--revision {rev}: the local model {os.fspath(root)!r} has no checkpoint sub-folder {rev!r} "
                f"(its checkpoints: {has}); a local folder's revisions are its sub-folders"
            )
    return out


def _hub_refs(name: str) -> set[str] | None:
    """The branches and tags of a Hub model, or None where the Hub cannot be asked (offline)."""
    try:
        from huggingface_hub import HfApi, constants

        if constants.HF_HUB_OFFLINE:
            return None
        refs = HfApi().list_repo_refs(name)
    except Exception:  # unreachable, unknown or gated: the load says why
        return None
    return {r.name for r in (*refs.branches, *refs.tags)}


def _in_cache(name: str, revision: str) -> bool:
    """Whether the local Hugging Face cache holds the config of ``name`` at ``revision``."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(name, "config.json", revision=revision)
    return isinstance(found, str)


def _hub(name: str, revisions: Sequence[str]) -> list[Checkpoint]:
    if not revisions:
        return [Checkpoint(MAIN, name)]
    refs = _hub_refs(name)
    for rev in revisions:
        commit = re.fullmatch(r"[0-9a-f]{7,40}", rev) is not None
        if refs is not None and rev not in refs and not commit:
            shown = ", ".join(sorted(refs, key=_natural)[:6]) or "none"
            raise ModelError(f"--revision {rev}: the Hub model {name!r} has no branch or tag {rev!r} (it has {shown})")
        if refs is None and not _in_cache(name, rev):
            raise ModelError(
                f"--revision {rev}: {name!r} at revision {rev!r} is not in the local Hugging Face cache and the Hub "
                "cannot be reached; download it first, or check the revision's name"
            )
    return [Checkpoint(rev, name, rev) for rev in revisions]


def checkpoints(
    model: str | os.PathLike[str],
    revisions: Sequence[str] | None = None,
    revisions_file: str | os.PathLike[str] | None = None,
) -> list[Checkpoint]:
    """The checkpoints to run, in order, each once: ``revisions`` then those of ``revisions_file``."""
    wanted = list(revisions or ()) + (read_revisions(revisions_file) if revisions_file is not None else [])
    wanted = list(dict.fromkeys(w.strip() for w in wanted if w.strip()))
    for rev in wanted:
        if rev in (".", "..") or "/" in rev or "\\" in rev:
            raise InputError(f"--revision {rev!r}: a revision names a folder of the results tree; give a plain name")
    path = Path(os.fspath(model))
    if path.is_dir():
        return _local(path, wanted)
    if path.is_file() and path.suffix == ".gguf":
        if wanted:
            raise InputError(f"--revision names checkpoints; the GGUF file {os.fspath(path)!r} is one: leave it out")
        return [Checkpoint(MAIN, os.fspath(path))]
    if path.exists() or os.fspath(model).startswith((".", os.sep, "~")):
        what = "is not a model folder" if path.exists() else "does not exist"
        raise ModelError(f"model {os.fspath(model)!r} {what}; give a saved model's folder or a Hub name")
    return _hub(os.fspath(model), wanted)
