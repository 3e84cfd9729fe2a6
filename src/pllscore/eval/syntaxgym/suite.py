"""A SyntaxGym test suite read and checked: its items, conditions, regions, sentences and predictions.

The JSON format is SyntaxGym's (``meta``, ``region_meta``, ``predictions``, ``items``; see its
``suite_json`` page). A condition's sentence is its non-empty region contents, each stripped at both ends,
joined by single spaces (the published suites' own sentence files; SyntaxGym 0.6 refuses region content
with leading or trailing spaces, but the published suites have such regions: they are read, with one note
per suite). Predictions are ``{"type": "formula", "formula": ...}`` entries; a suite whose ``predictions``
list is empty but whose ``meta`` has ``string_predictions`` (the published suites of Hu et al. 2020 keep
their formulas there) is evaluated on those, with a note.

Everything that can be wrong with a suite is found here, before any model is loaded: broken JSON, a
missing field, an unknown ``meta.metric``, an empty suite or sentence, items with differing conditions, a
formula that does not parse or names a condition or region an item lacks. Each is an :class:`InputError`
naming the suite, the item and the prediction.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.eval.syntaxgym.formula import Formula, parse_formula

__all__ = ["REGION_METRICS", "Condition", "Item", "Suite", "read_suite"]

#: the region metrics SyntaxGym 0.6 knows (``utils.METRICS``)
REGION_METRICS = ("sum", "mean", "median", "range", "max", "min")


@dataclass(frozen=True)
class Condition:
    """One condition of an item: its region numbers and contents as given, and its sentence."""

    name: str
    numbers: tuple[int, ...]
    contents: tuple[str, ...]

    @property
    def sentence(self) -> str:
        """The non-empty contents, stripped at both ends, joined by single spaces."""
        return " ".join(c.strip() for c in self.contents if c.strip())

    def spans(self) -> list[tuple[int, int] | None]:
        """Per region, its character span in :attr:`sentence` (None for an empty region)."""
        out: list[tuple[int, int] | None] = []
        at = 0
        for content in self.contents:
            text = content.strip()
            if not text:
                out.append(None)
                continue
            out.append((at, at + len(text)))
            at += len(text) + 1
        return out


@dataclass(frozen=True)
class Item:
    number: Any
    conditions: tuple[Condition, ...]


@dataclass(frozen=True)
class Suite:
    """A checked suite: ``name`` (``meta.name``, else the file's stem), ``metric`` (``meta.metric``), the items,
    the predictions (parsed), the file's content fingerprint and the notes its reading made."""

    name: str
    source: str
    metric: str
    items: tuple[Item, ...]
    predictions: tuple[Formula, ...]
    fingerprint: str
    notes: tuple[str, ...] = ()

    def sentences(self) -> list[str]:
        """Every condition's sentence, item by item, in order (repeats kept)."""
        return [c.sentence for item in self.items for c in item.conditions]


def _need(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind):
        raise InputError(f"{where} must be a {'list' if kind is list else 'JSON object'}")
    return value


def _field(data: dict[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise InputError(f"{where} has no {key!r}")
    return data[key]


def _condition(data: Any, where: str) -> Condition:
    data = _need(data, dict, where)
    name = _field(data, "condition_name", where)
    where = f"{where} (condition {name!r})"
    regions = _need(_field(data, "regions", where), list, f"{where} regions")
    numbers, contents = [], []
    for region in regions:
        region = _need(region, dict, f"{where} region")
        number, content = _field(region, "region_number", where), _field(region, "content", where)
        if not isinstance(content, str):
            raise InputError(f"{where} region {number}: content must be a string")
        try:
            numbers.append(int(number))
        except (TypeError, ValueError):
            raise InputError(f"{where}: region_number {number!r} is not a number") from None
        contents.append(content)
    condition = Condition(str(name), tuple(numbers), tuple(contents))
    if len(set(numbers)) < len(numbers):
        raise InputError(f"{where} numbers two regions alike")
    if not condition.sentence:
        raise InputError(f"{where}: every region is empty, so there is no sentence to score")
    return condition


def _item(data: Any, where: str) -> Item:
    data = _need(data, dict, where)
    number = _field(data, "item_number", where)
    where = f"{where.rsplit(' ', 1)[0]} {number}"
    conditions = _need(_field(data, "conditions", where), list, f"{where} conditions")
    if not conditions:
        raise InputError(f"{where} has no conditions")
    return Item(number, tuple(_condition(c, where) for c in conditions))


def _formulas(data: dict[str, Any], meta: dict[str, Any], suite: str, notes: list[str]) -> list[str]:
    given = _need(data.get("predictions", []), list, f"suite {suite}: predictions")
    texts = []
    for i, p in enumerate(given):
        p = _need(p, dict, f"suite {suite}, prediction {i}")
        if p.get("type", "formula") != "formula":
            raise InputError(f"suite {suite}, prediction {i}: unknown prediction type {p.get('type')!r}")
        texts.append(_field(p, "formula", f"suite {suite}, prediction {i}"))
    if not texts and meta.get("string_predictions"):
        texts = list(_need(meta["string_predictions"], list, f"suite {suite}: meta.string_predictions"))
        notes.append(f"suite {suite}: predictions is empty; evaluating the {len(texts)} of meta.string_predictions")
    return texts


def _check_formula(formula: Formula, item: Item, suite: str, index: int) -> None:
    """Refuse a formula that names a condition or region ``item`` lacks."""
    have = {c.name: set(c.numbers) for c in item.conditions}
    for region in formula.regions():
        where = f"suite {suite}, item {item.number}, prediction {index} ({formula.text.strip()})"
        if region.condition not in have:
            raise InputError(
                f"{where}: no condition {region.condition!r} in the item (its conditions: {', '.join(have)})"
            )
        if region.number is not None and region.number not in have[region.condition]:
            raise InputError(f"{where}: condition {region.condition!r} has no region {region.number}")


def read_suite(path: str | os.PathLike[str]) -> Suite:
    """Read and check a suite file; every problem is an :class:`InputError` naming the suite (and item, prediction)."""
    from pllscore.io.provenance import file_sha256

    source = os.fspath(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"suite {source} not found") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        at = f" (line {e.lineno}, column {e.colno})" if isinstance(e, json.JSONDecodeError) else ""
        raise InputError(f"suite {source} is not valid JSON{at}: {getattr(e, 'msg', e)}") from None
    data = _need(data, dict, f"suite {source}")
    meta = _need(data.get("meta", {}), dict, f"suite {source}: meta")
    name = str(meta.get("name") or Path(source).stem)
    metric = meta.get("metric", "sum")
    if metric not in REGION_METRICS:
        raise InputError(f"suite {name}: unknown meta.metric {metric!r}; SyntaxGym knows {', '.join(REGION_METRICS)}")
    items = _need(data.get("items", []), list, f"suite {name}: items")
    if not items:
        raise InputError(f"suite {name} has no items")
    read = tuple(_item(it, f"suite {name}, item {i + 1}") for i, it in enumerate(items))
    names = sorted(c.name for c in read[0].conditions)
    if len(set(names)) < len(names):
        raise InputError(f"suite {name}, item {read[0].number} names two conditions alike")
    for item in read[1:]:
        if sorted(c.name for c in item.conditions) != names:
            theirs, first = ", ".join(c.name for c in item.conditions), ", ".join(names)
            raise InputError(f"suite {name}, item {item.number}: conditions {theirs} differ from the first's ({first})")
    notes: list[str] = []
    formulas = []
    for i, text in enumerate(_formulas(data, meta, name, notes)):
        try:
            formulas.append(parse_formula(text))
        except InputError as e:
            raise InputError(f"suite {name}, prediction {i}: {e}") from None
        for item in read:
            _check_formula(formulas[-1], item, name, i)
    padded = sum(c != c.strip() for it in read for cond in it.conditions for c in cond.contents if c.strip())
    if padded:
        notes.append(
            f"suite {name}: {padded} region contents have leading or trailing spaces (SyntaxGym 0.6 refuses them); "
            "each is stripped before the sentence is joined"
        )
    return Suite(name, source, metric, read, tuple(formulas), "sha256:" + file_sha256(path), tuple(notes))
