"""Ray actors that each hold one loaded model, and call functions on it: the Ray engine of every command.

:func:`pllscore.jobs.ray.score_dataset` cuts files into blocks of rows; an evaluation such as ``pllscore
syntaxgym`` has units of its own (a suite) and wants more than output rows back (token offsets and scores).
:class:`ModelPool` starts ``workers`` actors, each loading the model once with the same
:func:`pllscore.load` keywords as the local engine, and calls a module-level function ``fn(scorer, item)``
on them: :meth:`ModelPool.call` once, :meth:`ModelPool.map` over items, results in the items' order. The
function is the one the local engine calls on its own loaded scorer, so both engines score by the same code.
A pllscore error inside an actor comes back as one line (:class:`~pllscore.errors.InputError`), as on the
local engine; Ray restarts an actor that dies and retries its call.

With ``keep_workers`` (:class:`~pllscore.settings.RaySettings`) a pool outlives its call: the next call of this
process with the same model (its files' content), load keywords and actors gets the same actors, their model
loaded, instead of starting new ones. Pools are kept while the cluster has room: a call that needs CPUs or
GPUs that kept actors hold ends the least recently used pools first, so a new pool never waits on kept ones.
:func:`release_workers` ends them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pllscore.errors import InputError, PllscoreError
from pllscore.settings import ModelSettings, RaySettings

__all__ = ["ModelPool", "release_workers"]


@dataclass(frozen=True)
class _Failed:
    """A pllscore error raised in an actor, returned (Ray's wrappers lose the error's type on the way back)."""

    message: str


class _ModelActor:
    """One loaded model; :meth:`call` runs ``fn(scorer, item)`` on it."""

    def __init__(self, model: Any, load: dict[str, Any], threads: int) -> None:
        import torch

        from pllscore.scoring import api

        if threads > 0:
            torch.set_num_threads(threads)
        self.failed: _Failed | None = None
        try:  # a model that cannot be loaded is an answer to every call, not an actor Ray restarts
            self.scorer = api.load(model, **load)  # looked up at call time, as the block scorer does
        except PllscoreError as e:
            self.failed = _Failed(str(e))

    def call(self, fn: Callable[[Any, Any], Any], item: Any) -> Any:
        if self.failed is not None:
            return self.failed
        try:
            return fn(self.scorer, item)
        except PllscoreError as e:
            return _Failed(str(e))


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError("the ray engine needs Ray: pip install 'pllscore[ray]'") from None
    return ray


def _raise_ours(error: Exception) -> None:
    """Raise pllscore's own error inside Ray's wrappers (an actor that failed to load the model) as one line."""
    from pllscore.jobs.ray_actor import pllscore_cause

    cause = pllscore_cause(error)
    if cause is not None:
        raise InputError(str(cause)) from None


class ModelPool:
    """Actors holding the model of ``model`` (its ``model`` field: a name or path every worker can read), on the
    Ray cluster of ``ray`` (:class:`~pllscore.settings.RaySettings`: ``address``, ``workers`` (default: as many
    as the cluster's CPUs allow, at most ``tasks``), ``cpus_per_worker``, ``gpus_per_worker``)."""

    def __init__(
        self, model: ModelSettings, ray: RaySettings, tasks: int = 1, *, fingerprint: str | None = None
    ) -> None:
        """``fingerprint``: the model files' content as :func:`~pllscore.io.provenance.named_model_identity`
        gives it (computed here when ``ray.keep_workers`` needs it and it is not given)."""
        if not isinstance(model.model, (str, bytes)) and not hasattr(model.model, "__fspath__"):
            raise InputError("the ray engine loads the model on each worker: give its name or path, not a scorer")
        ray_api = _ray()
        if not ray_api.is_initialized():
            ray_api.init(address=ray.address, ignore_reinit_error=True, log_to_driver=False)
        cluster_cpus = int(ray_api.cluster_resources().get("CPU", 1))
        n = ray.workers or max(1, min(tasks, cluster_cpus // max(ray.cpus_per_worker, 1)))
        load = model.load_kwargs()
        if ray.gpus_per_worker:
            load["device"] = "cuda"
        self._ray, self.keep, self._key = ray_api, ray.keep_workers, None
        if self.keep:
            if fingerprint is None:
                from pllscore.io.provenance import named_model_identity

                fingerprint = named_model_identity(model.model, model.revision)["fingerprint"]
            job_id = ray_api.get_runtime_context().get_job_id()
            self._key = (_node(ray_api), job_id, fingerprint, repr(sorted(load.items())), ray.cpus_per_worker,
                         ray.gpus_per_worker)  # fmt: skip
            for kept in _KEPT:
                if kept._key == self._key and len(kept._actors) >= n:
                    _KEPT.remove(kept)
                    _KEPT.append(kept)  # the most recently used last
                    self._actors, self._cpus, self._gpus = kept._actors, 0.0, 0.0
                    return
        self._cpus, self._gpus = float(n * ray.cpus_per_worker), float(n * (ray.gpus_per_worker or 0))
        _make_room(ray_api, self._cpus, self._gpus)  # kept pools may hold the CPUs (and GPUs) this one needs
        actor = ray_api.remote(_ModelActor).options(
            num_cpus=ray.cpus_per_worker, num_gpus=ray.gpus_per_worker or None, max_restarts=4, max_task_retries=4
        )
        self._actors = [actor.remote(model.model, load, ray.cpus_per_worker) for _ in range(n)]
        if self.keep:
            _KEPT.append(self)

    def call(self, fn: Callable[[Any, Any], Any], item: Any) -> Any:
        """``fn(scorer, item)`` on one actor."""
        try:
            return self._result(self._ray.get(self._actors[0].call.remote(fn, item)))
        except Exception as e:
            _raise_ours(e)
            raise

    def map(self, fn: Callable[[Any, Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """``fn(scorer, item)`` of each item, spread over the actors; yielded in the items' order."""
        from ray.util import ActorPool

        pool = ActorPool(self._actors)
        results = pool.map(lambda a, item: a.call.remote(fn, item), list(items))
        while True:
            try:
                got = next(results)
            except StopIteration:
                return
            except Exception as e:
                _raise_ours(e)
                raise
            yield self._result(got)

    @staticmethod
    def _result(got: Any) -> Any:
        if isinstance(got, _Failed):
            raise InputError(got.message)
        return got

    def close(self) -> None:
        """End the actors, unless the pool is kept (``keep_workers``); the Ray session stays, as
        :func:`~pllscore.jobs.ray.score_dataset` leaves it."""
        if not self.keep:
            self._end()

    def _end(self) -> None:
        for a in self._actors:
            self._ray.kill(a)
        self._actors = []


#: the pools kept for this process's next calls (``keep_workers``), the least recently used first
_KEPT: list[ModelPool] = []


def release_workers() -> None:
    """End the actors that calls with ``keep_workers=True`` kept, and free their CPUs, GPUs and memory."""
    while _KEPT:
        _end_kept(_KEPT.pop(0))


def _make_room(ray_api: Any, cpus: float, gpus: float) -> None:
    """End kept pools, the least recently used first, until the cluster has ``cpus`` and ``gpus`` free."""
    free = ray_api.available_resources()
    free_cpus, free_gpus = free.get("CPU", 0.0), free.get("GPU", 0.0)
    while _KEPT and (free_cpus < cpus or free_gpus < gpus):
        kept = _KEPT.pop(0)
        free_cpus, free_gpus = free_cpus + kept._cpus, free_gpus + kept._gpus
        _end_kept(kept)


def _end_kept(kept: ModelPool) -> None:
    # actors of a Ray session since shut down (or of another cluster) ended with it
    if kept._ray.is_initialized() and kept._key[0] == _node(kept._ray):
        kept._end()


def _node(ray_api: Any) -> str:
    return ray_api.get_runtime_context().get_node_id()
