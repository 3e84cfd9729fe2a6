"""The Ray engine's model actors (jobs/ray_calls.ModelPool): ended after each call by default; with
``keep_workers`` kept for the next calls, which take them and load the model they want in place (none if it is
the same), while the cluster has room."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.conftest import TINY_GPT2

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.shared

from pllscore.errors import InputError  # noqa: E402
from pllscore.jobs.ray_calls import ModelPool, release_workers  # noqa: E402
from pllscore.settings import ModelSettings, RaySettings  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def local_ray(ray_cluster):
    return ray_cluster  # the run's local Ray (tests/ray_session.py), with the actors earlier Ray tests kept


def _pid(scorer, item):
    """The actor's process and its scorer object (module-level: Ray pickles it by reference)."""
    return os.getpid(), id(scorer)


def _marked(scorer, item):
    """Whether the actor's model is the one with the changed config."""
    return getattr(scorer.model.config, "pllscore_test", None) == 1


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


def test_a_kept_actor_that_failed_to_load_tries_again(tmp_path):
    """A load that failed (here: the files were not there yet) is not remembered: the next call loads again."""
    model = tmp_path / "gpt2"
    model.mkdir()
    failing = ModelPool(ModelSettings(model=str(model)), RaySettings(workers=1, keep_workers=True), fingerprint="x")
    with pytest.raises(InputError) as e:
        failing.call(_pid, None)
    assert "\n" not in str(e.value)
    failing.close()
    shutil.rmtree(model)
    shutil.copytree(TINY_GPT2, model)
    fixed = ModelPool(ModelSettings(model=str(model)), RaySettings(workers=1, keep_workers=True), fingerprint="x")
    fixed.call(_pid, None)
    fixed.close()  # kept: the next test starts from it


def test_kept_actors_serve_the_next_calls_load_their_model_in_place_and_make_room(tmp_path):
    assert ray.cluster_resources()["CPU"] == 2  # the run's Ray (tests/ray_session.py): room for two actors
    model = tmp_path / "gpt2"
    shutil.copytree(TINY_GPT2, model)
    first = _open(model, keep=True)  # an actor an earlier test kept (a new one if none is kept)
    pid, scorer = first.call(_pid, None)
    first.close()
    assert _alive(pid)  # kept
    second = _open(model, keep=True)
    assert second.call(_pid, None) == (pid, scorer)  # the same actor, its model loaded once
    second.close()
    # the same folder with other content is another model: the kept actor loads it in place
    (model / "config.json").write_text((model / "config.json").read_text().replace("}", ', "pllscore_test": 1}', 1))
    third = _open(model, keep=True)
    changed = third.call(_pid, None)
    assert changed[0] == pid and third.call(_marked, None)  # (an id may be reused once the old model is freed)
    third.close()
    # a call without keep_workers (the default) takes the kept actor, its model loaded, and leaves it kept
    plain = _open(model, keep=False)
    assert plain.call(_pid, None) == changed
    plain.close()
    assert _alive(pid)
    with pytest.raises(InputError, match="closed"):  # its actors are another call's now
        plain.call(_pid, None)
    # the cluster is full: a call that needs the CPUs kept actors hold ends them (the least recently used first);
    # the actor it starts ends with it (the default)
    wide = ModelPool(ModelSettings(model=str(model)), RaySettings(workers=1, cpus_per_worker=2))
    wide_pid = wide.call(_pid, None)[0]
    assert wide_pid != pid and _gone(pid)
    wide.close()
    assert _gone(wide_pid)
    again = _open(model, keep=True)
    again_pid = again.call(_pid, None)[0]
    again.close()
    release_workers()  # and the kept ones on request
    assert _gone(again_pid)


def test_actors_kept_in_an_ended_ray_session_are_forgotten():
    """An actor kept under another node and job (a Ray since shut down, with which it ended) is dropped when a pool
    starts, neither taken nor counted as room."""
    from pllscore.jobs import ray_calls

    model = ModelSettings(model=str(TINY_GPT2))
    stale = ray_calls._Kept(None, ("a node since gone", "01000000", 1, None), None, 1.0, 0.0)
    ray_calls._KEPT.append(stale)
    pool = ModelPool(model, RaySettings(workers=1))
    pool.close()
    assert stale not in ray_calls._KEPT
