"""The models of a reading-times run: their labels, their identity, and how each is loaded.

A model's label names its ``surprisal`` column and its rows of ``fits.csv``. It is snake_case, so that it
is a name in R and in a model formula (letters, digits and ``_``; no ``-``, ``:``, ``/`` or ``.``): the
folder's or file's name (``tiny-gpt2`` -> ``tiny_gpt2``), or a Hub name's last part. Where two models
would share a label, each takes as many of its path's last parts as tell them apart (``runA/ckpt`` and
``runB/ckpt`` -> ``runA_ckpt`` and ``runB_ckpt``). The same model given twice (one folder by two paths,
one Hub name, one loaded scorer) is refused.

:func:`model_surprisals` takes each model's surprisals in turn, from the output folder's kept surprisals
(:mod:`.cache`) where they match, else by loading and scoring it (and then keeping them there).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pllscore.engine.progress import model_stage, stage
from pllscore.errors import InputError
from pllscore.eval.reading_times.cache import CACHE, cache_key, cached, keep
from pllscore.eval.reading_times.surprisal import word_surprisals
from pllscore.metrics import PLL_KINDS
from pllscore.settings import ModelSettings

__all__ = ["SurprisalOptions", "labels", "load", "long_mode", "model_label", "model_surprisals", "snake_label"]


def snake_label(text: str) -> str:
    """``text`` as a snake_case name: runs of other characters than letters and digits become one ``_``, and a
    name that would start with a digit starts with ``model_``."""
    name = re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_") or "model"
    return f"model_{name}" if name[0].isdigit() else name


def _parts(model: Any) -> list[str]:
    """The path of ``model`` as parts: a local folder or file made absolute, a Hub name split at ``/``."""
    if isinstance(model, (str, os.PathLike)):
        name = os.fspath(model)
        if Path(name).exists():
            name = os.path.abspath(name)
    else:
        name = str(getattr(model, "name", model))
    return [p for p in re.split(r"[/\\]+", name) if p]


def _same(model: Any) -> Any:
    """What makes two given models the same: a local path's real path, a Hub name, a loaded scorer itself."""
    if isinstance(model, (str, os.PathLike)):
        name = os.fspath(model)
        return os.path.realpath(name) if Path(name).exists() else name.rstrip("/")
    return ("scorer", id(model))


def model_label(model: Any) -> str:
    """The label of one model on its own: its folder's or file's name, or a Hub name's last part, in snake_case."""
    parts = _parts(model)
    return snake_label(parts[-1] if parts else str(model))


def labels(models: Sequence[Any]) -> list[str]:
    """Unique snake_case labels of ``models`` (the shortest path suffixes that tell them apart).

    Raises:
        InputError: the same model given twice.
    """
    seen: dict[Any, int] = {}
    for i, m in enumerate(models):
        key = _same(m)
        if key in seen:
            shown = os.fspath(m) if isinstance(m, (str, os.PathLike)) else str(getattr(m, "name", m))
            raise InputError(f"model {shown!r} is given twice (models {seen[key] + 1} and {i + 1}); give each once")
        seen[key] = i
    parts = [_parts(m) or [str(m)] for m in models]
    out = [""] * len(models)
    todo = list(range(len(models)))
    depth = 1
    while todo:
        names = {i: snake_label("_".join(parts[i][-depth:])) for i in todo}
        counts: dict[str, int] = {}
        for n in names.values():
            counts[n] = counts.get(n, 0) + 1
        rest = []
        for i in todo:
            whole = depth >= len(parts[i])
            if counts[names[i]] == 1 or whole:
                out[i] = names[i]
            else:
                rest.append(i)
        todo, depth = rest, depth + 1
    for i, label in enumerate(out):  # names that differ only in punctuation ("a-b", "a_b"): numbered
        if out.count(label) > 1:
            out[i] = f"{label}_{i + 1}"
    return out


def long_mode(scorer: Any) -> str:
    """How a scorer reads a text longer than it allows: in windows, except encoder-decoder LMs (an error)."""
    return "error" if getattr(scorer, "kind", None) == "seq2seq" else "window"


def load(model: Any, settings: ModelSettings) -> Any:
    """A named model loaded with ``settings`` (windows are asked for per call); a loaded scorer as it is."""
    if not isinstance(model, (str, os.PathLike)):
        return model
    from pllscore.scoring import api

    given = settings.load_kwargs()
    if given.get("stride") is None:  # windows are asked for per call (encoder-decoder LMs take none)
        given.pop("long", None)
    return api.load(model, **given)


@dataclass(frozen=True)
class SurprisalOptions:
    """How every model's surprisals are taken: loaded with ``settings``, scored under ``metric`` and ``mask_by``
    (masked LMs) and ``bow``, and kept in ``output`` (None: not kept)."""

    settings: ModelSettings
    metric: str | None
    bow: bool
    progress: bool | None
    output: Path | None
    mask_by: str = "words"


def _identity(model: Any, settings: ModelSettings) -> dict[str, Any]:
    """The name and fingerprint of a model, without loading a named one; a fingerprint of None: not kept."""
    from pllscore.io.provenance import model_identity, named_model_identity

    if isinstance(model, (str, os.PathLike)):
        return named_model_identity(model, settings.revision)
    if hasattr(model, "model"):
        return model_identity(model)
    return {"name": str(getattr(model, "name", model)), "fingerprint": None}  # a stand-in scorer (tests)


def _record(scorer: Any, label: str, identity: dict[str, Any], options: SurprisalOptions) -> dict[str, Any]:
    """The model as ``meta.json`` records it: label, name, revision, kind, fingerprint, the metric it was scored
    by and what its masks followed (masked LMs) and how a text too long for it was read (``long``: window, or
    error)."""
    from pllscore.io.provenance import model_record

    own = model_record(scorer) if hasattr(scorer, "model") else {"name": getattr(scorer, "name", label)}
    masked = getattr(scorer, "kind", None) in PLL_KINDS
    used = (scorer.metric[0] if options.metric is None else options.metric) if masked else None
    return {"label": label, **own, "fingerprint": identity.get("fingerprint"), "metric": used,
            "mask_by": options.mask_by if masked else None, "long": long_mode(scorer)}  # fmt: skip


def model_surprisals(
    models: Sequence[Any], names: Sequence[str], words: Any, options: SurprisalOptions
) -> tuple[list[Any], list[dict[str, Any]]]:
    """Per model (``names``: their labels), the surprisal in bits of each row of ``words`` (one row per word,
    texts contiguous) and the model's record for ``meta.json``.

    Raises:
        pllscore.jobs.local.Interrupted: Ctrl-C (or SIGTERM) with an output folder; the finished models'
            surprisals are kept there.
    """
    per_text = [list(g["word"]) for _, g in words.groupby("text", sort=False)]
    texts = [str(t) for t in dict.fromkeys(words["text"])]
    numbers = {k: v for k, v in options.settings.record().items() if k != "model"}
    numbers.update(metric=options.metric, bow=options.bow, mask_by=options.mask_by)
    columns: list[Any] = []
    records: list[dict[str, Any]] = []
    try:
        for i, (label, m) in enumerate(zip(names, models), 1):  # one model at a time, each loaded once
            identity = _identity(m, options.settings)
            key = cache_key(identity, numbers, texts, per_text) if identity.get("fingerprint") else None
            found = cached(options.output, label, key) if key else None
            if found is not None and [len(v) for v in found[0]] == [len(w) for w in per_text]:
                columns.append(np.concatenate(found[0]))
                records.append({**found[1], "surprisals": f"{CACHE}/{label}.json, kept by an earlier run"})
                continue
            scorer = load(m, options.settings)
            with stage(model_stage(i, len(models), label)):  # its bar says which model runs
                values = word_surprisals(
                    scorer,
                    texts,
                    per_text,
                    metric=options.metric,
                    bow=options.bow,
                    progress=options.progress,
                    label=label,
                    mask_by=options.mask_by,
                )
            record = _record(scorer, label, identity, options)
            del scorer
            if key:
                keep(options.output, label, key, record, values)
            columns.append(np.concatenate(values))
            records.append(record)
    except KeyboardInterrupt as e:
        if options.output is None:
            raise
        raise _interrupted(e, len(columns), len(models), options.output) from None
    return columns, records


def _interrupted(e: KeyboardInterrupt, done: int, n: int, output: Path) -> Exception:
    from pllscore.jobs.local import Interrupted

    by = str(e.args[0]) if e.args else None
    kept = (
        f"the surprisals of the {done} finished are kept in {os.fspath(output / CACHE)}/ and the same command "
        "continues after them"
        if done
        else "no model had finished, so nothing is kept; rerun the command"
    )
    return Interrupted(f"interrupted{f' by {by}' if by else ''} at model {done + 1} of {n}; {kept}", stopped_by=by)
