"""The BabyLM reading task: word surprisals against eye-tracking, self-paced reading and ERP measures.

:func:`prepare_reading` reads and checks ``reading/reading_data.csv`` and tokenises once;
:meth:`PreparedReading.run` computes each row's surprisal (and its previous word's) with the model and
fits the official regressions; :meth:`ReadingResult.write` writes the official pipeline's six files.

Two conventions:

- ``"babylm"``: the official pipeline's numbers (evaluation-pipeline-2025, ``reading/run.py``), its
  conventions kept (:mod:`pllscore.plan.babylm_reading`): the word tokenised alone, a sentence's first
  word after the context ``"None"``, masked and MNTP models read at the 3-mask ending, words of several
  tokens chained through their decoded tokens. Without one forward pass per read: each distinct model
  input runs once, in batches, and a causal LM reads every context inside the longest input that extends
  it (:mod:`pllscore.engine.babylm_reading`).
- ``"pllscore"``: each word's surprisal in its sentence with its space, as ``pllscore reading-times``
  gives it (:mod:`.reading_pllscore`): BOW-corrected for a causal LM, word-l2r PLL for masked and MNTP
  models; fed into the same regressions and files.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pllscore.engine.babylm_reading import read_probabilities
from pllscore.engine.padding import batching_for
from pllscore.errors import InputError, ModelError
from pllscore.eval.babylm.reading_pllscore import SentencePlan, pllscore_scorer, pllscore_surprisals, sentence_plan
from pllscore.eval.babylm.reading_stats import Fits, fit_all, read_reading_data, write_files
from pllscore.plan.babylm_reading import ReadPlan, plan_reads, reading_backend
from pllscore.scoring.seq2seq import SEQ2SEQ_PADDED

__all__ = ["CONVENTIONS", "PreparedReading", "ReadingResult", "prepare_reading"]

#: the conventions: the official pipeline's numbers, and pllscore's
CONVENTIONS = ("babylm", "pllscore")

Progress = Callable[[int], None]


def prepare_reading(
    csv_path: str | os.PathLike[str], tokenizer: Any, backend: str, *, convention: str = "babylm"
) -> PreparedReading:
    """Read, check and tokenise ``csv_path`` (``reading_data.csv``) for ``backend`` under ``convention``.

    Raises:
        InputError: a bad table (file, line and column named), an unknown backend or convention, a word
            the tokenizer gives no tokens.
        ModelError: a tokenizer without what the backend needs (a mask token for ``mlm``/``mntp``).
    """
    if convention not in CONVENTIONS:
        raise InputError(f"unknown convention {convention!r}; choose babylm (the official numbers) or pllscore")
    reading_backend(backend)  # an unknown backend is refused before the data is read
    if convention == "pllscore":
        frame = read_reading_data(csv_path, fill=False)
        contexts = [c if isinstance(c, str) else None for c in frame["item"]]
        plan: ReadPlan | SentencePlan = sentence_plan(
            contexts, list(frame["word"]), list(frame["prev_item"]), list(frame["prev_word"])
        )
        frame["item"] = frame["item"].fillna("None")
        return PreparedReading(frame, tokenizer, backend, convention, plan, [], [])
    frame = read_reading_data(csv_path)
    pairs = [(c, w) for c, w in zip(frame["item"], frame["word"])]
    prev = [(c, w) if isinstance(c, str) else None for c, w in zip(frame["prev_item"], frame["prev_word"])]
    distinct = list(dict.fromkeys([*pairs, *(p for p in prev if p is not None)]))
    index = {p: i for i, p in enumerate(distinct)}
    plan = plan_reads(distinct, tokenizer, backend)
    rows = [index[p] for p in pairs]
    prev_rows = [None if p is None else index[p] for p in prev]
    return PreparedReading(frame, tokenizer, backend, convention, plan, rows, prev_rows)


@dataclass(frozen=True)
class PreparedReading:
    """The reading data, checked and tokenised for one backend and convention; :meth:`run` it on a model."""

    frame: pd.DataFrame
    tokenizer: Any
    backend: str
    convention: str
    plan: ReadPlan | SentencePlan
    #: per data row the index of its (context, word) read in ``plan``, and of its previous word's read
    rows: list[int]
    prev_rows: list[int | None]

    @property
    def n_items(self) -> int:
        """Units of work :meth:`run` reports to ``progress``: model rows (babylm) or sentences (pllscore)."""
        return self.plan.n_inputs if isinstance(self.plan, ReadPlan) else len(self.plan.texts)

    @property
    def official_passes(self) -> int:
        """Forward passes the official pipeline makes for the same numbers (one per token read, a row's previous
        word read again), for comparison with :attr:`n_items` (babylm's convention; 0 for pllscore's)."""
        if not isinstance(self.plan, ReadPlan):
            return 0
        chains = [len(c) for c in self.plan.pairs]
        return sum(chains[i] for i in self.rows) + sum(chains[i] for i in self.prev_rows if i is not None)

    def run(self, model: Any, *, batch_size: int | None = None, progress: Progress | None = None) -> ReadingResult:
        """Each row's surprisal and its previous word's with ``model`` (the backend's raw transformers model, in
        eval mode on its device), and the regressions.

        ``batch_size``: model rows per batch at most (None: as many as the logits budget allows; babylm's
        convention); ``progress``: called with the units of :attr:`n_items` each finished batch held.
        """
        if isinstance(self.plan, SentencePlan):
            scorer = pllscore_scorer(model, self.tokenizer, self.backend)
            pred, prev = pllscore_surprisals(scorer, self.plan, progress=progress)
        else:
            pred, prev = self._official(model, batch_size, progress)
        frame = self.frame.copy()
        frame["pred"], frame["prev_pred"] = pred, prev
        return ReadingResult(frame, fit_all(frame), self.backend, self.convention)

    def _official(self, model: Any, batch_size: int | None, progress: Progress | None) -> tuple[np.ndarray, np.ndarray]:
        plan = self.plan
        assert isinstance(plan, ReadPlan)
        tok = self.tokenizer
        pad = next((i for i in (tok.pad_token_id, tok.eos_token_id) if i is not None), 0)
        if plan.backend == "enc_dec":
            padding = "pad" if getattr(model.config, "model_type", None) in SEQ2SEQ_PADDED else "single"
        else:
            padding = batching_for(model, tok, pad)
        probs = read_probabilities(model, plan, pad_id=pad, padding=padding, max_rows=batch_size, progress=progress)
        surprisal = [self._surprisal(plan, probs, i) for i in range(len(plan.pairs))]
        pred = np.array([surprisal[i] for i in self.rows], dtype=float)
        prev = np.array([np.nan if i is None else surprisal[i] for i in self.prev_rows], dtype=float)
        return pred, prev

    def _surprisal(self, plan: ReadPlan, probs: np.ndarray, pair: int) -> float:
        """-log of the product of a pair's chained token probabilities (the official float64 product)."""
        p = float(np.prod([float(probs[k]) for k in plan.pairs[pair]]))
        if not p > 0:
            raise ModelError(
                f"the model gives probability {p} to a token of a word in the reading data (float32 softmax), so its "
                "surprisal is not finite; the official pipeline fails on it too"
            )
        return -math.log(p)


class ReadingResult:
    """The surprisals (``frame``: the data with ``pred`` and ``prev_pred``, nats) and the regressions (``fits``)."""

    def __init__(self, frame: pd.DataFrame, fits: Fits, backend: str, convention: str) -> None:
        self.frame = frame
        self.fits = fits
        self.backend = backend
        self.convention = convention

    def write(self, out_dir: str | os.PathLike[str]) -> None:
        """The official files into ``out_dir`` (``.../zero_shot/<backend>/reading/``): ``prediction.jsonl``,
        ``predictions.json``, ``correlations.txt``, ``predictive_power.jsonl``,
        ``predictive_power_spillover.jsonl`` and ``report.txt``."""
        write_files(out_dir, self.frame, self.fits)

    def summary(self) -> list[tuple[str, float]]:
        """The report's two scores, in its units (percent): ``reading/eye_tracking``, ``reading/self_paced_reading``."""
        return [
            ("reading/eye_tracking", float(self.fits.eye_tracking)),
            ("reading/self_paced_reading", float(self.fits.self_paced_reading)),
        ]
