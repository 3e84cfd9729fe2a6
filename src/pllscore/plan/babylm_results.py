"""A BabyLM sentence task's scores -> the official choices, groupings, best temperature, report and predictions.

Pure logic (numpy, no torch), the official pipeline's rules:

- an item's choice is its highest-scoring sentence (the first of equal ones); it is right when it is the
  first sentence;
- a grouping's accuracy is ``100 * right / total`` per value, values in the order they first appear;
- the average is the mean of the ``UID`` accuracies, except for entity tracking: the mean of the split
  averages (``regular``, ``ambiref``, ``move_contents``: the mean of the UIDs that start with the split's
  name, each added to the UID accuracies after them);
- the WUG tasks report Spearman's rho between the softmax share of the first sentence and the human
  ratio (float32 scores), as ``UID`` / ``avg`` and as the average;
- the best temperature is the first whose average beats every earlier one (and -1); where none does
  (the official code then fails), the first temperature;
- ``best_temperature_report.txt`` and ``predictions.json`` are written as the official code writes them.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from pllscore.plan.babylm_reads import Item

__all__ = ["Outcome", "best", "choose", "outcome", "predictions_json", "report_text"]

_SPLITS = ("regular", "ambiref", "move_contents")


@dataclass(frozen=True)
class Outcome:
    """One temperature's results: per item the chosen sentence (and the first's softmax share, WUG), the
    groupings' values and the average."""

    temperature: float
    choices: tuple[int, ...]
    groups: dict[str, dict[str, float]]
    average: float
    probs: tuple[float, ...] | None = None

    @property
    def metric(self) -> str:
        """What the report's numbers are."""
        return "ACCURACY" if self.probs is None else "SPEARMAN'S RHO"


def choose(scores: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per item (its sentences' scores) the index of the best (the first of ties) and the first sentence's
    softmax share, computed in the scores' own type (the official scores are float32)."""
    choices = np.empty(len(scores), dtype=np.int64)
    firsts = np.empty(len(scores), dtype=np.float64)
    for i, row in enumerate(scores):
        row = np.asarray(row)
        choices[i] = int(np.argmax(row))
        shifted = np.exp(row - row.max())
        firsts[i] = shifted[0] / shifted.sum()
    return choices, firsts


def _accuracies(items: Sequence[Item], choices: np.ndarray) -> dict[str, dict[str, float]]:
    total: dict[str, dict[str, int]] = {}
    right: dict[str, dict[str, int]] = {}
    for item, choice in zip(items, choices):
        for key, value in item.groups:
            total.setdefault(key, {}).setdefault(value, 0)
            right.setdefault(key, {}).setdefault(value, 0)
            total[key][value] += 1
            right[key][value] += int(choice == 0)
    return {k: {v: 100.0 * right[k][v] / n for v, n in counts.items()} for k, counts in total.items()}


def _average(groups: dict[str, dict[str, float]], task: str) -> float:
    uids = groups.get("UID", {})
    if task != "entity_tracking":
        return sum(uids.values()) / len(uids) if uids else float("nan")
    split_means = []
    for split in _SPLITS:
        keys = [k for k in uids if k.startswith(split)]
        if keys:
            uids[split] = sum(uids[k] for k in keys) / len(keys)
            split_means.append(uids[split])
    return sum(split_means) / len(split_means) if split_means else float("nan")


def outcome(
    items: Sequence[Item],
    scores: Sequence[np.ndarray],
    task: str,
    temperature: float,
    chosen: tuple[np.ndarray, np.ndarray] | None = None,
) -> Outcome:
    """The results at one temperature of ``items`` given each item's sentence scores (``chosen``: the choices
    and first shares already made from them, else :func:`choose` makes them)."""
    choices, firsts = chosen if chosen is not None else choose(scores)
    if task.startswith("wug"):
        ratios = np.array([item.ratio for item in items], dtype=np.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy's warning on constant shares: rho is then nan, as reported
            rho = float(spearmanr(firsts, ratios)[0]) if len(items) > 1 else float("nan")
        probs = tuple(float(p) for p in firsts)
        return Outcome(temperature, tuple(int(c) for c in choices), {"UID": {"avg": rho}}, rho, probs)
    groups = _accuracies(items, choices)
    return Outcome(temperature, tuple(int(c) for c in choices), groups, _average(groups, task))


def best(outcomes: Sequence[Outcome]) -> Outcome:
    """The official best temperature: the first whose average beats every earlier one (and -1)."""
    chosen, top = outcomes[0], -1.0
    found = False
    for o in outcomes:
        if o.average > top:
            chosen, top, found = o, o.average, True
    return chosen if found else outcomes[0]


def report_text(o: Outcome) -> str:
    """``best_temperature_report.txt`` as the official pipeline writes it."""
    lines = [f"TEMPERATURE: {o.temperature:.2f}", ""]
    for domain, values in o.groups.items():
        lines.append(f"### {domain.upper()} {o.metric}")
        lines.extend(f"{k}: {v:.2f}" for k, v in values.items())
        lines.append("")
    lines += [f"### AVERAGE {o.metric}", f"{o.average:.2f}", ""]
    return "\n".join(lines) + "\n"


def predictions_json(items: Sequence[Item], o: Outcome) -> str:
    """``predictions.json`` as the official pipeline writes it: per UID (in order of first appearance) its
    items' ids (``<uid>_<n>``) and chosen texts (and the first's share, WUG)."""
    out: dict[str, dict[str, list[dict[str, object]]]] = {}
    for i, (item, choice) in enumerate(zip(items, o.choices)):
        preds = out.setdefault(item.uid, {"predictions": []})["predictions"]
        pred: dict[str, object] = {"id": f"{item.uid}_{len(preds)}", "pred": item.shown[choice]}
        if o.probs is not None:
            pred["prob"] = o.probs[i]
        preds.append(pred)
    return json.dumps(out)
