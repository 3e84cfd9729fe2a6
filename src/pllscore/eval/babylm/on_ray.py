"""The Ray engine of ``pllscore babylm``: the checkpoints spread over Ray actors, one checkpoint per actor.

Each checkpoint goes to an actor of its own (:class:`~pllscore.jobs.ray_calls.ModelPool`, one worker, the
checkpoint's model loaded there with the backend's class); as many run at once as ``workers`` says (default:
as many as the cluster's CPUs allow, ``cpus_per_worker`` each, ``gpus_per_worker`` GPUs each). The actor runs
the tasks the driver prepared (prepared again there only if the checkpoint's tokenizer differs) and sends the
results back; the driver writes them into the same files as the local engine, whole, with their records. A
checkpoint's tasks are kept when its actor finishes, so an interrupted Ray run resumes by checkpoint.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from pllscore.eval.babylm.records import Unit, by_checkpoint
from pllscore.eval.babylm.tasks import KINDS, RunOptions, prepare_task, run_task, tokenizer_key
from pllscore.settings import ModelSettings, RaySettings

__all__ = ["Job", "on_actor", "run_on_ray"]


@dataclass(frozen=True)
class Job:
    """One checkpoint's work, sent to its actor: the units, the tasks prepared with the tokenizer of ``key``
    (by convention and folder), and the run's options."""

    units: tuple[Unit, ...]
    prepared: dict[tuple[str, str], Any]
    key: str
    options: RunOptions


def on_actor(scorer: Any, job: Job) -> list[Any]:
    """Run a job's units on the actor's model (``scorer.model``, ``scorer.tokenizer``); their results, in
    order. A tokenizer other than the one the driver prepared with prepares the data again here."""
    same = tokenizer_key(scorer.tokenizer) == job.key
    out = []
    for u in job.units:
        prepared = job.prepared.get((u.convention, u.task.folder)) if same else None
        if prepared is None:
            prepared = prepare_task(u.task, scorer.tokenizer, job.options.backend, u.convention)
        out.append(run_task(prepared, u.task, scorer.model, job.options))
    return out


def _prepare(run: Any, todo: list[Unit]) -> tuple[str, dict[tuple[str, str], Any]]:
    """Every task prepared on the driver with the first checkpoint's tokenizer (its model stays unloaded here):
    bad data fails before any actor starts."""
    from pllscore.engine.loading import fast_tokenizer

    ck = todo[0].checkpoint
    common = {"revision": ck.hub_revision, "trust_remote_code": bool(run.load.get("trust_remote_code"))}
    tokenizer = fast_tokenizer(ck.source, common)
    prepared = {}
    for u in todo:
        if (u.convention, u.task.folder) not in prepared:
            prepared[u.convention, u.task.folder] = prepare_task(u.task, tokenizer, run.backend, u.convention)
    return tokenizer_key(tokenizer), prepared


def run_on_ray(run: Any, todo: list[Unit], bar: Any, ray: RaySettings) -> None:
    """The units of ``todo`` on Ray actors, one checkpoint each; written by the driver as each finishes."""
    from pllscore.jobs.ray_calls import ModelPool, connect

    if not todo:
        return
    key, prepared = _prepare(run, todo)
    groups = by_checkpoint(todo)
    ray_api = connect(ray.address)
    cpus = int(ray_api.cluster_resources().get("CPU", 1))
    at_once = ray.workers or max(1, min(len(groups), cpus // max(ray.cpus_per_worker, 1)))
    one = ray.replace(workers=1)
    lock = threading.Lock()  # the pools' bookkeeping of kept actors is not made for threads

    def checkpoint(ck: Any, units: list[Unit]) -> tuple[list[Unit], list[Any]]:
        model = ModelSettings(model=ck.source, revision=ck.hub_revision, kind=KINDS[run.backend], **run.load)
        with lock:
            pool = ModelPool(model, one)
        try:
            job = Job(tuple(units), prepared, key, run.options)
            return units, pool.call(on_actor, job)
        finally:
            with lock:
                pool.close()

    with ThreadPoolExecutor(max_workers=at_once) as threads:
        futures = [threads.submit(checkpoint, ck, units) for ck, units in groups]
        try:
            for done in as_completed(futures):
                units, results = done.result()
                for u, result in zip(units, results):
                    run.commit(u, result)
                    bar.update(1)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
