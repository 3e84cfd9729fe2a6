"""``pllscore.babylm``: the BabyLM zero-shot evaluation of every checkpoint of a model, in one process.

:func:`babylm` finds the tasks of the evaluation folder (:mod:`~pllscore.eval.babylm.layout`) and the
checkpoints (:mod:`~pllscore.eval.babylm.checkpoints`), checks that the backend fits the model, and runs each
(checkpoint, convention, task) not yet finished: each checkpoint is loaded once, with the backend's model class;
the data is read and tokenised once, with the first checkpoint's tokenizer, and again only for a checkpoint
whose tokenizer differs. Every task is prepared (so checked) before any is run, so bad data stops the run
before anything is written. Each task's files are written whole into the official results tree, then recorded
(:mod:`~pllscore.eval.babylm.records`), so ``resume=True`` continues a stopped run by (revision, task). The Ray
engine (:mod:`~pllscore.eval.babylm.on_ray`) runs the checkpoints on actors and writes the same files.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pllscore.errors import InputError, ModelError
from pllscore.eval.babylm.checkpoints import Checkpoint, checkpoints
from pllscore.eval.babylm.layout import find_tasks, model_name, select, task_output
from pllscore.eval.babylm.records import Records, Unit, by_checkpoint, commit_task, data_fingerprint
from pllscore.eval.babylm.summary import summary_lines, summary_table
from pllscore.eval.babylm.tasks import KINDS, RunOptions, prepare_task, run_task, tokenizer_key
from pllscore.settings import RaySettings
from pllscore.settings.babylm import BabylmSettings

__all__ = ["ENGINES", "BabylmRun", "babylm", "check_backend", "run_local"]

ENGINES = ("local", "ray")
_FITS = {"causal": "causal", "masked": "mlm or mntp", "seq2seq": "enc_dec_mask or enc_dec_prefix"}
PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class BabylmRun:
    """What a run did. ``output``: ``RESULTS/<model name>``; ``summary``: every task and grouping x every
    revision of this run (a DataFrame; ``summary.csv`` holds every run's in the folder); ``notes``: tasks
    skipped and folders not known, one line each; ``ran`` and ``resumed``: the (revision, task) units run now
    and those an earlier run had finished."""

    output: Path
    summary: Any
    notes: tuple[str, ...] = ()
    ran: tuple[str, ...] = ()
    resumed: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """The summary as aligned text (two decimals)."""
        return summary_lines(self.summary)


def check_backend(ck: Checkpoint, backend: str) -> None:
    """Refuse a backend that does not fit a local checkpoint's model (``mlm`` on a causal LM), from its config."""
    config = Path(ck.source) / "config.json"
    if not config.is_file():
        return  # a Hub model: the load says it
    from pllscore.engine.models import detect_kind

    try:
        fields = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # the load says what is wrong with it
    detected = detect_kind(SimpleNamespace(**fields))
    if detected is not None and detected != KINDS[backend]:
        arch = ", ".join(fields.get("architectures") or [str(fields.get("model_type"))])
        raise ModelError(
            f"--backend {backend} reads a {KINDS[backend]} LM, but {ck.source!r} is a {detected} LM ({arch}); "
            f"use --backend {_FITS[detected]}"
        )


class _Run:
    """One call's state: what to run, where it goes, the records, the bar."""

    def __init__(self, settings: BabylmSettings, model: PathLike, data: PathLike, output: PathLike,
                 load: dict[str, Any]) -> None:  # fmt: skip
        found, notes = find_tasks(data)
        self.settings, self.load = settings, load
        self.tasks = select(found, settings.tasks)
        self.notes = notes
        self.checkpoints = checkpoints(model, settings.revisions, settings.revisions_file)
        self.name = model_name(model)
        self.output = Path(output)
        self.root = self.output / self.name
        self.backend: str = settings.backend  # type: ignore[assignment]
        self.records = Records(self.root, self.backend)
        from pllscore.engine.babylm_scoring import temperature_range

        temperatures = temperature_range(settings.min_temperature, settings.max_temperature,
                                         settings.temperature_interval)  # fmt: skip
        self.options = RunOptions(self.backend, tuple(temperatures), settings.batch_size)
        self.units = [Unit(ck, c, t) for ck in self.checkpoints for c in settings.conventions() for t in self.tasks]
        self._models: dict[Checkpoint, str] = {}
        self._data = {t.folder: data_fingerprint(t) for t in self.tasks}
        self.ran: list[str] = []

    def made_by(self, unit: Unit) -> dict[str, Any]:
        """What a unit's record must hold for a resumed run to keep it: the checkpoint, data and settings."""
        ck = unit.checkpoint
        if ck not in self._models:
            from pllscore.io.provenance import named_model_identity

            self._models[ck] = named_model_identity(ck.source, ck.hub_revision)["fingerprint"]
        settings = {"backend": self.backend, "temperatures": list(self.options.temperatures)}
        return {"model": self._models[ck], "data": self._data[unit.task.folder], "settings": settings}

    def out(self, unit: Unit) -> Path:
        return task_output(self.output, self.name, unit.checkpoint.revision, unit.convention, self.backend, unit.task)

    def todo(self, resume: bool, force: bool) -> tuple[list[Unit], list[str]]:
        """The units to run, and those kept (resume); an earlier run's files without resume or force: refused."""
        todo, kept = [], []
        for unit in self.units:
            record = self.records.read(unit)
            if force or (record is None and not self.out(unit).exists()):
                todo.append(unit)
            elif not resume:
                what = "finished" if record is not None else "files of"
                raise InputError(
                    f"{self.root} already holds {what} {unit.label} (backend {self.backend}) from an earlier run; "
                    "add --resume to continue it (finished tasks are kept) or --force to run every task again"
                )
            elif record is not None and {k: record.get(k) for k in ("model", "data", "settings")} == self.made_by(unit):
                kept.append(unit.label)
            else:
                if record is not None:
                    self.notes.append(f"{unit.label}: made from another checkpoint, data or settings; run again")
                todo.append(unit)
        return todo, kept

    def commit(self, unit: Unit, result: Any) -> None:
        """Write a finished unit's files whole, then its record."""
        commit_task(self.out(unit), result.write)
        self.records.write(unit, self.made_by(unit), result.summary())
        self.ran.append(unit.label)

    def provenance(self, run_id: str, engine: str, kept: list[str], finished: bool) -> None:
        from pllscore.io.provenance import command_line, local_name, now, versions

        cks = [{"revision": c.revision, "source": local_name(c.source), "hub_revision": c.hub_revision}
               for c in self.checkpoints]  # fmt: skip
        self.records.add_run({
            "id": run_id, "command": command_line(), "date": now(), "versions": versions(), "engine": engine,
            "settings": {**self.settings.record(), "load": {k: str(v) for k, v in self.load.items()}},
            "tasks": [t.folder for t in self.tasks], "checkpoints": cks, "ran": list(self.ran), "resumed": kept,
            "notes": list(self.notes), "finished": finished,
        })  # fmt: skip

    def summary(self) -> Any:
        """This run's table; ``summary.csv`` gets every run's in the folder."""
        from pllscore.io.parts import write_part

        everything = self.records.all()
        if everything:
            write_part(self.root / "summary.csv", summary_table(everything), "csv")
        return summary_table(
            everything, backends=[self.backend], revisions=[c.revision for c in self.checkpoints],
            folders=[t.folder for t in self.tasks],
        )  # fmt: skip


def _load(ck: Checkpoint, backend: str, load: dict[str, Any]) -> Any:
    """A checkpoint's model (the backend's class, eval mode, on its device) and tokenizer."""
    from pllscore.engine.loading import load_pretrained

    try:
        return load_pretrained(ck.source, revision=ck.hub_revision, kind=KINDS[backend], **load)  # type: ignore[arg-type]
    except ModelError as e:
        raise ModelError(f"--backend {backend}, revision {ck.revision}: {e}") from None


def run_local(run: _Run, todo: list[Unit], bar: Any) -> None:
    """Each checkpoint loaded once; its tasks prepared (once per distinct tokenizer) before any runs, then run
    and committed one by one."""
    prepared: dict[tuple[str, str, str], Any] = {}
    for ck, units in by_checkpoint(todo):
        loaded = _load(ck, run.backend, run.load)
        key = tokenizer_key(loaded.tokenizer)
        for u in units:
            if (key, u.convention, u.task.folder) not in prepared:
                prepared[key, u.convention, u.task.folder] = prepare_task(
                    u.task, loaded.tokenizer, run.backend, u.convention
                )
        for u in units:
            bar.set_postfix_str(u.label, refresh=False)
            run.commit(u, run_task(prepared[key, u.convention, u.task.folder], u.task, loaded.model, run.options))
            bar.update(1)
        del loaded


def _execute(run: _Run, todo: list[Unit], kept: list[str], engine: str, ray: RaySettings,
             progress: bool | None) -> None:  # fmt: skip
    """Run ``todo`` on the engine under a bar; Ctrl-C (or SIGTERM) keeps each finished unit for resume."""
    from tqdm.auto import tqdm

    from pllscore.jobs.local import Interrupted

    run_id = uuid.uuid4().hex
    disable = None if progress is None else not progress  # None: tqdm's own, a bar only on a terminal
    bar = tqdm(total=len(todo), unit="task", desc=f"babylm {run.name}", disable=disable)
    try:
        if engine == "local":
            run_local(run, todo, bar)
        else:
            from pllscore.eval.babylm.on_ray import run_on_ray

            run_on_ray(run, todo, bar, ray)
    except KeyboardInterrupt as e:
        by = e.args[0] if e.args and e.args[0] == "SIGTERM" else None
        raise Interrupted(
            f"interrupted after {len(run.ran)} of {len(todo)} tasks (each finished one is written and kept); "
            "run the same command with --resume to continue", stopped_by=by,
        ) from None  # fmt: skip
    finally:
        bar.close()
        if run.ran or kept:  # a run that wrote nothing (bad data, a wrong backend) leaves nothing
            run.provenance(run_id, engine, kept, finished=len(run.ran) == len(todo))


def babylm(
    model: PathLike,
    data: PathLike,
    output: PathLike,
    *,
    backend: str | None = None,
    tasks: str | Sequence[str] | None = None,
    revisions: str | Sequence[str] | None = None,
    revisions_file: PathLike | None = None,
    convention: str = "babylm",
    min_temperature: float = 1.0,
    max_temperature: float | None = None,
    temperature_interval: float = 0.05,
    batch_size: int | None = None,
    resume: bool = False,
    force: bool = False,
    engine: str = "local",
    progress: bool | None = None,
    device: str = "auto",
    dtype: str | None = None,
    trust_remote_code: bool = False,
    ray: RaySettings | None = None,
    on_note: Callable[[str], None] | None = None,
) -> BabylmRun:
    """Run the BabyLM zero-shot tasks of ``data`` on every checkpoint of ``model``, into the official tree.

    Args:
        model: a Hub name, a saved model's folder, or a folder whose sub-folders are the checkpoints.
        data: the pipeline's evaluation folder (``fast_eval`` or ``full_eval``).
        output: the results folder: ``<output>/<model name>/<revision>/zero_shot/<backend>/...``, as the
            official pipeline writes it and its ``collate_preds.py`` reads it.
        backend: ``causal``, ``mlm``, ``mntp``, ``enc_dec_mask`` or ``enc_dec_prefix``.
        tasks: task names (``blimp``, ``supplement``, ``ewok``, ``entity_tracking``, ``wug_adj``, ``wug_past``,
            ``comps``, ``reading``) or folder names; default every task in ``data``.
        revisions, revisions_file: the checkpoints (Hub revisions, or a local folder's sub-folders); default
            ``main``, or every sub-folder of a folder of checkpoints.
        convention: ``babylm`` (the official numbers), ``pllscore`` (pllscore's exact metrics, under
            ``pllscore/``) or ``both``.
        min_temperature, max_temperature, temperature_interval: the temperatures, as the official pipeline's.
        batch_size: items per batch (default: each task's own).
        resume: keep the (revision, task) units an earlier run into ``output`` finished, run the rest.
        force: run every unit again, replacing an earlier run's files of it.
        engine: ``local``, or ``ray``: the checkpoints spread over Ray actors (``ray``: their settings).
        progress: a bar over revisions x tasks on stderr (None: only when stderr is a terminal).
        device, dtype, trust_remote_code: how each checkpoint is loaded (float32 by default: the exact numbers).
        on_note: called with each note (a task skipped, a folder not known) before anything runs.
    """
    settings = BabylmSettings(
        backend=backend, tasks=tasks, revisions=revisions,
        revisions_file=None if revisions_file is None else os.fspath(revisions_file), convention=convention,
        min_temperature=min_temperature, max_temperature=max_temperature, temperature_interval=temperature_interval,
        batch_size=batch_size, trust_remote_code=trust_remote_code,
    )  # fmt: skip
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; choose local or ray")
    if resume and force:
        raise InputError("give either --resume (continue the output) or --force (start it afresh), not both")
    load = {"device": device, "dtype": dtype, "trust_remote_code": settings.trust_remote_code}
    run = _Run(settings, model, data, output, load)
    for ck in run.checkpoints:
        check_backend(ck, run.backend)
    todo, kept = run.todo(resume, force)
    for note in run.notes if on_note is not None else ():
        on_note(note)
    _execute(run, todo, kept, engine, ray or RaySettings(), progress)
    return BabylmRun(run.root, run.summary(), tuple(run.notes), tuple(run.ran), tuple(kept))
