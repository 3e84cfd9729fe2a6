"""A BabyLM sentence task's JSONL files read into :class:`~pllscore.plan.babylm_reads.Item` s, checked.

Each task's folder holds ``.jsonl`` files, one JSON object a line; the files are read in the folder's
own listing order (as the official pipeline's ``Path.iterdir()`` reads them: the reports list groupings
in the order they first appear). How each task's fields become sentences, prefixes and completions:

- ``blimp`` (also the supplement): ``sentence_good``/``sentence_bad``, whole sentences; groupings
  ``field`` (``syntax_semantics`` written ``syntax/semantics``), ``UID``, ``linguistics_term``, or
  for a line without ``field`` (the supplement) ``supplement``, the file's stem, ``supplement``;
- ``ewok``: ``Context1 + " " + Target1`` and ``Context1 + " " + Target2``, the completions
  ``" " + Target`` (the prefixes ``Context1`` and ``Context2``: only ``enc_dec_prefix`` reads them);
  groupings ``Domain``, ``ContextType``, ``ContextDiff``, ``TargetDiff``;
- ``wug_adj``/``wug_past``: ``sentences`` split at tabs, whole sentences, and the human ``ratio``;
- ``entity_tracking``: ``input_prefix + option`` for each option; grouped by
  ``<file stem>_<numops>_ops``;
- ``comps``: ``prefix + " " + property_phrase`` for both prefixes, the completion the property;
  grouped by file (``base``, ``wugs``, ``wugs_dist_before``, else ``wugs_dist_in_between``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.plan.babylm_reads import Item

__all__ = ["TASKS_SENTENCE", "read_task"]

#: the sentence tasks, under the official pipeline's names
TASKS_SENTENCE = ("blimp", "ewok", "entity_tracking", "wug_adj", "wug_past", "comps")

_FIELDS: dict[str, tuple[str, ...]] = {
    "blimp": ("sentence_good", "sentence_bad"),
    "ewok": ("Domain", "ContextType", "ContextDiff", "TargetDiff", "Context1", "Context2", "Target1", "Target2"),
    "wug_adj": ("sentences", "ratio"),
    "wug_past": ("sentences", "ratio"),
    "entity_tracking": ("input_prefix", "options", "numops"),
    "comps": ("prefix_acceptable", "prefix_unacceptable", "property_phrase"),
}
_COMPS = {"comps_base": "base", "comps_wugs": "wugs", "comps_wugs_dist-before": "wugs_dist_before"}


def _blimp(raw: dict[str, Any], stem: str, task: str) -> Item:
    good, bad = raw["sentence_good"], raw["sentence_bad"]
    if "field" in raw:
        field = "syntax/semantics" if raw["field"] == "syntax_semantics" else raw["field"]
        groups = (("field", field), ("UID", raw["UID"]), ("linguistics_term", raw["linguistics_term"]))
    else:  # the supplement's lines: the file is the paradigm
        groups = (("field", "supplement"), ("UID", stem), ("linguistics_term", "supplement"))
    return Item((good, bad), (None, None), (good, bad), groups[1][1], groups)


def _ewok(raw: dict[str, Any], stem: str, task: str, full: bool = False) -> Item:
    sentences = tuple(" ".join([raw["Context1"], raw[t]]) for t in ("Target1", "Target2"))
    completions = sentences if full else tuple(" " + raw[t] for t in ("Target1", "Target2"))
    groups = (
        ("UID", raw["Domain"]),
        ("context_type", raw["ContextType"]),
        ("context_contrast", raw["ContextDiff"]),
        ("target_contrast", raw["TargetDiff"]),
    )
    return Item(sentences, (raw["Context1"], raw["Context2"]), completions, raw["Domain"], groups)


def _wug(raw: dict[str, Any], stem: str, task: str) -> Item:
    sentences = tuple(raw["sentences"].split("\t"))
    try:
        ratio = float(raw["ratio"])
    except (TypeError, ValueError):
        raise ValueError(f"'ratio' must be a number, got {raw['ratio']!r}") from None
    # one prefix only, as the official reader gives (enc_dec_prefix then reads one sentence)
    return Item(sentences, (None,), sentences, task, (("UID", task),), ratio=ratio)


def _entity_tracking(raw: dict[str, Any], stem: str, task: str) -> Item:
    options = raw["options"]
    if not isinstance(options, list) or not options or not all(isinstance(o, str) for o in options):
        raise ValueError("'options' must be a non-empty list of strings")
    prefix = raw["input_prefix"]
    uid = f"{stem}_{raw['numops']}_ops"
    sentences = tuple(prefix + o for o in options)
    return Item(sentences, (prefix,) * len(options), tuple(options), uid, (("UID", uid),))


def _comps(raw: dict[str, Any], stem: str, task: str) -> Item:
    prefixes = (raw["prefix_acceptable"], raw["prefix_unacceptable"])
    phrase = raw["property_phrase"]
    uid = _COMPS.get(stem, "wugs_dist_in_between")
    sentences = tuple(" ".join([p, phrase]) for p in prefixes)
    return Item(sentences, prefixes, (phrase, phrase), uid, (("UID", uid),), predict_sentences=True)


_DECODERS: dict[str, Callable[..., Item]] = {
    "blimp": _blimp,
    "ewok": _ewok,
    "wug_adj": _wug,
    "wug_past": _wug,
    "entity_tracking": _entity_tracking,
    "comps": _comps,
}


def _check_fields(raw: Any, task: str) -> None:
    if not isinstance(raw, dict):
        raise ValueError(f"expected a JSON object, got {type(raw).__name__}")
    missing = [f for f in _FIELDS[task] if f not in raw]
    if missing:
        raise ValueError(f"a {task} line needs {', '.join(_FIELDS[task])}; missing {', '.join(missing)}")
    if task == "blimp" and "field" in raw:
        missing = [f for f in ("UID", "linguistics_term") if f not in raw]
        if missing:
            raise ValueError(f"a BLiMP line with 'field' needs 'UID' and 'linguistics_term'; missing {missing[0]}")
    text_fields = [f for f in _FIELDS[task] if f not in ("ratio", "options", "numops")]
    for name in text_fields:
        if not isinstance(raw[name], str):
            raise ValueError(f"{name!r} must be a string, got {type(raw[name]).__name__}")


def _read_file(path: Path, task: str, full_sentence_scores: bool) -> list[Item]:
    items = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{where}: not a JSON line ({e.msg}); each line must be one JSON object") from None
            try:
                _check_fields(raw, task)
                options = {"full": True} if task == "ewok" and full_sentence_scores else {}
                item = _DECODERS[task](raw, path.stem, task, **options)
            except ValueError as e:
                raise InputError(f"{where}: {e}") from None
            items.append(replace(item, where=where))
    return items


def read_task(task: str, data_dir: Path, *, full_sentence_scores: bool = False) -> list[Item]:
    """Every item of ``task`` in ``data_dir``'s ``.jsonl`` files, in the folder's listing order.

    ``full_sentence_scores`` (EWoK only, the official ``--full_sentence_scores``): score whole sentences,
    not the targets alone. Bad data raises :class:`InputError` naming the file and line.
    """
    if task not in TASKS_SENTENCE:
        raise InputError(f"unknown sentence task {task!r}; use one of {', '.join(TASKS_SENTENCE)}")
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise InputError(f"{data_dir}: no such folder; give the task's folder (e.g. fast_eval/blimp_fast)")
    files = [p for p in data_dir.iterdir() if p.suffix == ".jsonl"]
    items = [item for path in files for item in _read_file(path, task, full_sentence_scores)]
    if not items:
        raise InputError(f"{data_dir}: no items (no .jsonl file with a line in it) for the {task} task")
    return items
