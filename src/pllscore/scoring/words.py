"""The user's words for file scoring: a word mode, or a column of pre-segmented words (one JSON list per row).

Used by :func:`pllscore.jobs.local.score_file` (``pllscore score --words``, ``--words-column``,
``--word-sep``, ``--mask-by``): the words are read and checked against their texts before any
scoring, and errors name the input row.
"""

from __future__ import annotations

import json
from typing import Any

from pllscore.errors import InputError
from pllscore.plan.words import check_words, explicit_spans

__all__ = ["WORDS_KEYS", "table_words"]

#: the run-meta keys of the words settings; ``--resume`` refuses a change in any of them
WORDS_KEYS = ("words", "words_column", "word_sep", "mask_by")


def table_words(table: Any, words: str, column: str | None, sep: str) -> str | list[list[str]]:
    """The word mode, or per kept row of ``table`` (an :class:`~pllscore.io.readers.InputTable`) its words.

    A cell of ``column`` is a JSON list of strings (a list as such in JSONL or Parquet); a broken or
    wrong cell, or words that joined by ``sep`` are not the row's text, is a one-line error naming the row.
    """
    if not isinstance(words, str):
        raise InputError("words must be 'tokenizer' or 'whitespace' here; give pre-segmented words in a column")
    check_words(words, 0)
    if column is None:
        return words
    if words != "tokenizer":
        raise InputError(f"give either --words {words} or --words-column {column}, not both")
    if not isinstance(sep, str):
        raise InputError(f"word_sep must be a string, got {sep!r:.40}")
    if column not in table.frame.columns:
        cols = ", ".join(map(str, table.frame.columns))
        raise InputError(f"words column {column!r} not in {table.source}; its columns are: {cols}")
    out = []
    texts = table.texts
    for i, cell in enumerate(table.frame[column].tolist()):
        where = table.where(i)
        if isinstance(cell, str):
            try:
                cell = json.loads(cell)
            except json.JSONDecodeError as e:
                raise InputError(
                    f"words column {column!r} at {where} is not valid JSON ({e.msg} at character {e.pos}); "
                    'write a JSON list of strings such as ["The", "dog."]'
                ) from None
        elif hasattr(cell, "tolist"):  # a list column of Parquet comes back as an array
            cell = cell.tolist()
        if not isinstance(cell, list) or not all(isinstance(w, str) for w in cell):
            raise InputError(
                f"words column {column!r} at {where} is not a list of strings ({cell!r:.40}); "
                'write a JSON list of strings such as ["The", "dog."]'
            )
        try:
            check_words([cell], 1)
            explicit_spans(texts[i], cell, sep)
        except InputError as e:
            raise InputError(f"{where}: {str(e).replace('of text 0', f'in column {column!r}')}") from None
        out.append(cell)
    return out
