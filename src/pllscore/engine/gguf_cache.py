"""Converted GGUF models kept in the user cache, so that a GGUF file is converted once.

Converting a GGUF file (reading its metadata, building its tokenizer, dequantizing its weights)
takes seconds; loading the result, saved as a transformers folder (``config.json``, the fast
tokenizer's files, ``model.safetensors`` in float32, memory-mapped when read), takes about as
long as any model folder. An entry lives in ``<cache>/gguf/<file stem>-<hash of its path>``;
``<cache>`` is ``$PLLSCORE_CACHE`` when set, else platformdirs' ``user_cache_dir("pllscore")``.

An entry is keyed by the GGUF file's size, modification time and the SHA-256 of its first
16 MiB (the header), and by the transformers and gguf versions that converted it. It is written
in a temporary folder beside it and renamed into place with its manifest written last, so an
interrupted conversion leaves no entry; the manifest records every file's size and a hash (for
``model.safetensors``, of its header). An entry whose key or files do not match is rebuilt, with
a one-line note on stderr, never used.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["cache_root", "discard", "entry_folder", "file_key", "lookup", "save_converted", "store"]

ENV = "PLLSCORE_CACHE"
FORMAT = 1
MANIFEST = "manifest.json"
WEIGHTS = "model.safetensors"
_HEADER_BYTES = 16 << 20
_TEMP_PREFIX = ".tmp-"
_STALE_TEMP_S = 3600.0  # a temporary folder this old belongs to a conversion that died


def cache_root() -> Path:
    """``$PLLSCORE_CACHE`` when set (and not empty), else the user cache folder of pllscore."""
    env = os.environ.get(ENV)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pllscore"))


def entry_folder(file: str | os.PathLike[str]) -> Path:
    """Where the converted model of GGUF file ``file`` is kept: one folder per file path."""
    real = os.path.realpath(file)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    stem = Path(real).name.removesuffix(".gguf").removesuffix(".GGUF") or "model"
    return cache_root() / "gguf" / f"{stem}-{digest}"


def file_key(file: str | os.PathLike[str]) -> dict[str, Any]:
    """What an entry must match: the file's size, modification time and header hash; the converters' versions."""
    import transformers

    try:
        from importlib.metadata import version

        gguf_version = version("gguf")
    except Exception:  # noqa: BLE001 - importable without metadata: the version is unknown, not an error
        gguf_version = "unknown"
    st = os.stat(file)
    digest = hashlib.sha256()
    with open(file, "rb") as f:
        digest.update(f.read(_HEADER_BYTES))
    return {
        "format": FORMAT,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "header_sha256": digest.hexdigest(),
        "header_bytes": min(st.st_size, _HEADER_BYTES),
        "transformers": transformers.__version__,
        "gguf": gguf_version,
    }


def _note(message: str) -> None:
    print(f"pllscore: note: {message}", file=sys.stderr)


def lookup(file: str | os.PathLike[str], key: dict[str, Any]) -> Path | None:
    """The checked entry of ``file`` when one matches ``key``; a stale or corrupt one is removed (with a note)."""
    folder = entry_folder(file)
    if not folder.is_dir():
        return None
    problem = _problem(folder, key)
    if problem is None:
        return folder
    discard(file, problem)
    return None


def discard(file: str | os.PathLike[str], problem: str) -> None:
    """Remove the entry of ``file``, saying why on stderr in one line."""
    _note(f"the cached conversion of {os.path.basename(file)} is {problem}; converting the GGUF file again")
    _remove(entry_folder(file))


def _problem(folder: Path, key: dict[str, Any]) -> str | None:
    """Why the entry in ``folder`` cannot be used (stale, corrupt), or None."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "incomplete (no readable manifest)"
    if not isinstance(manifest, dict) or manifest.get("key") != key:
        return "stale (the file, or the transformers or gguf version, changed since)"
    files = manifest.get("files")
    if not isinstance(files, dict) or WEIGHTS not in files:
        return "corrupt (its manifest lists no weights)"
    for name, expected in files.items():
        try:
            if _describe(folder / name) != expected:
                return f"corrupt ({name} differs from its manifest)"
        except OSError:
            return f"corrupt ({name} is missing)"
    return None


def _describe(path: Path) -> dict[str, Any]:
    """A file's size and SHA-256; for the weights, of their safetensors header only (the data is large)."""
    size = path.stat().st_size
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        if path.name == WEIGHTS:
            head = f.read(8)
            n = int.from_bytes(head, "little") if len(head) == 8 else 0
            if n > size - 8:
                return {"size": size, "header_sha256": None}
            digest.update(head + f.read(n))
            return {"size": size, "header_sha256": digest.hexdigest()}
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"size": size, "sha256": digest.hexdigest()}


def store(file: str | os.PathLike[str], key: dict[str, Any], model: Any, tokenizer: Any) -> Path | None:
    """Save the converted ``model`` and ``tokenizer`` as the entry of ``file``; None (with a note) when it cannot."""
    folder = entry_folder(file)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        _sweep(folder.parent)
        tmp = Path(tempfile.mkdtemp(prefix=_TEMP_PREFIX, dir=folder.parent))
    except OSError as e:
        _note(f"cannot write the GGUF cache in {folder.parent} ({e.strerror or e}); the conversion is not kept")
        return None
    try:
        save_converted(model, tokenizer, tmp)
        files = {p.name: _describe(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        manifest = {"key": key, "source": os.path.realpath(file), "files": files}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        _publish(tmp, folder)
    except OSError as e:
        _note(f"cannot write the GGUF cache in {folder.parent} ({e.strerror or e}); the conversion is not kept")
        return None
    finally:
        _remove(tmp)
    return folder


def save_converted(model: Any, tokenizer: Any, folder: Path) -> None:
    """The model as a transformers folder: configs, float32 safetensors (tied weights once), the tokenizer."""
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)


def _publish(tmp: Path, folder: Path) -> None:
    """Rename the finished ``tmp`` into place; an entry already there (another process's) is replaced."""
    old = None
    if folder.exists():
        old = Path(tempfile.mkdtemp(prefix=_TEMP_PREFIX, dir=folder.parent))
        os.replace(folder, old / "entry")
    try:
        os.replace(tmp, folder)
    except OSError:
        if not folder.exists():
            raise
        # another process published its entry between our two renames: keep theirs
    finally:
        if old is not None:
            _remove(old)


def _sweep(parent: Path) -> None:
    """Remove the temporary folders of conversions that died (older than an hour)."""
    now = time.time()
    for path in parent.glob(_TEMP_PREFIX + "*"):
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime > _STALE_TEMP_S:
                _remove(path)


def _remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
