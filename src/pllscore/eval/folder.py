"""The output folder of an evaluation: which rows it holds, how they were made, and which models made them.

Writing into a folder that already holds results of the same kind adds rows, so several models end
up in one table. Rows are keyed by the model's identity (``model_id``: its name and a fingerprint of
its files, revision or weights, :func:`pllscore.io.provenance.model_key`) and the metric: the same
model and metric run again replace their old rows, while two different models that share a folder
name (``runA/checkpoint-1000``, ``runB/checkpoint-1000``) are two rows, shown under names that tell
them apart.

``meta.json`` holds the folder's ``kind``, its ``settings`` (what rows must share to be merged: the
data's content fingerprint, paradigms, ``limit``, the good/bad columns, the counting and text
conventions, the norms) and one entry per run (command, date, models, versions, settings).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.results.columns import pair_columns_now

__all__ = [
    "CONVENTION",
    "Identity",
    "check_folder",
    "display_names",
    "identity",
    "merge_rows",
    "output_folder",
    "read_meta",
    "record_run",
]

#: how pairs are counted; results counted another way are never merged into one table
CONVENTION = "summed log-probability; right when good > bad; a tie or an unscored (NaN) side is wrong"


@dataclass(frozen=True)
class Identity:
    """Who made a row: ``model_id`` is unique (``"<label>@<12 hex of the fingerprint>"``), ``name`` the
    absolute path of a local model, else its name."""

    model_id: str
    name: str
    fingerprint: str | None


def identity(scorer: Any) -> Identity:
    """The identity of a loaded scorer."""
    from pllscore.io.provenance import model_identity, model_key

    if not hasattr(scorer, "model"):  # a stand-in scorer without a model (tests): its name is all there is
        return Identity(scorer.name, scorer.name, None)
    ident = model_identity(scorer)
    return Identity(model_key(scorer), ident["name"], ident["fingerprint"])


def display_names(names: dict[str, str]) -> dict[str, str]:
    """model_id -> the name shown in tables: the folder's basename (or Hub name) where that is unique.

    Models that share one get the shortest path suffix that tells them apart
    (``runA/checkpoint-1000``), or their ``model_id`` where the path is the same (a folder
    whose weights changed between runs).
    """
    by_label: dict[str, list[str]] = defaultdict(list)
    for mid in names:
        by_label[mid.rsplit("@", 1)[0]].append(mid)
    shown: dict[str, str] = {}
    for label, ids in by_label.items():
        if len(ids) == 1:
            shown[ids[0]] = label
            continue
        paths = [names[m].replace("\\", "/").rstrip("/").split("/") for m in ids]
        if len({"/".join(p) for p in paths}) < len(ids):
            shown.update({m: m for m in ids})
            continue
        for k in range(2, max(map(len, paths)) + 1):
            suffixes = ["/".join(p[-k:]) for p in paths]
            if len(set(suffixes)) == len(ids):
                break
        shown.update(zip(ids, suffixes))
    counts: dict[str, int] = defaultdict(int)
    for name in shown.values():
        counts[name] += 1
    return {m: (m if counts[name] > 1 else name) for m, name in shown.items()}


def output_folder(output: str | os.PathLike[str] | None) -> Path | None:
    """The output folder, created; None for no output."""
    if output is None:
        return None
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise InputError(f"output {os.fspath(out)!r} is a file; give a folder for the tables")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create output folder {os.fspath(out)!r}: {e.strerror}") from None
    return out


def read_meta(output: Path) -> dict[str, Any] | None:
    """The folder's ``meta.json``, or None where it has none."""
    meta = output / "meta.json"
    if not meta.exists():
        return None
    try:
        return dict(json.loads(meta.read_text()))
    except (json.JSONDecodeError, TypeError, ValueError):
        raise InputError(f"{meta} is not valid JSON; use another output folder or --force") from None


def _shown(value: Any) -> str:
    if isinstance(value, list):
        head = ", ".join(map(str, value[:3])) + (", ..." if len(value) > 3 else "")
        return f"[{head}] ({len(value)})"
    if isinstance(value, str) and value.startswith("sha256:"):
        return value[:19] + "... (by content)"
    return str(value)


def check_folder(output: Path | None, kind: str, settings: dict[str, Any], force: bool) -> bool:
    """Whether the run adds to results already in ``output``; refuse one made differently from them.

    ``settings`` (data fingerprint, paradigms, limit, columns, convention) must equal the
    folder's; with ``force`` the folder's results are replaced instead.
    """
    if output is None or force:
        return False
    meta = read_meta(output)
    has_rows = (output / "pairs.parquet").exists()
    if meta is not None and meta.get("kind") != kind:
        raise InputError(
            f"{output} holds {meta.get('kind') or 'other'} results, not {kind}; use another output folder or --force"
        )
    if not has_rows:
        return False
    old = (meta or {}).get("settings")
    if old is None:
        raise InputError(
            f"{output} holds results that do not record how they were made (an earlier pllscore); "
            "use another output folder or --force"
        )
    old = {"text_convention": "paper", **old}  # a folder written before the option: sentences as given
    for key in dict.fromkeys([*settings, *old]):  # a key only one side has (norms) differs too
        value = settings.get(key)
        if old.get(key) != value:
            raise InputError(
                f"{output} holds results made with {key}={_shown(old.get(key))}; this run has "
                f"{key}={_shown(value)}; use another output folder or --force"
            )
    return True


def merge_rows(output: Path | None, adding: bool, scored: Any) -> Any:
    """Add this run's rows to what the folder already holds (same model_id and metric: replaced), and set
    the readable ``model`` column of every row from ``model_id``."""
    import pandas as pd

    if output is not None and adding:
        old = pd.read_parquet(output / "pairs.parquet")
        old = old.rename(columns=pair_columns_now(old.columns))  # a folder written under the old names
        done = set(zip(scored["model_id"], scored["metric"]))
        keep = [(m, k) not in done for m, k in zip(old["model_id"], old["metric"])]
        scored = pd.concat([old[keep], scored], ignore_index=True)
    names = dict(zip(scored["model_id"], scored["model_name"]))
    scored["model"] = scored["model_id"].map(display_names(names))
    return scored


def record_run(
    output: Path,
    kind: str,
    run: dict[str, Any],
    settings: dict[str, Any],
    models: list[tuple[Any, Identity]],
    adding: bool,
) -> None:
    """Write ``meta.json``: the folder's ``settings`` and, after the runs before it, this ``run`` with its
    command, date, ``models`` (each scorer with its identity) and versions."""
    from pllscore.io.provenance import command_line, model_record, now, versions

    meta = read_meta(output) if adding else None
    if meta is None:
        meta = {"kind": kind, "runs": []}
    meta["settings"] = settings
    run.update(
        command=command_line(),
        date=now(),
        models=[{**model_record(s), "model_id": i.model_id, "fingerprint": i.fingerprint} for s, i in models],
        versions=versions(),
    )
    meta["runs"].append(run)
    (output / "meta.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
