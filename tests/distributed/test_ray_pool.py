"""The Ray engine's model actors (jobs/ray_calls.ModelPool): ended after each call by default; with
``keep_workers`` kept, their model loaded, for the next call with the same model, while the cluster has room."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.conftest import TINY_GPT2

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.shared

from pllscore.jobs.ray_calls import ModelPool, release_workers  # noqa: E402
from pllscore.settings import ModelSettings, RaySettings  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def local_ray(ray_cluster):
    yield ray_cluster  # the run's local Ray (tests/ray_session.py)
    release_workers()


def _pid(scorer, item):
    """The actor's process and its scorer object (module-level: Ray pickles it by reference)."""
    return os.getpid(), id(scorer)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _open(model, keep: bool) -> ModelPool:
    return ModelPool(ModelSettings(model=str(model)), RaySettings(workers=1, keep_workers=keep))


def _gone(pid: int) -> bool:
    import time

    for _ in range(100):  # ray.kill returns before the process has exited
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def test_kept_actors_serve_the_next_call_with_the_same_model_and_make_room(tmp_path):
    assert ray.cluster_resources()["CPU"] == 2  # the run's Ray (tests/ray_session.py): room for two actors
    model = tmp_path / "gpt2"
    shutil.copytree(TINY_GPT2, model)
    first = _open(model, keep=True)
    pid, scorer = first.call(_pid, None)
    first.close()
    assert _alive(pid)  # kept
    second = _open(model, keep=True)
    assert second.call(_pid, None) == (pid, scorer)  # the same actor, its model loaded once
    second.close()
    # the same folder with other content is another model: new actors, beside the kept ones while there is room
    (model / "config.json").write_text((model / "config.json").read_text().replace("}", ', "pllscore_test": 1}', 1))
    changed = _open(model, keep=True).call(_pid, None)[0]
    assert changed != pid and _alive(pid)
    # the cluster is full: a new pool (here one not kept, the default) ends the least recently used kept pool
    plain = _open(model, keep=False)
    plain_pid = plain.call(_pid, None)[0]
    assert plain_pid not in (pid, changed) and _gone(pid) and _alive(changed)
    plain.close()  # the default: the actors end with the call
    assert _gone(plain_pid)
    release_workers()  # and the kept ones on request
    assert _gone(changed)
