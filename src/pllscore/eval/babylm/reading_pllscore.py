"""The reading task's surprisals under pllscore's convention: each word scored in its sentence, with its space.

The rows of ``reading_data.csv`` come sentence by sentence, each row's context (``item``) being the words
before its word. Consecutive rows whose words extend the row before make one text, the last row's context
and word joined by spaces; each text is scored once by :func:`~pllscore.eval.reading_times.surprisal.word_surprisals`
(what ``pllscore reading-times`` reads): words split at whitespace, each word with its leading space,

- a causal LM after its BOS, the word's probability BOW-corrected (``word_prob="bow"``) where the
  tokenizer marks word beginnings (GPT-2's ``Ġ``, SentencePiece's ``▁``), else the sum of its tokens';
- a masked LM (``mlm``) by the word-l2r PLL, each displayed word masked whole (``mask_by="words"``); an MNTP
  model (``mntp``) the same, read as MNTP (:class:`~pllscore.scoring.mntp.MntpScorer`): both see the whole
  sentence, as ``pllscore reading-times`` does;
- an encoder-decoder LM (``enc_dec_*``) as the decoder's text given the empty source.

A row's surprisal is its word's in its text; a previous word (``prev_item`` and ``prev_word``) is read from
the row's text where that text starts with it, else scored as a text of its own (its last word). Surprisals
are in nats, as the official ``Logprob`` field is, so the regressions compare.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pllscore.errors import InputError
from pllscore.eval.babylm.zero_shot_pll import backend_scorer
from pllscore.eval.reading_times.surprisal import word_surprisals
from pllscore.scoring.bow import beginning_marker

__all__ = ["SentencePlan", "pllscore_scorer", "pllscore_surprisals", "sentence_plan"]


class SentencePlan:
    """The texts to score and, per row and per previous word, (text, word index); None where there is none."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, ...]] = []
        self.rows: list[tuple[int, int]] = []
        self.prev: list[tuple[int, int] | None] = []
        self._alone: dict[tuple[str, ...], int] = {}

    def alone(self, words: tuple[str, ...]) -> tuple[int, int]:
        """A text of its own for ``words`` (once), read at its last word."""
        if words not in self._alone:
            self._alone[words] = len(self.texts)
            self.texts.append(words)
        return self._alone[words], len(words) - 1


def _words(context: str | None, word: str, line: int) -> tuple[str, ...]:
    if len(word.split()) != 1:
        raise InputError(f"line {line}: the word {word!r} holds whitespace; pllscore's convention reads one word a row")
    return (*(context.split() if context else ()), word)


def sentence_plan(
    contexts: Sequence[str | None], words: Sequence[str], prev_contexts: Sequence[Any], prev_words: Sequence[Any]
) -> SentencePlan:
    """The texts of the rows (``contexts``: None where the row has none) and where each row's words are."""
    plan = SentencePlan()
    spans: list[tuple[int, int]] = []  # rows [start, end) of each text
    row_words = [_words(c, w, i + 2) for i, (c, w) in enumerate(zip(contexts, words))]
    for i, ws in enumerate(row_words):
        if i and spans[-1][1] == i and ws[: len(row_words[i - 1])] == row_words[i - 1]:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    owner = []
    for start, end in spans:
        owner.extend([len(plan.texts)] * (end - start))
        plan.texts.append(row_words[end - 1])
    for i, ws in enumerate(row_words):
        plan.rows.append((owner[i], len(ws) - 1))
        if not isinstance(prev_contexts[i], str):
            plan.prev.append(None)
            continue
        pw = _words(prev_contexts[i], prev_words[i], i + 2)
        text = plan.texts[owner[i]]
        plan.prev.append((owner[i], len(pw) - 1) if text[: len(pw)] == pw else plan.alone(pw))
    return plan


def pllscore_scorer(model: Any, tokenizer: Any, backend: str, name: str | None = None) -> Any:
    """The pllscore scorer of ``model`` for a BabyLM backend, a masked LM's masks over whole displayed words."""
    return backend_scorer(model, tokenizer, backend, name=name, mask_by="words")


def pllscore_surprisals(
    scorer: Any, plan: SentencePlan, *, progress: Callable[[int], None] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per row, its word's surprisal and its previous word's (NaN where none), in nats."""
    bow = scorer.kind == "causal" and beginning_marker(scorer.tokenizer) is not None
    texts = [" ".join(ws) for ws in plan.texts]
    # a masked or MNTP scorer reads by its own metric (word-l2r from pllscore_scorer)
    bits = word_surprisals(scorer, texts, plan.texts, bow=bow, progress=False)
    if progress is not None:
        progress(len(texts))
    nats = [b * np.log(2.0) for b in bits]
    pred = np.array([nats[t][k] for t, k in plan.rows], dtype=float)
    prev = np.array([np.nan if p is None else nats[p[0]][p[1]] for p in plan.prev], dtype=float)
    return pred, prev
