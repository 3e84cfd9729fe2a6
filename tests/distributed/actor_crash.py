"""Failure injection for test_ray, from outside pllscore: an actor dies in the middle of a block.

test_ray starts its local Ray with ``runtime_env={"worker_process_setup_hook":
"tests.distributed.actor_crash.install", ...}``, so every Ray worker process runs
:func:`install` before any task or actor code. It wraps ``pllscore.scoring.api.load`` so that the scorer it
returns ends its process (``os._exit(1)``, as a segfault or a lost node would) when it is asked
to score a batch holding :data:`CRASH_TEXT` for the first time. "First" holds across
processes: the file named by ``$PLLSCORE_TEST_CRASH_MARKER`` is created by exactly one crash,
so the retried block is scored normally. The local engine, in the test process, never runs
this hook and scores the text as any other.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from typing import Any

CRASH_TEXT = "This sentence makes the first actor that scores it crash."
MARKER = "PLLSCORE_TEST_CRASH_MARKER"


def install() -> None:
    """Wrap ``pllscore.scoring.api.load`` in this worker, once pllscore imports it.

    Ray runs this hook in every worker it starts, Ray Data's own helpers included; importing pllscore (and
    with it torch) here made each of them pay the import, which tripled the Ray tests' time.
    """
    module = sys.modules.get(API)
    if module is not None:
        _wrap(module)
    else:
        sys.meta_path.insert(0, _WrapOnImport())


API = "pllscore.scoring.api"


class _WrapOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when ``pllscore.scoring.api`` is first imported, wraps it right after it runs."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != API:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            _wrap(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _wrap(api: Any) -> None:
    load = api.load

    def load_then_crash_once(*args: Any, **kwargs: Any) -> Any:
        scorer = load(*args, **kwargs)
        score = scorer.score

        def score_or_crash(texts: Any, *a: Any, **k: Any) -> Any:
            given = list(getattr(texts, "texts", texts))  # texts, or their Encodings
            if any(CRASH_TEXT in t for t in given) and _first_crash():
                os._exit(1)
            return score(texts, *a, **k)

        scorer.score = score_or_crash
        return scorer

    api.load = load_then_crash_once  # what BlockScorer calls


def _first_crash() -> bool:
    path = os.environ.get(MARKER)
    if not path:
        return False
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True
