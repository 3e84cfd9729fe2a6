"""BLiMP (Warstadt et al., 2020) as minimal pairs, scored and summarised as in Kauf & Ivanova (2023).

In: a folder of BLiMP JSON Lines files (one per paradigm) and scorers.
Out: per-pair scores, per-paradigm accuracy, and the summary table: rows model x metric,
columns Overall + the 12 phenomena, accuracy x 100 with one decimal. A phenomenon's accuracy
is the mean of its paradigms' accuracies; Overall is the mean over all paradigms.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.eval.pairs import accuracy, norm_columns

__all__ = ["PHENOMENA", "blimp_tables", "load_blimp", "summary_table"]

#: BLiMP's 12 phenomena (``linguistics_term``), in the column order of the paper's table
PHENOMENA = (
    "anaphor_agreement", "argument_structure", "binding", "control_raising", "determiner_noun_agreement",
    "ellipsis", "filler_gap_dependency", "irregular_forms", "island_effects", "npi_licensing", "quantifiers",
    "subject_verb_agreement",
)  # fmt: skip


def load_blimp(data: str | os.PathLike[str], paradigms: Sequence[str] | None = None, limit: int | None = None) -> Any:
    """Read BLiMP paradigms from a folder of ``<UID>.jsonl`` files.

    Args:
        data: the folder.
        paradigms: UIDs to read (default: every file in the folder).
        limit: read at most this many pairs per paradigm (the first ones; for quick runs).

    Returns:
        A DataFrame with ``paradigm``, ``phenomenon``, ``pair_id``, ``sentence_good``, ``sentence_bad``.
    """
    import pandas as pd

    folder = Path(data)
    if not folder.is_dir():
        raise InputError(
            f"BLiMP folder {os.fspath(data)!r} not found; pass --data with the folder of <paradigm>.jsonl files"
        )
    available = sorted(p.stem for p in folder.glob("*.jsonl"))
    if not available:
        raise InputError(f"{os.fspath(data)!r} holds no .jsonl files; BLiMP comes as one <paradigm>.jsonl per paradigm")
    wanted = list(paradigms) if paradigms else available
    for uid in wanted:
        if uid not in available:
            close = difflib.get_close_matches(uid, available, n=3)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            raise InputError(f"no paradigm {uid!r} in {os.fspath(data)!r}; {hint}({len(available)} paradigms there)")
    rows = []
    for uid in wanted:
        path = folder / f"{uid}.jsonl"
        taken = 0
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                if limit is not None and taken >= limit:
                    break
                taken += 1
                try:
                    rec = json.loads(line)
                    rows.append(
                        {
                            "paradigm": rec.get("UID", uid),
                            "phenomenon": rec["linguistics_term"],
                            "pair_id": str(rec.get("pairID", n - 1)),
                            "sentence_good": rec["sentence_good"],
                            "sentence_bad": rec["sentence_bad"],
                        }
                    )
                except (json.JSONDecodeError, KeyError, TypeError) as e:
                    what = f"missing field {e}" if isinstance(e, KeyError) else "not valid JSON"
                    raise InputError(
                        f"line {n} of {path} is {what}; BLiMP lines need sentence_good, sentence_bad, linguistics_term"
                    ) from None
    return pd.DataFrame(rows)


def blimp_tables(scored: Any) -> tuple[Any, Any]:
    """Per-paradigm accuracy and the summary table from per-pair scores."""
    paradigms = accuracy(scored, ["phenomenon", "paradigm"])
    return paradigms, summary_table(paradigms)


def summary_table(paradigms: Any) -> Any:
    """Rows model x metric; columns Overall and the 12 phenomena; accuracy x 100, one decimal.

    A pair with an unscored (NaN) side counts as wrong; ``paradigms`` says how many in ``n_unscored``.
    With normalised scores, ``Overall_<norm>`` (the mean of the paradigms' ``accuracy_<norm>``)
    follows ``Overall`` for each norm other than ``sum``; the phenomena are under ``sum``.
    """
    import pandas as pd

    rows = []
    keys = ["model", *(["model_id"] if "model_id" in paradigms.columns else []), "metric"]
    for key, g in paradigms.groupby(keys, sort=False):
        row: dict[str, Any] = {"model": key[0], "metric": key[-1], "Overall": 100 * g["accuracy"].mean()}
        for n in norm_columns(paradigms):
            row[f"Overall_{n}"] = 100 * g[f"accuracy_{n}"].mean()
        for ph in PHENOMENA:  # every column, empty where no paradigm of it was run
            sub = g[g["phenomenon"] == ph]
            row[ph] = 100 * sub["accuracy"].mean() if len(sub) else float("nan")
        rows.append(row)
    table = pd.DataFrame(rows)
    return table.round(1)
