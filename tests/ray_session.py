"""One local Ray for the Ray tests of a run: starting one costs seconds, and the Ray tests used to start five.

The cluster has two CPUs, as each module's own had. Every worker process runs
:func:`tests.distributed.actor_crash.install` first (a failure injected from the tests, which fires only on
``actor_crash.CRASH_TEXT``, so other tests are unaffected), with the shared models offline. It is started by
the first module that asks for it and shut down at the end of the run; a test that needs no Ray in its process
(the docs' examples start their own, in their own folder) may shut it down, and the next module that asks
starts it again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def _ray_session(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """(crash marker path, runtime env) of the run's local Ray; shuts it down at the end of the run."""
    ray = pytest.importorskip("ray")
    from tests.distributed.actor_crash import MARKER

    marker = tmp_path_factory.mktemp("crash") / "crashed"
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    runtime_env = {
        "worker_process_setup_hook": "tests.distributed.actor_crash.install",
        "env_vars": {"PYTHONPATH": path, MARKER: str(marker), "HF_HUB_OFFLINE": "1"},
    }
    yield marker, runtime_env
    if ray.is_initialized():
        ray.shutdown()


@pytest.fixture(scope="module")
def ray_cluster(_ray_session: tuple[Path, dict[str, Any]]) -> Path:
    """The run's local Ray, started if it is not running; the crash marker's path."""
    ray = pytest.importorskip("ray")
    marker, runtime_env = _ray_session
    if not ray.is_initialized():
        # Ray runs its workers at niceness 15, so under pytest-xdist the actors starved beside the other worker's
        # tests (BENCHMARKS.md); the raylet reads the setting from its environment
        os.environ.setdefault("RAY_worker_niceness", "0")
        ray.init(num_cpus=2, log_to_driver=False, include_dashboard=False, runtime_env=runtime_env)
    return marker


def without_ray() -> None:
    """Shut down a Ray this process runs (the run's, or one a test left), so that code run next starts its own."""
    import sys

    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        from pllscore.jobs.ray_calls import release_workers

        release_workers()  # the actors a Ray test kept
        ray.shutdown()


def score_dataset(*args: Any, **kwargs: Any) -> Any:
    """:func:`pllscore.jobs.ray.score_dataset` keeping its actors for the next call (``keep_workers``): the Ray
    tests start their actors once per run, not once per call, and load a model in them when a call wants
    another (tests/distributed/test_ray_pool.py checks the reuse and the default, which ends them)."""
    from pllscore.jobs.ray import score_dataset as on_ray

    return on_ray(*args, keep_workers=True, **kwargs)
