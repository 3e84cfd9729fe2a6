"""Each model's finished surprisals, kept in the output folder so that an interrupted run loses no model.

As soon as a model's surprisals are computed they are written to ``OUTPUT/surprisals/<label>.json``
(atomically) with the key they were made under: a SHA-256 of the model's identity (its name and a
fingerprint of its files, or its Hub revision), the settings that change a number (dtype, autocast,
revision, kind, BOS, EOS, stride, the metric, the BOW correction, the windowing), the pllscore version and
the words of every text. The same run again (after Ctrl-C, a crash, or with ``--force`` to re-fit with
another ``--spillover`` or ``--range``) takes a model's surprisals from its file when the key matches,
without loading the model; a file whose key differs is scored afresh and replaced. A model is kept whole
or not at all: an interrupted model is scored again from its first text.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["CACHE", "cache_key", "cached", "keep"]

#: the folder of the kept surprisals, inside the output folder
CACHE = "surprisals"


def cache_key(identity: dict[str, Any], settings: dict[str, Any], texts: Sequence[str], words: Sequence[Any]) -> str:
    """The key a model's surprisals are kept under: its ``identity`` (name, fingerprint), the ``settings`` that
    change a number, the pllscore version and the words of every text (in order)."""
    from pllscore._version import __version__

    what = {
        "model": {"name": identity.get("name"), "fingerprint": identity.get("fingerprint")},
        "settings": settings,
        "pllscore": __version__,
        "texts": [[str(t), [str(w) for w in ws]] for t, ws in zip(texts, words)],
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()


def _path(output: Path, label: str) -> Path:
    return output / CACHE / f"{label}.json"


def cached(output: Path | None, label: str, key: str) -> tuple[list[Any], dict[str, Any]] | None:
    """The kept surprisals of ``label`` (per text, bits) and its model's record, when they were made under
    ``key``; else None."""
    if output is None:
        return None
    path = _path(output, label)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("surprisals"), list):
        return None
    return [np.asarray(v, dtype=float) for v in data["surprisals"]], dict(data.get("record") or {})


def keep(output: Path | None, label: str, key: str, record: dict[str, Any], values: Sequence[Any]) -> None:
    """Write ``label``'s surprisals (per text, bits) and its model's ``record`` with their ``key`` into the
    output folder, atomically."""
    if output is None:
        return
    from pllscore.io.parts import write_json

    path = _path(output, label)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        from pllscore.errors import InputError

        raise InputError(f"cannot create {os.fspath(path.parent)!r}: {e.strerror}") from None
    write_json(path, {"key": key, "record": record, "surprisals": [[float(x) for x in v] for v in values]})
