"""The four masked-LM scoring metrics of Kauf & Ivanova (2023), by name.

A metric is a rule that, given a target token, says which positions of the sentence
are replaced by the mask token when that target is scored. The rules themselves live
in :mod:`pllscore.plan.masks`; this module only holds the names and their lookup.
Names never change meaning.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from pllscore.errors import InputError

__all__ = ["DEFAULT_METRIC", "METRICS", "PLL_KINDS", "resolve_metrics"]

#: name -> one-line description (the rule for target token t in word w)
METRICS: dict[str, str] = {
    "original": "mask t only (Salazar et al., 2020)",
    "word-l2r": "mask t and every later token of w (Kauf & Ivanova, 2023; recommended)",
    "whole-word": "mask every token of w",
    "sentence-l2r": "mask t and every position to its right, closing special token included",
}
DEFAULT_METRIC = "word-l2r"

#: the model kinds these metrics score: a masked LM, read at the masked position or one before it (MNTP)
PLL_KINDS: tuple[str, ...] = ("masked", "mntp")

# Spellings used by minicons and the paper's code, accepted so their users need not translate.
_ALIASES = {
    "within_word_l2r": "word-l2r",
    "pll-word-l2r": "word-l2r",
    "pll-original": "original",
    "within_word_mlm": "whole-word",
    "global_l2r": "sentence-l2r",
}


def _resolve_one(name: str) -> str:
    if not isinstance(name, str):
        raise InputError(f"metric must be a string, got {type(name).__name__}: {name!r}")
    key = name.strip().lower().replace("_", "-")
    if key in METRICS:
        return key
    alias = _ALIASES.get(name.strip().lower()) or _ALIASES.get(key.replace("-", "_"))
    if alias:
        return alias
    close = difflib.get_close_matches(key, list(METRICS), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise InputError(f"unknown metric {name!r}; {hint}choose from {', '.join(METRICS)} or 'all'")


def resolve_metrics(metric: str | Sequence[str]) -> tuple[str, ...]:
    """Turn a metric name, a list of names or ``"all"`` into canonical names, in order, without repeats."""
    names = [metric] if isinstance(metric, str) else list(metric)
    if not names:
        raise InputError("no metric given; choose from " + ", ".join(METRICS) + " or 'all'")
    out: list[str] = []
    for name in names:
        resolved = tuple(METRICS) if isinstance(name, str) and name.strip().lower() == "all" else (_resolve_one(name),)
        out.extend(m for m in resolved if m not in out)
    return tuple(out)
