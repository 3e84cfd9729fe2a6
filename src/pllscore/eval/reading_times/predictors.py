"""The predictors of reading times and which rows are fitted: pure logic on the word table (no model).

For word w_t of a text (:func:`word_predictors`):

* ``length``: the characters of the word with its leading and trailing punctuation stripped (Unicode
  categories P*: ``'Admiral`` -> ``Admiral``, ``moors.`` -> ``moors``);
* ``zipf``: the Zipf frequency of that stripped word, lowercased (:class:`Frequency`: wordfreq's
  ``zipf_frequency`` in English by default);
* lags (:func:`design`): the same for w_t-1 ... w_t-k (``length_1``, ``zipf_1``, ...) and, in the full
  model, ``surprisal``, ``surprisal_1``, ...: the word at position t-k of the same text, NaN where there is
  none (before the text's start, or across a gap in the positions: a word left out of the table).

A row is fitted (:func:`included`) when its measure is a number in the range, the word is not among the
first ``max(2, spillover)`` words of its text, it does not start a sentence (the text's first word or the
word after a sentence-final one) and it is not sentence-final (:func:`sentence_final`: without its closing
quotes and brackets it ends in ``.``, ``!`` or ``?``, or it is the text's last word). Texts go to folds
round robin in input order (:func:`folds`).
"""

from __future__ import annotations

import math
import os
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pllscore.errors import InputError

__all__ = [
    "DEFAULT_FREQUENCY",
    "DEFAULT_RANGE",
    "Frequency",
    "design",
    "folds",
    "included",
    "lag_names",
    "sentence_final",
    "sentence_starts",
    "strip_punctuation",
    "word_predictors",
    "word_rules",
    "MAX_FOLDS",
    "check_range",
    "check_spillover",
]

DEFAULT_RANGE = (100.0, 3000.0)
DEFAULT_FREQUENCY = "wordfreq:en"
#: at most this many folds; with as many texts or fewer, each text is its own fold (leave one text out)
MAX_FOLDS = 10
_ENDS = (".", "!", "?")
_CLOSERS = "\"'”’»)]}›"


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def strip_punctuation(word: str) -> str:
    """``word`` without its leading and trailing punctuation (Unicode categories P*)."""
    a, b = 0, len(word)
    while a < b and _is_punct(word[a]):
        a += 1
    while b > a and _is_punct(word[b - 1]):
        b -= 1
    return word[a:b]


def sentence_final(word: str) -> bool:
    """Whether ``word`` ends a sentence: without its closing quotes and brackets it ends in ``.``, ``!`` or ``?``."""
    w = word
    while w and (w[-1] in _CLOSERS or unicodedata.category(w[-1]) in ("Pe", "Pf")):
        w = w[:-1]
    return w.endswith(_ENDS)


@dataclass
class Frequency:
    """A word's Zipf frequency (log10 of its frequency per billion words): ``wordfreq[:LANG]`` (its
    ``zipf_frequency``, 0 for an unknown word), or a CSV/TSV file with the columns ``word`` and ``count``
    (Zipf of ``count`` over the file's total; 0 for a word not in it). Words are looked up lowercased."""

    source: str = DEFAULT_FREQUENCY
    _table: dict[str, float] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        src = str(self.source)
        if src == "wordfreq" or src.startswith("wordfreq:"):
            self.lang = src.partition(":")[2] or "en"
            try:
                import wordfreq
            except ImportError:  # pragma: no cover - a core dependency
                raise InputError("word frequencies need wordfreq: pip install wordfreq") from None
            if self.lang not in wordfreq.available_languages():
                raise InputError(f"wordfreq has no language {self.lang!r}; give --frequency wordfreq:LANG, e.g. en")
            return
        self._table = _count_table(src)

    def zipf(self, words: Sequence[str]) -> list[float]:
        """The Zipf frequency of each (already stripped) word, lowercased."""
        out: dict[str, float] = {}
        for w in dict.fromkeys(x.lower() for x in words):
            if self._table is not None:
                out[w] = self._table.get(w, 0.0)
            else:
                import wordfreq

                out[w] = float(wordfreq.zipf_frequency(w, self.lang)) if w else 0.0
        return [out[x.lower()] for x in words]


def _count_table(path: str) -> dict[str, float]:
    import pandas as pd

    if not Path(path).is_file():
        raise InputError(f"frequency source {path!r} is neither wordfreq[:LANG] nor a file; check the path")
    sep = "\t" if path.endswith((".tsv", ".tab")) else ","
    try:
        # a TSV cell is the string between tabs: a word "scary" keeps its quotes (QUOTE_NONE)
        frame = pd.read_csv(path, sep=sep, dtype={"word": str}, keep_default_na=False, quoting=3 if sep == "\t" else 0)
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read frequency table {os.fspath(path)}: {e}") from None
    if not {"word", "count"} <= set(frame.columns):
        raise InputError(f"frequency table {path!r} needs the columns word and count")
    counts = pd.to_numeric(frame["count"], errors="coerce")
    if counts.isna().any() or (counts < 0).any():
        raise InputError(f"frequency table {path!r} has a count that is not a non-negative number")
    summed = counts.groupby(frame["word"].str.lower()).sum()
    total = float(summed.sum())
    if total <= 0:
        raise InputError(f"frequency table {path!r} counts nothing")
    return {w: (math.log10(c / total * 1e9) if c > 0 else 0.0) for w, c in summed.items()}


def word_predictors(words: Any, frequency: Frequency) -> Any:
    """``words`` (a frame with ``text``, ``position``, ``word``, one row per word, in order) with ``length``
    and ``zipf``."""
    stripped = [strip_punctuation(w) for w in words["word"]]
    return words.assign(length=[len(s) for s in stripped], zipf=frequency.zipf(stripped))


def lag_names(name: str, spillover: int) -> list[str]:
    """``name`` and its lags: ``["surprisal", "surprisal_1", "surprisal_2"]`` for a spillover of 2."""
    return [name] + [f"{name}_{k}" for k in range(1, spillover + 1)]


def design(words: Any, columns: Sequence[str], spillover: int) -> Any:
    """The predictors ``columns`` of ``words`` (one row per word, with ``text`` and ``position``) with their lags
    ``1..spillover``: lag k of a word is the word at position - k of its text, NaN where its text has none
    (before the text's start, or across a gap in the positions)."""
    import pandas as pd

    here = pd.MultiIndex.from_arrays([words["text"].to_numpy(), words["position"].to_numpy()])
    out = {}
    for c in columns:
        values = pd.Series(words[c].to_numpy(dtype=float), index=here)
        for k, name in enumerate(lag_names(c, spillover)):
            if k == 0:
                out[name] = values.to_numpy()
                continue
            back = pd.MultiIndex.from_arrays([words["text"].to_numpy(), words["position"].to_numpy() - k])
            out[name] = values.reindex(back).to_numpy()
    return pd.DataFrame(out, index=words.index)


def sentence_starts(words: Any) -> tuple[Any, Any]:
    """Per word, whether it starts a sentence and whether it ends one (``words``: one row per word, in order)."""
    import numpy as np

    text = words["text"].to_numpy()
    final = np.array([sentence_final(w) for w in words["word"]], dtype=bool)
    first_of_text = np.r_[True, text[1:] != text[:-1]] if len(text) else np.zeros(0, bool)
    last_of_text = np.r_[text[1:] != text[:-1], True] if len(text) else np.zeros(0, bool)
    after_final = np.r_[False, final[:-1]] if len(text) else np.zeros(0, bool)
    return first_of_text | (after_final & ~first_of_text), final | last_of_text


def included(measure: Any, rules: Any, value_range: tuple[float, float] | None) -> Any:
    """Per row, whether it is fitted: its measure is a number in ``value_range`` (any number when None) and its
    word passes the ``rules`` (:func:`word_rules`, per row)."""
    import numpy as np

    values = np.asarray(measure, dtype=float)
    ok = np.isfinite(values)
    if value_range is not None:
        lo, hi = value_range
        with np.errstate(invalid="ignore"):
            ok &= (values >= lo) & (values <= hi)
    return ok & np.asarray(rules, dtype=bool)


def word_rules(words: Any, spillover: int) -> Any:
    """Per word, the rules that do not depend on the measure: not among the first ``max(2, spillover)`` words
    of its text, not sentence-initial, not sentence-final."""
    index = words.groupby("text", sort=False).cumcount().to_numpy()
    start, end = sentence_starts(words)
    return (index >= max(2, spillover)) & ~start & ~end


def folds(texts: Sequence[str]) -> dict[str, int]:
    """Each text's fold: round robin over :data:`MAX_FOLDS` folds in input order, or one text per fold when
    there are that many texts or fewer (leave one text out)."""
    if len(texts) < 2:
        raise InputError(f"cross-validation needs at least two texts; the data has {len(texts)} (check --text-column)")
    return {t: (i if len(texts) <= MAX_FOLDS else i % MAX_FOLDS) for i, t in enumerate(texts)}


def check_range(value_range: Any) -> tuple[float, float] | None:
    """``(lo, hi)`` from a pair or ``"LO,HI"``; None (or ``"none"``) for no range."""
    if value_range is None or (isinstance(value_range, str) and value_range.strip().lower() in ("none", "")):
        return None
    parts = value_range.split(",") if isinstance(value_range, str) else list(value_range)
    try:
        lo, hi = (float(p) for p in parts)
    except (TypeError, ValueError):
        raise InputError(f"range {value_range!r} is not LO,HI (e.g. 100,3000) or none") from None
    if not lo < hi:
        raise InputError(f"range {value_range!r}: LO must be below HI")
    return lo, hi


def check_spillover(spillover: int) -> int:
    """The number of spillover words: 0 or more."""
    if isinstance(spillover, bool) or not isinstance(spillover, int) or spillover < 0:
        raise InputError(f"spillover must be a whole number 0 or more, got {spillover!r}")
    return spillover
