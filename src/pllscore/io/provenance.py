"""What made an output: library versions, the command line, the time, the models."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "command_line",
    "content_fingerprint",
    "file_sha256",
    "folder_fingerprint",
    "local_name",
    "model_identity",
    "model_key",
    "model_record",
    "named_model_identity",
    "now",
    "placement",
    "run_record",
    "source_file",
    "versions",
    "weights_fingerprint",
]


def versions() -> dict[str, str]:
    """Versions of pllscore, torch, transformers and Python."""
    import torch
    import transformers

    from pllscore._version import __version__

    return {
        "pllscore": __version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": sys.version.split()[0],
    }


def command_line() -> str | None:
    """The ``pllscore ...`` command being run, quoted for a POSIX shell (pasted, it runs the same thing), or None
    when called from Python."""
    return shlex.join(["pllscore", *sys.argv[1:]]) if Path(sys.argv[0]).name.startswith("pllscore") else None


def now() -> str:
    """The current UTC time, ISO 8601, to the second."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def source_file(scorer: Any) -> str | None:
    """The single file a scorer's model was read from (a GGUF), or None.

    Its ``source_file`` attribute where set, else its name where that is a file
    (``pllscore.load("model.gguf")`` names the scorer by the file's path).
    """
    source = getattr(scorer, "source_file", None)
    if source is None:
        name = getattr(scorer, "name", None)
        source = name if isinstance(name, (str, os.PathLike)) else None
    return os.fspath(source) if source is not None and os.path.isfile(source) else None


def _file_record(scorer: Any) -> dict[str, Any]:
    """``{"model_file": {"name", "sha256"}}`` for a model read from one file, else nothing."""
    source = source_file(scorer)
    return {} if source is None else {"model_file": {"name": os.path.basename(source), "sha256": file_sha256(source)}}


def model_record(scorer: Any) -> dict[str, Any]:
    """Name, resolved revision (when known) and kind of a scorer's model (and its file's name and SHA-256; an
    encoder-decoder LM's ``eos``; where a device map placed it)."""
    eos = {"eos": scorer.eos} if scorer.kind == "seq2seq" else {}
    placed = getattr(scorer, "placement", None) or {}
    return {
        "name": scorer.name,
        "revision": scorer.revision,
        "kind": scorer.kind,
        **eos,
        **_file_record(scorer),
        **placed,
    }


def placement(scorer: Any) -> dict[str, Any]:
    """Where a scorer's model ran: ``{"device": ...}``, or for a model a device map placed, the map it got
    (``device_map``: module -> ``cuda:N``, ``cpu`` or ``disk``) with its ``max_memory`` and ``offload_folder``."""
    placed = getattr(scorer, "placement", None)
    return dict(placed) if placed else {"device": str(scorer.device)}


def run_record(scorer: Any, metrics: Sequence[str]) -> dict[str, Any]:
    """Model (and its file's name and SHA-256), revision, metrics, command and library versions of a run."""
    return {
        "model": scorer.name,
        "revision": scorer.revision,
        "kind": scorer.kind,
        **({"eos": scorer.eos} if scorer.kind == "seq2seq" else {}),
        **_file_record(scorer),
        "metrics": list(metrics),
        "dtype": str(getattr(scorer, "dtype", next(scorer.model.parameters()).dtype)).removeprefix("torch."),
        "autocast": bool(getattr(scorer, "autocast", False)),
        **placement(scorer),
        "overlap": bool(getattr(getattr(scorer, "engine", None), "overlap", True)),
        "command": command_line(),
        **versions(),
    }


# files in a model folder that do not change what the model computes
_NOT_MODEL_FILES = {"README.md", "training_log.json", "training_log_continued.json", ".gitattributes"}
_HASH_CACHE: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes (cached per path, size and modification time within a process)."""
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if key not in _HASH_CACHE:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _HASH_CACHE[key] = h.hexdigest()
    return _HASH_CACHE[key]


def content_fingerprint(paths: Sequence[str | os.PathLike[str]]) -> str:
    """One SHA-256 over the contents of ``paths`` in the given order (names left out: a moved file is the same)."""
    h = hashlib.sha256()
    for p in paths:
        h.update(file_sha256(p).encode())
    return h.hexdigest()


def folder_fingerprint(folder: str | os.PathLike[str]) -> str:
    """SHA-256 over a model folder's files (config, weights, tokenizer), by name and content."""
    h = hashlib.sha256()
    for p in sorted(Path(folder).iterdir()):
        if p.is_file() and p.name not in _NOT_MODEL_FILES and not p.name.startswith("."):
            h.update(p.name.encode() + b"\0" + file_sha256(p).encode() + b"\n")
    return h.hexdigest()


def weights_fingerprint(model: Any) -> str:
    """SHA-256 over a model's parameters and buffers (for models that are not a folder or a Hub revision)."""
    import torch

    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode() + b"\0" + str(t.dtype).encode() + str(tuple(t.shape)).encode())
        h.update(t.detach().to("cpu").reshape(-1).contiguous().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def model_identity(scorer: Any) -> dict[str, Any]:
    """What pins down a scorer's model: its name, resolved revision, and a fingerprint of its files.

    A local folder (or a single model file) is fingerprinted by content, so two folders with the
    same name but different weights differ; a Hub model is pinned by its resolved commit; a
    model built in memory by its parameters.
    """
    name = os.fspath(scorer.name)
    source = source_file(scorer)
    if source is not None:
        fingerprint = "sha256:" + file_sha256(source)
    elif os.path.isdir(name):
        fingerprint = "sha256:" + folder_fingerprint(name)
    elif getattr(scorer, "revision", None):
        fingerprint = f"revision:{scorer.revision}"
    else:
        fingerprint = "weights:" + weights_fingerprint(scorer.model)
    return {"name": local_name(name), "revision": getattr(scorer, "revision", None), "fingerprint": fingerprint}


def model_key(scorer: Any) -> str:
    """A short unique label for tables: the model's readable name and 12 hex digits of its fingerprint."""
    ident = model_identity(scorer)
    name = ident["name"].rstrip("/\\")
    label = os.path.basename(name) if os.path.exists(name) else name
    digest = ident["fingerprint"].split(":", 1)[1]
    return f"{label}@{digest[:12]}"


def named_model_identity(name: str | os.PathLike[str], revision: str | None = None) -> dict[str, Any]:
    """:func:`model_identity` of a model known only by name or path, without loading its weights.

    A local folder or file is fingerprinted by content (as :func:`model_identity` does); a Hub
    name by ``revision``, else by the commit of its config that transformers resolves (from its
    cache when offline), else by the name alone.
    """
    text = os.fspath(name)
    if os.path.isfile(text):
        fingerprint = "sha256:" + file_sha256(text)
    elif os.path.isdir(text):
        fingerprint = "sha256:" + folder_fingerprint(text)
    else:
        if revision is None:
            try:
                from transformers import AutoConfig

                revision = getattr(AutoConfig.from_pretrained(text), "_commit_hash", None)
            except (OSError, ValueError, KeyError):
                revision = None
        fingerprint = f"revision:{revision}" if revision else f"name:{text}"
    return {"name": local_name(text), "revision": revision, "fingerprint": fingerprint}


def local_name(name: str | os.PathLike[str]) -> str:
    """A model's name as recorded and sent elsewhere: a local path made absolute (it means the same from any
    folder), a Hub name as given."""
    text = os.fspath(name)
    return os.path.abspath(text) if os.path.exists(text) else text
