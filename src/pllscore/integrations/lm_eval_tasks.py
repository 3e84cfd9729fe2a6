"""lm-evaluation-harness's index of its built-in tasks, kept in pllscore's cache.

Each time lm-eval makes a ``TaskManager`` (each ``lm_eval`` or ``pllscore lm-eval`` run, each
``simple_evaluate`` call without a manager of its own), it indexes its task configurations by parsing every
YAML file it ships: some 14,000 files, 12 s on a 2-core machine (lm-eval 0.4.13), before a request is
scored. The index of the built-in folder depends on those files alone, so it is kept in
``<cache>/lm-eval-tasks/`` (``<cache>`` as for converted GGUF files: ``$PLLSCORE_CACHE``, else the user
cache folder), keyed by lm-eval's version, the folder and every YAML file's path, size and modification
time: a file changed, added or removed builds it again. Reading it back takes about 1.5 s. Folders given
with ``--include_path`` (``include_path=``) are indexed by lm-eval itself, every time, and override built-in
tasks as lm-eval's own index makes them do.

:func:`install` (run when :mod:`pllscore.integrations.lm_eval` is imported) wraps lm-eval's
``TaskIndex.build``; where lm-eval's internals are not what this expects, it leaves them alone. An entry
that cannot be read is built again, and a cache that cannot be written is no error.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["cached", "install"]

FOLDER = "lm-eval-tasks"


def install() -> None:
    """Make lm-eval's task index read its built-in part from the cache (once per process)."""
    try:
        from lm_eval.tasks import _index
    except ImportError:
        return
    build = getattr(getattr(_index, "TaskIndex", None), "build", None)
    if build is None or getattr(build, "pllscore_cache", False):
        return
    _index.TaskIndex.build = staticmethod(cached(build, Path(_index.__file__).parent, _index.log.warning))


def cached(
    build: Callable[..., dict[str, Any]], builtin: Path, warn: Callable[..., None]
) -> Callable[..., dict[str, Any]]:
    """lm-eval's ``TaskIndex.build`` (``build``) with the index of folder ``builtin`` kept in the cache; ``warn``
    gets lm-eval's warning when a later folder's task overrides an earlier one's."""
    builtin = builtin.resolve()

    def cached_build(paths: Iterable[Any], *, resolve_includes: bool = True) -> dict[str, Any]:
        roots = [Path(p) for p in paths]
        resolved = [r.resolve() for r in roots]
        if not resolve_includes or builtin not in resolved:
            return build(roots, resolve_includes=resolve_includes)
        index: dict[str, Any] = {}
        for root, real in zip(roots, resolved):  # lm-eval's merge: a later folder overrides an earlier one, warning
            part = _builtin_index(build, root, real) if real == builtin else build([root])
            for name, entry in part.items():
                if name in index:
                    warn("Task '%s' from %s overrides existing task from %s", name, entry.yaml_path,
                         index[name].yaml_path)  # fmt: skip
                index[name] = entry
        return index

    cached_build.pllscore_cache = True  # type: ignore[attr-defined]
    cached_build.__wrapped__ = build  # type: ignore[attr-defined]
    return cached_build


def _builtin_index(build: Callable[..., dict[str, Any]], root: Path, real: Path) -> dict[str, Any]:
    """The index of lm-eval's own task folder ``root`` (``real`` resolved): from the cache, else built and stored
    there."""
    from pllscore.io.parts import commit_file

    path = _entry(root, real)
    try:
        return pickle.loads(path.read_bytes())
    except Exception:  # noqa: BLE001 - absent, or unreadable (an interrupted write, another lm-eval): build it
        pass
    index = build([root])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = pickle.dumps(index, protocol=pickle.HIGHEST_PROTOCOL)
        commit_file(path.with_name(f".tmp-{os.getpid()}-{path.name}"), path, lambda f: f.write(data))
    except OSError:
        pass
    return index


def _entry(root: Path, real: Path) -> Path:
    """The cache file of ``root``'s index: named by lm-eval's version and every task file's path, size and time
    (the files lm-eval's own ``TaskIndex`` reads)."""
    from importlib.metadata import version

    from lm_eval.tasks._index import TaskIndex

    from pllscore.engine.gguf_cache import cache_root

    listing = []
    for file in TaskIndex._iter_yaml_files(root):
        st = file.stat()
        listing.append((file.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    key = repr((version("lm_eval"), str(real), listing)).encode("utf-8", "surrogateescape")
    return cache_root() / FOLDER / f"{hashlib.sha256(key).hexdigest()[:32]}.pickle"
