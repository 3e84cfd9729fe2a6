"""Ray actors that each hold one loaded model, and call functions on it: the Ray engine of every command.

:func:`pllscore.jobs.ray.score_dataset` cuts files into blocks of rows; an evaluation such as ``pllscore
syntaxgym`` has units of its own (a suite) and wants more than output rows back (token offsets and scores).
:class:`ModelPool` starts ``workers`` actors, each loading the model once with the same
:func:`pllscore.load` keywords as the local engine, and calls a module-level function ``fn(scorer, item)``
on them: :meth:`ModelPool.call` once, :meth:`ModelPool.map` over items, results in the items' order. The
function is the one the local engine calls on its own loaded scorer, so both engines score by the same code.
A pllscore error inside an actor comes back as one line (:class:`~pllscore.errors.InputError`), as on the
local engine; Ray restarts an actor that dies and retries its call.

An actor is a worker process that holds at most one loaded model: each call names the model it wants (its name
or path, load keywords and, where actors are kept, its files' content), and an actor that holds another one
loads it first. With ``keep_workers`` (:class:`~pllscore.settings.RaySettings`) the actors outlive their call:
the next call of this process with the same CPUs and GPUs per actor takes them, their model loaded if it is the
same, else loaded in place (a second or less, against several for a new actor's start and imports). A call
without ``keep_workers`` also takes kept actors, and gives them back kept; only the actors it starts itself end
with it. Actors are kept while the cluster has room: a call that needs CPUs or GPUs that kept actors hold ends
the least recently used first, so a new actor never waits on kept ones. :func:`release_workers` ends them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pllscore.errors import InputError, PllscoreError
from pllscore.settings import ModelSettings, RaySettings

__all__ = ["ModelPool", "connect", "import_ray", "release_workers"]


@dataclass(frozen=True)
class _Failed:
    """A pllscore error raised in an actor, returned (Ray's wrappers lose the error's type on the way back)."""

    message: str


@dataclass(frozen=True)
class _Wanted:
    """The model a call wants: ``model`` (a name or path), :func:`pllscore.load` keywords, and the files' content
    (:func:`~pllscore.io.provenance.named_model_identity`; None when not given and no kept actor is involved)."""

    model: Any
    load: tuple[tuple[str, Any], ...]
    fingerprint: str | None


class _ModelActor:
    """A worker process holding at most one loaded model; :meth:`call` runs ``fn(scorer, item)`` on the model it
    is asked for, loading it first when it holds another (or none: a new actor, or one Ray restarted)."""

    def __init__(self, threads: int) -> None:
        import torch

        if threads > 0:
            torch.set_num_threads(threads)
        self.holds: _Wanted | None = None
        self.scorer: Any = None

    def call(self, wanted: _Wanted, fn: Callable[[Any, Any], Any], item: Any) -> Any:
        if wanted != self.holds:
            failed = self._load(wanted)
            if failed is not None:  # not kept: a later call tries again (the failure may pass, e.g. GPU memory)
                return failed
        try:
            return fn(self.scorer, item)
        except PllscoreError as e:
            return _Failed(str(e))

    def _load(self, wanted: _Wanted) -> _Failed | None:
        import gc

        from pllscore.scoring import api

        self.holds = self.scorer = None
        gc.collect()  # the model held before goes first: two at once may not fit
        try:  # a model that cannot be loaded is an answer to the call, not an actor Ray restarts
            self.scorer = api.load(wanted.model, **dict(wanted.load))  # looked up at call time, as the block scorer
        except PllscoreError as e:
            return _Failed(str(e))
        self.holds = wanted
        return None


def _raise_ours(error: Exception) -> None:
    """Raise pllscore's own error inside Ray's wrappers (an actor that failed to load the model) as one line."""
    from pllscore.jobs.ray_actor import pllscore_cause

    cause = pllscore_cause(error)
    if cause is not None:
        raise InputError(str(cause)) from None


@dataclass
class _Kept:
    """An actor kept for a later call: its shape (node, job, CPUs and GPUs per actor) and the model it holds."""

    actor: Any
    shape: tuple[Any, ...]
    holds: _Wanted
    cpus: float
    gpus: float


class ModelPool:
    """Actors holding the model of ``model`` (its ``model`` field: a name or path every worker can read), on the
    Ray cluster of ``ray`` (:class:`~pllscore.settings.RaySettings`: ``address``, ``workers`` (default: as many
    as the cluster's CPUs allow, at most ``tasks``), ``cpus_per_worker``, ``gpus_per_worker``)."""

    def __init__(
        self, model: ModelSettings, ray: RaySettings, tasks: int = 1, *, fingerprint: str | None = None
    ) -> None:
        """``fingerprint``: the model files' content as :func:`~pllscore.io.provenance.named_model_identity`
        gives it (computed here when kept actors need it and it is not given)."""
        if not isinstance(model.model, (str, bytes)) and not hasattr(model.model, "__fspath__"):
            raise InputError("the ray engine loads the model on each worker: give its name or path, not a scorer")
        ray_api = connect(ray.address)
        cluster_cpus = int(ray_api.cluster_resources().get("CPU", 1))
        n = ray.workers or max(1, min(tasks, cluster_cpus // max(ray.cpus_per_worker, 1)))
        load = model.load_kwargs()
        if ray.gpus_per_worker:
            load["device"] = "cuda"
        self._ray, self.keep = ray_api, ray.keep_workers
        self._cpu, self._gpu = float(ray.cpus_per_worker), float(ray.gpus_per_worker or 0)
        session = _session(ray_api)
        self._shape = (*session, ray.cpus_per_worker, ray.gpus_per_worker)
        # actors kept in a Ray session since shut down (another node or job) ended with it: forget them, so that
        # every kept actor _make_room ends below frees its CPUs and GPUs
        _KEPT[:] = [k for k in _KEPT if k.shape[:2] == session]
        mine = [k for k in _KEPT if k.shape == self._shape]
        from pllscore.io.provenance import local_name, named_model_identity

        if fingerprint is None and (self.keep or mine):  # a kept actor's model is known by its files' content
            fingerprint = named_model_identity(model.model, model.revision)["fingerprint"]
        # a local path as the driver sees it: a worker resolves a relative one in its own folder (Ray's, or a node's)
        self._wanted = _Wanted(local_name(model.model), tuple(sorted(load.items())), fingerprint)
        # those holding this model first, then the most recently used
        mine.sort(key=lambda k: (k.holds == self._wanted, _KEPT.index(k)), reverse=True)
        taken = mine[:n]
        for k in taken:
            _KEPT.remove(k)
        self._taken = [k.actor for k in taken]
        _make_room(ray_api, (n - len(taken)) * self._cpu, (n - len(taken)) * self._gpu)
        actor = ray_api.remote(_ModelActor).options(
            num_cpus=ray.cpus_per_worker, num_gpus=ray.gpus_per_worker or None, max_restarts=4, max_task_retries=4
        )
        self._actors = self._taken + [actor.remote(ray.cpus_per_worker) for _ in range(n - len(taken))]

    def call(self, fn: Callable[[Any, Any], Any], item: Any) -> Any:
        """``fn(scorer, item)`` on one actor."""
        self._open()
        try:
            return self._result(self._ray.get(self._actors[0].call.remote(self._wanted, fn, item)))
        except Exception as e:
            _raise_ours(e)
            raise

    def map(self, fn: Callable[[Any, Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """``fn(scorer, item)`` of each item, spread over the actors; yielded in the items' order."""
        from ray.util import ActorPool

        self._open()
        wanted = self._wanted
        pool = ActorPool(self._actors)
        results = pool.map(lambda a, item: a.call.remote(wanted, fn, item), list(items))
        while True:
            try:
                got = next(results)
            except StopIteration:
                return
            except Exception as e:
                _raise_ours(e)
                raise
            yield self._result(got)

    def _open(self) -> None:
        if not self._actors:
            raise InputError("this model pool was closed: make a new ModelPool")

    @staticmethod
    def _result(got: Any) -> Any:
        if isinstance(got, _Failed):
            raise InputError(got.message)
        return got

    def close(self) -> None:
        """Keep the actors for a later call (all of them with ``keep_workers``, else those it took from earlier
        calls that kept theirs) and end the others; the Ray session stays, as
        :func:`~pllscore.jobs.ray.score_dataset` leaves it."""
        for i, a in enumerate(self._actors):
            if self.keep or i < len(self._taken):
                _KEPT.append(_Kept(a, self._shape, self._wanted, self._cpu, self._gpu))
            else:
                self._ray.kill(a)
        self._actors = self._taken = []


#: the actors kept for this process's next calls, the least recently used first
_KEPT: list[_Kept] = []


def import_ray() -> Any:
    """The ``ray`` module; a one-line error when Ray is not installed."""
    try:
        import ray
    except ImportError:
        raise InputError("the ray engine needs Ray: pip install 'pllscore[ray]'") from None
    return ray


def connect(address: str | None) -> Any:
    """The ``ray`` module, its session started (``address``: ``auto``, ``ray://HOST:PORT``, or None for a local
    Ray) unless this process runs one."""
    ray = import_ray()
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    return ray


def release_workers() -> None:
    """End the actors that calls with ``keep_workers=True`` kept, and free their CPUs, GPUs and memory."""
    while _KEPT:
        _end_kept(_KEPT.pop(0))


def _make_room(ray_api: Any, cpus: float, gpus: float) -> None:
    """End kept actors, the least recently used first, until the cluster has ``cpus`` and ``gpus`` free."""
    if not (cpus or gpus):
        return
    free = ray_api.available_resources()
    free_cpus, free_gpus = free.get("CPU", 0.0), free.get("GPU", 0.0)
    while _KEPT and (free_cpus < cpus or free_gpus < gpus):
        kept = _KEPT.pop(0)
        _end_kept(kept)
        free_cpus, free_gpus = free_cpus + kept.cpus, free_gpus + kept.gpus


def _end_kept(kept: _Kept) -> None:
    """End a kept actor, unless it was kept in a Ray session since shut down (or of another cluster), with which it
    ended."""
    import ray

    if ray.is_initialized() and kept.shape[:2] == _session(ray):
        ray.kill(kept.actor)


def _session(ray_api: Any) -> tuple[str, str]:
    """The Ray session this process is connected to: its node and job."""
    context = ray_api.get_runtime_context()
    return context.get_node_id(), context.get_job_id()
