"""The settings of a file run: gathered once, recorded once, compared on resume from the same objects.

:func:`gather_job` turns what :func:`~pllscore.score_file` or the Ray engine was given (settings objects,
keyword options, or both) into one :class:`JobSettings`; the CLI builds the objects and hands them on,
so neither engine rebuilds its options field by field. :func:`settings_record` is what a run writes of
them (each group's :meth:`~pllscore.settings.Settings.record`, with the values the run resolved: the
model's full name, the metrics and per-token outputs it computes, the norms and their unigram counts)
and :func:`check_resumable` what a resumed run must share with the first one: every recorded field,
so a new setting that changes numbers is compared as soon as it is declared in :mod:`pllscore.settings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pllscore.errors import InputError
from pllscore.io.writers import check_resume
from pllscore.results.columns import old_schema_message
from pllscore.settings import ModelSettings, RaySettings, RunSettings, Settings, TableSettings, TextSettings, gather

__all__ = [
    "JobSettings", "RunRecord", "check_resumable", "gather_job", "resolved_options", "resume_keys", "settings_record",
]  # fmt: skip


@dataclass(frozen=True)
class JobSettings:
    """Every settings group of one file run (``ray``: the Ray engine's; its defaults on the local engine)."""

    model: ModelSettings
    text: TextSettings
    table: TableSettings
    run: RunSettings
    ray: RaySettings

    @property
    def score_options(self) -> Any:
        """The per-table options (:class:`~pllscore.jobs.table.ScoreOptions`) of these settings."""
        from pllscore.jobs.table import ScoreOptions

        return ScoreOptions.from_settings(self.text, self.table, self.model.long)


@dataclass(frozen=True)
class RunRecord:
    """What an engine records of a run, and what a resumed run must share with the first one: the engine's
    ``identity`` keys (the input's content, the model's files, the version, ...) and every recorded field of
    its settings ``groups``. Each engine (local, Ray) declares one; both record and compare through it."""

    identity: tuple[str, ...]
    groups: tuple[type[Settings], ...]

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key a resumed run is compared on."""
        return (*self.identity, *resume_keys(*self.groups))

    def settings(
        self, job: JobSettings, asked: Sequence[str], norms: Sequence[str], unigram: Any, **resolved: Any
    ) -> dict[str, Any]:
        """:func:`settings_record` of ``job``'s groups, with what the run ``resolved`` and the options it resolved
        against its model (:func:`resolved_options` of ``asked``, ``norms`` and ``unigram``)."""
        groups = (getattr(job, g.group) for g in self.groups)
        return settings_record(*groups, **resolved, **resolved_options(asked, norms, unigram))

    def check(self, old: Mapping[str, Any], new: Mapping[str, Any], what: str, **legacy: Any) -> None:
        """:func:`check_resumable` of :attr:`keys` (``legacy``: what an older output made without recording)."""
        check_resumable(old, new, self.keys, what, groups=self.groups, legacy=legacy or None)


def gather_job(model: Any, options: dict[str, Any], *, what: str, on_ray: bool = False) -> JobSettings:
    """The settings of a run: the settings objects given in ``options`` by their group's name (``text=``,
    ``table=``, ``run=``, and ``ray=`` ``on_ray``; the defaults where not given), with the other keyword
    ``options`` put in.

    ``model`` is a :class:`~pllscore.settings.ModelSettings`, or the model itself (a name or a scorer). An
    option that is no field of the groups ``what`` takes (the Ray group only ``on_ray``) is refused.
    """
    rest = dict(options)
    models = model if isinstance(model, ModelSettings) else ModelSettings(model=model)
    kinds = (TextSettings, TableSettings, RunSettings, *((RaySettings,) if on_ray else ()))
    groups: list[Settings] = [models, *(rest.pop(kind.group, None) or kind() for kind in kinds)]
    got = gather(rest, *groups, what=what)
    if got[0].model is None:
        raise InputError(f"{what}() needs a model: a Hub name, a local folder, a .gguf file or a loaded scorer")
    return JobSettings(*got[:4], ray=got[4] if on_ray else RaySettings())


def resolved_options(asked: Sequence[str], norms: Sequence[str], unigram: Any) -> dict[str, Any]:
    """The recorded values of the options a run resolves against its model: the per-token outputs, the BOW
    correction, the norms that add columns and the description of their unigram counts (when one is used)."""
    return {
        "outputs": [n for n in asked if n != "word_correction"],
        "word_prob": "bow" if "word_correction" in asked else None,
        "norm": list(norms) or None,
        "unigram": unigram if norms else None,
    }


def settings_record(*groups: Settings, **resolved: Any) -> dict[str, Any]:
    """The recorded fields of ``groups``, with the values the run ``resolved`` in place of those given."""
    out: dict[str, Any] = {}
    for group in groups:
        out.update(group.record())
    unknown = sorted(set(resolved) - set(out))
    if unknown:  # a resolved value must stand for a declared, recorded setting
        raise TypeError(f"not recorded settings: {unknown}")
    out.update(resolved)
    if "context" in out:
        out["context"] = out["context"] or None  # an empty context is no context
    return out


def resume_keys(*groups: type[Settings]) -> tuple[str, ...]:
    """The recorded fields of ``groups``: the settings a resumed run must share with the first one."""
    return tuple(name for group in groups for name in group.recorded())


def check_resumable(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    keys: Sequence[str],
    what: str,
    *,
    groups: Sequence[type[Settings]],
    legacy: Mapping[str, Any] | None = None,
) -> None:
    """:func:`~pllscore.io.resume.check_resume` of ``keys`` against an older output.

    A recorded setting the first run did not write was made with its default (it is older than the
    option), unless ``legacy`` says otherwise; an old value is read as this version records it (``"2"``
    and ``2.0`` are one base). An output written under other column names (``columns``, the
    :data:`~pllscore.results.columns.SCHEMA` it was written with) is refused whatever its settings.
    """
    if "columns" in keys and old.get("columns") != new.get("columns"):  # another schema: two headers in one file
        raise InputError(old_schema_message(what))
    defaults: dict[str, Any] = {}
    for group in groups:
        defaults.update(group().record())
    defaults.update(legacy or {})
    then = dict(old)
    for key in keys:
        if key not in then and key in defaults:
            then[key] = defaults[key]
        elif key in then:
            then[key] = _as_recorded_now(groups, key, then[key])
    check_resume(then, new, keys, what)


def _as_recorded_now(groups: Sequence[type[Settings]], key: str, value: Any) -> Any:
    for group in groups:
        if key in group.recorded():
            try:
                return group(**{key: value}).record()[key]
            except (InputError, TypeError, ValueError):  # not a value this version takes: compared as written
                return value
    return value
