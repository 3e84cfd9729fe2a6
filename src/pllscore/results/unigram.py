"""Unigram log-probabilities for the frequency-corrected norms ``slor`` and ``norm-lp``.

A unigram model gives a text's log-probability (nats) as if each unit were drawn on its own,
by its corpus frequency. Three sources:

* :class:`TokenUnigram` from a table of token counts (:func:`read_counts`, a tsv/csv with
  ``token`` and ``count`` columns) or from a corpus counted with the model's own tokenizer
  (:func:`count_corpus`). Token-level: the units are the model's tokens (its pieces, e.g.
  ``##t`` or ``Ġthe``), exactly the tokens that were scored. Add-alpha smoothing (add-one by
  default): with N the total count and V the number of distinct tokens in the table,
  ``P(t) = (count(t) + alpha) / (N + alpha * (V + 1))``; every token not in the table has count 0
  and shares the one extra type, so an unseen token gets ``alpha / (N + alpha * (V + 1))``.
* :class:`WordfreqUnigram` from wordfreq's word frequencies. **Word-level, not token-level**:
  the text from the first to the last scored token is split into words by
  ``wordfreq.tokenize`` (punctuation dropped, lower-cased), and its log-probability is
  ``sum ln(word_frequency(word, lang))``, with ``floor`` (default 1e-9, below anything
  wordfreq lists) for words it does not know.

:func:`load_unigram` builds one from what the command line gives (``--unigram``,
``--unigram-corpus``).
"""

from __future__ import annotations

import csv
import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pllscore.errors import InputError

__all__ = ["TokenUnigram", "WordfreqUnigram", "count_corpus", "load_unigram", "read_counts"]


class TokenUnigram:
    """Token-level unigram model over the model's pieces, with add-``alpha`` smoothing.

    Args:
        counts: token (piece) -> count.
        alpha: the smoothing constant (1 = add-one); must be > 0 so that no token has probability 0.
        source: what the counts came from (for provenance).
    """

    level = "token"

    def __init__(self, counts: Mapping[str, int], *, alpha: float = 1.0, source: str = "counts") -> None:
        if not alpha > 0:
            raise InputError(f"unigram smoothing alpha must be positive, got {alpha!r}")
        bad = [t for t, c in counts.items() if not (isinstance(c, (int, float, np.integer)) and c >= 0)]
        if bad:
            raise InputError(f"unigram counts must be non-negative numbers; token {bad[0]!r} has {counts[bad[0]]!r}")
        self.counts = dict(counts)
        self.alpha = float(alpha)
        self.source = source
        self.total = float(sum(self.counts.values()))
        self._log_denominator = math.log(self.total + self.alpha * (len(self.counts) + 1))

    def token_logprob(self, piece: str) -> float:
        """ln P(piece), smoothed."""
        return math.log(self.counts.get(piece, 0) + self.alpha) - self._log_denominator

    def logprob(self, score: Any) -> float:
        """ln P_unigram of the scored tokens of a :class:`~pllscore.SentenceScore`; NaN when none was scored."""
        scored = score.scored
        if not scored.any():
            return math.nan
        text = scored & ~score.is_special  # an encoder-decoder's EOS is the model's, not a unigram's
        return float(sum(self.token_logprob(p) for p, s in zip(score.pieces, text) if s))

    def describe(self) -> dict[str, Any]:
        """Provenance: level, source, smoothing, size."""
        return {
            "level": "token",
            "source": self.source,
            "smoothing": f"add-{self.alpha:g}",
            "types": len(self.counts),
            "total": self.total,
        }

    def __repr__(self) -> str:
        return f"TokenUnigram({len(self.counts)} types, total={self.total:g}, add-{self.alpha:g}, {self.source})"


class WordfreqUnigram:
    """Word-level unigram log-probabilities from wordfreq (not the model's tokens).

    A text's log-probability is the sum over its words (``wordfreq.tokenize``, lower-cased,
    punctuation dropped) of ``ln(word_frequency(word, lang))``, with ``floor`` for unknown words.
    Only the characters from the first to the last scored token are read.
    """

    level = "word"

    def __init__(self, lang: str = "en", *, floor: float = 1e-9) -> None:
        if not 0 < floor < 1:
            raise InputError(f"the wordfreq floor must be between 0 and 1, got {floor!r}")
        try:
            import wordfreq  # noqa: F401
        except ImportError:  # pragma: no cover
            raise InputError("--unigram wordfreq needs the wordfreq package: pip install wordfreq") from None
        self.lang, self.floor = lang, float(floor)
        self._cache: dict[str, float] = {}

    def word_logprob(self, word: str) -> float:
        """ln of wordfreq's frequency of ``word`` (floored)."""
        if word not in self._cache:
            from wordfreq import word_frequency

            self._cache[word] = math.log(max(word_frequency(word, self.lang), self.floor))
        return self._cache[word]

    def words(self, score: Any) -> list[str]:
        """The words (wordfreq's tokens) of the scored part of the text."""
        from wordfreq import tokenize

        scored = np.flatnonzero(score.scored)
        if not len(scored):
            return []
        start, stop = score.offsets[scored[0]][0], score.offsets[scored[-1]][1]
        return list(tokenize(score.text[start:stop], self.lang))

    def logprob(self, score: Any) -> float:
        """ln P_unigram of the scored part of the text, word by word; NaN when no token was scored."""
        if not score.scored.any():
            return math.nan
        return float(sum(self.word_logprob(w) for w in self.words(score)))

    def describe(self) -> dict[str, Any]:
        """Provenance: level, source, language, floor, wordfreq version."""
        from importlib.metadata import version

        return {"level": "word", "source": "wordfreq", "lang": self.lang, "floor": self.floor,
                "wordfreq": version("wordfreq")}  # fmt: skip

    def __repr__(self) -> str:
        return f"WordfreqUnigram(lang={self.lang!r}, floor={self.floor:g})"


def read_counts(path: str | os.PathLike[str]) -> dict[str, int]:
    """Token counts from a tsv (``.tsv``/``.txt``: tab-separated) or ``.csv`` file.

    The file has a header with ``token`` and ``count`` columns (other columns are ignored), or
    no header and two columns, token then count. Tokens are read as exact strings (``NA`` is a
    token); a token listed twice has its counts added.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"unigram table {os.fspath(path)!r} not found; give a tsv/csv file of token and count")
    delimiter = "," if p.suffix.lower() == ".csv" else "\t"
    counts: Counter[str] = Counter()
    with open(p, encoding="utf-8", newline="") as f:
        rows = csv.reader(f, delimiter=delimiter, quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL)
        first = next(rows, None)
        if first is None:
            raise InputError(f"unigram table {os.fspath(path)!r} is empty")
        header = [c.strip().lower() for c in first]
        if "token" in header and "count" in header:
            ti, ci, line0 = header.index("token"), header.index("count"), 2
            body: Iterable[list[str]] = rows
        else:
            ti, ci, line0 = 0, 1, 1
            body = [first, *rows]
        for n, row in enumerate(body, start=line0):
            if not row:
                continue
            try:
                value = float(row[ci])
            except (IndexError, ValueError):
                raise InputError(
                    f"line {n} of {os.fspath(path)} has no count for its token; the table needs token and count columns"
                ) from None
            if not value >= 0 or not math.isfinite(value):
                raise InputError(f"line {n} of {os.fspath(path)}: count {row[ci]!r} is not a non-negative number")
            counts[row[ti]] += int(value) if value == int(value) else value  # type: ignore[assignment]
    if not counts:
        raise InputError(f"unigram table {os.fspath(path)!r} has no rows")
    return dict(counts)


def count_corpus(path: str | os.PathLike[str], tokenizer: Any, *, batch: int = 1000) -> dict[str, int]:
    """Count the tokens of a UTF-8 text file (one text per line, empty lines skipped) with ``tokenizer``.

    Tokens are the pieces scoring gives (no special tokens; special-token strings in the text are
    read as text, as scoring reads them).
    """
    from pllscore.engine.loading import encode_text

    p = Path(path)
    if not p.is_file():
        raise InputError(f"unigram corpus {os.fspath(path)!r} not found; give a text file, one text per line")
    counts: Counter[str] = Counter()
    lines: list[str] = []

    def flush() -> None:
        if lines:
            enc = encode_text(tokenizer, lines, add_special_tokens=False)
            for i in range(len(lines)):
                counts.update(enc.tokens(i))
            lines.clear()

    try:
        with open(p, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\r\n")
                if line.strip():
                    lines.append(line)
                if len(lines) >= batch:
                    flush()
    except UnicodeDecodeError as e:
        raise InputError(f"unigram corpus {os.fspath(path)!r} is not UTF-8 ({e.reason} at byte {e.start})") from None
    flush()
    if not counts:
        raise InputError(f"unigram corpus {os.fspath(path)!r} has no text")
    return dict(counts)


def load_unigram(
    unigram: Any = None, *, corpus: str | os.PathLike[str] | None = None, tokenizer: Any = None, alpha: float = 1.0
) -> TokenUnigram | WordfreqUnigram | None:
    """The unigram model the options name, or None.

    Args:
        unigram: ``"wordfreq"`` (English) or ``"wordfreq:LANG"``; a path to a tsv/csv table of token
            counts; an already built unigram model (returned as is); or None.
        corpus: a text file to count with ``tokenizer`` (the model's) instead.
        tokenizer: needed with ``corpus``.
        alpha: add-alpha smoothing of token counts.
    """
    if unigram is not None and corpus is not None:
        raise InputError("give either --unigram or --unigram-corpus, not both")
    if corpus is not None:
        if tokenizer is None:
            raise InputError("counting a unigram corpus needs the model's tokenizer")
        from pllscore.io.provenance import content_fingerprint

        source = f"corpus {os.fspath(corpus)} (sha256:{content_fingerprint([corpus])[:12]})"
        return TokenUnigram(count_corpus(corpus, tokenizer), alpha=alpha, source=source)
    if unigram is None or hasattr(unigram, "logprob"):
        return unigram
    if isinstance(unigram, str) and (unigram == "wordfreq" or unigram.startswith("wordfreq:")):
        return WordfreqUnigram(unigram.partition(":")[2] or "en")
    if isinstance(unigram, Mapping):
        return TokenUnigram(unigram, alpha=alpha)
    from pllscore.io.provenance import content_fingerprint

    path = os.fspath(unigram)
    counts = read_counts(path)
    return TokenUnigram(counts, alpha=alpha, source=f"table {path} (sha256:{content_fingerprint([path])[:12]})")
