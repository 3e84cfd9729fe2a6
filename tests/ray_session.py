"""One local Ray for the whole test run: starting one costs seconds, and the Ray tests used to start five.

The cluster has two CPUs, as each module's own had. Every worker process runs
:func:`tests.distributed.actor_crash.install` first (a failure injected from the tests, which fires only on
``actor_crash.CRASH_TEXT``, so other tests are unaffected), with the shared models offline. Its address is
exported as ``RAY_ADDRESS`` while it runs, so that ``pllscore ... --engine ray`` processes started by a test
join it instead of starting a cluster of their own.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The session's local Ray (started on first use, shut down at the end); yields the crash marker's path."""
    ray = pytest.importorskip("ray")
    from tests.distributed.actor_crash import MARKER

    marker = tmp_path_factory.mktemp("crash") / "crashed"
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    runtime_env = {
        "worker_process_setup_hook": "tests.distributed.actor_crash.install",
        "env_vars": {"PYTHONPATH": path, MARKER: str(marker), "HF_HUB_OFFLINE": "1"},
    }
    if ray.is_initialized():  # a test started one of its own: this run's cluster replaces it
        ray.shutdown()
    context = ray.init(num_cpus=2, log_to_driver=False, include_dashboard=False, runtime_env=runtime_env)
    before = os.environ.get("RAY_ADDRESS")
    os.environ["RAY_ADDRESS"] = context.address_info["address"]
    try:
        yield marker
    finally:
        if before is None:
            os.environ.pop("RAY_ADDRESS", None)
        else:
            os.environ["RAY_ADDRESS"] = before
        ray.shutdown()
