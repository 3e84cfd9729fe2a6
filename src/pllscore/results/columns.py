"""The names of the columns pllscore writes: one rule for the CLI's files and the Python frames.

Every name is snake_case, made of ``[A-Za-z0-9_]`` and not starting with a digit, so that R, pandas'
``query`` and model formulas take it as written. The rule (``docs/reference/columns.md`` lists every column):

* ``text_id``, ``word_id``, ``token_id``: 0-based positions (of a text in the input, of a word or token in
  its text); ``text``, ``word``, ``token``: the text, a word's characters, a token's piece.
* A score column says what it holds and, unless nats, its unit: ``logprob`` or ``surprisal``, then ``_bits``
  or ``_log10`` for another base (``logprob`` alone is a natural-log probability). A per-metric or per-model
  column puts the metric or model first (``word_l2r_logprob``, ``causal_surprisal_bits``,
  ``tiny_gpt2_surprisal_bits``) and a normalisation last (``causal_logprob_mean``, ``..._per_char``).
* A name built from a metric, a norm, a model label or a measure has every other character replaced by ``_``
  (:func:`column_part`): ``word-l2r`` gives ``word_l2r``, ``per-char`` gives ``per_char``.

:data:`SCHEMA` is recorded with every file output, so a ``--resume`` onto a file written under the names
before this rule is refused in one line instead of joining two headers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "SCHEMA", "column_part", "entropy_column", "included_column", "old_schema_message", "pair_columns_now",
    "score_column_name", "value_name", "words_columns_now",
]  # fmt: skip

#: the version of the column names, recorded in a file output's meta as ``columns``
SCHEMA = 2

_OTHER = re.compile(r"[^A-Za-z0-9_]+")
#: the norms as the old pair columns named them
_OLD_NORMS = ("mean", "per-char", "slor", "norm-lp")


def column_part(name: object) -> str:
    """``name`` as a piece of a column name: runs of characters other than ``[A-Za-z0-9_]`` become ``_`` (ends
    stripped), and a name that would start with a digit or be empty gets an ``x`` in front (R's ``make.names``
    rule): ``word-l2r`` -> ``word_l2r``, ``tiny-gpt2`` -> ``tiny_gpt2``, ``2layer`` -> ``x2layer``."""
    part = _OTHER.sub("_", str(name)).strip("_")
    return part if part and not part[0].isdigit() else f"x{part}"


def value_name(surprisal: bool, unit: str) -> str:
    """The score's own name: ``logprob`` or ``surprisal``, with ``_bits`` or ``_log10`` when not in nats."""
    name = "surprisal" if surprisal else "logprob"
    return name if unit == "nats" else f"{name}_{column_part(unit)}"


def score_column_name(owner: str, surprisal: bool, unit: str) -> str:
    """A per-metric or per-model score column: ``word_l2r_logprob``, ``causal_surprisal_bits``, ..."""
    return f"{column_part(owner)}_{value_name(surprisal, unit)}"


def entropy_column(unit: str, owner: str | None = None) -> str:
    """The entropy column: ``entropy`` (nats) or ``entropy_bits``, after the metric when one is given."""
    name = "entropy" if unit == "nats" else f"entropy_{column_part(unit)}"
    return name if owner is None else f"{column_part(owner)}_{name}"


def included_column(measure: str) -> str:
    """reading-times' column of whether a row is fitted for ``measure``: ``meanItemRT_included``."""
    return f"{column_part(measure)}_included"


def pair_columns_now(columns: Iterable[str]) -> dict[str, str]:
    """The renames that bring a pair table written under the old names (``pairs.parquet`` of a ``blimp`` or
    ``pairs`` folder: ``good_score``, ``good_per-char``, ``correct_per-char``) to the current ones, so a run adds
    its rows to an older folder and ``report`` reads it."""
    out = {}
    for c in columns:
        side, _, rest = c.partition("_")
        if c in ("good_score", "bad_score"):
            out[c] = f"{side}_logprob"
        elif side in ("good", "bad") and rest in _OLD_NORMS:
            out[c] = f"{side}_logprob_{column_part(rest)}"
        elif side in ("correct", "accuracy", "Overall") and rest in _OLD_NORMS:
            out[c] = f"{side}_{column_part(rest)}"
    return out


def words_columns_now(columns: Iterable[str]) -> dict[str, str]:
    """The renames that bring a reading-times ``words.csv`` written under the old names (``text``,
    ``surprisal:<label>``, ``included:<measure>``) to the current ones, so ``report`` and the figures read it."""
    out = {}
    for c in columns:
        if c == "text":
            out[c] = "text_key"
        elif c.startswith("surprisal:"):
            out[c] = score_column_name(c.removeprefix("surprisal:"), True, "bits")
        elif c.startswith("included:"):
            out[c] = included_column(c.removeprefix("included:"))
    return out


def old_schema_message(what: str) -> str:
    """The refusal of a ``--resume`` onto an output written under the names before :data:`SCHEMA`."""
    return (
        f"cannot resume {what}: it was written with the old column names (row, word_text, piece, metric columns "
        "such as word-l2r); use --force to score it again under the current names "
        "(docs/reference/columns.md maps the old to the new)"
    )
