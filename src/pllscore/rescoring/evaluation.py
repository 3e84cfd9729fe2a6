"""Corpus WER (jiwer) and BLEU (sacrebleu) of a choice of hypotheses, and the oracle WER.

Both packages are optional (the ``rescore`` extra) and imported only when a score is computed,
so that ``import pllscore.rescore`` stays light and a missing one is a one-line error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pllscore.errors import InputError, PllscoreError
from pllscore.rescoring.choice import utterance_codes
from pllscore.rescoring.nbest import NbestColumns

__all__ = ["EVAL_METRICS", "check_eval_metric", "corpus_metric", "evaluate", "oracle_wer", "require"]

EVAL_METRICS = ("wer", "bleu")


def require(module: str, what: str) -> Any:
    """The optional package ``module`` (jiwer, sacrebleu), or a one-line error naming the ``rescore`` extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise PllscoreError(
            f"{what} needs the {module} package, which is not installed; pip install 'pllscore[rescore]'"
        ) from None


def corpus_metric(metric: str, refs: Sequence[str], hyps: Sequence[str]) -> float:
    """Corpus WER (a fraction: all word errors over all reference words) or corpus BLEU (0-100)."""
    if metric == "wer":
        jiwer = require("jiwer", "WER")
        return float(jiwer.wer(list(refs), list(hyps)))
    if metric == "bleu":
        sacrebleu = require("sacrebleu", "BLEU")
        return float(sacrebleu.corpus_bleu(list(hyps), [list(refs)]).score)
    raise InputError(f"unknown evaluation metric {metric!r}; choose wer or bleu")


def check_eval_metric(metric: str) -> str:
    """``metric`` lower-cased, when it is one of :data:`EVAL_METRICS`; else an :class:`~pllscore.InputError`."""
    m = metric.lower() if isinstance(metric, str) else metric
    if m not in EVAL_METRICS:
        raise InputError(f"unknown evaluation metric {metric!r}; choose wer or bleu")
    return str(m)


def evaluate(frame: Any, *, chosen: str = "chosen", metric: str = "wer", **columns: str | None) -> float:
    """The corpus WER (fraction) or BLEU (0-100) of the hypotheses marked ``chosen``, one per utterance.

    ``columns``: ``utt_column`` (default ``utt_id``), ``text_column`` (``hyp``), ``ref_column`` (``ref``).
    """
    cols = NbestColumns.of(columns, "evaluate", ref="ref")
    metric = check_eval_metric(metric)
    picked = frame[frame[chosen].to_numpy(bool)]
    n_utt = frame[cols.utt].nunique()
    if len(picked) != n_utt or picked[cols.utt].nunique() != n_utt:
        raise InputError(f"column {chosen!r} must mark exactly one hypothesis per utterance")
    return corpus_metric(metric, picked[cols.ref].tolist(), picked[cols.text].tolist())


def oracle_wer(frame: Any, **columns: str | None) -> float:
    """The lowest corpus WER any choice of one hypothesis per utterance reaches (its word errors, summed).

    ``columns``: as for :func:`evaluate`.
    """
    cols = NbestColumns.of(columns, "oracle_wer", ref="ref")
    jiwer = require("jiwer", "WER")
    errors, words = [], []
    for ref, hyp in zip(frame[cols.ref].tolist(), frame[cols.text].tolist()):
        w = jiwer.process_words(ref, hyp)
        errors.append(w.substitutions + w.deletions + w.insertions)
        words.append(w.substitutions + w.deletions + w.hits)
    codes = utterance_codes(frame, cols.utt)
    best = np.full(codes.max() + 1, np.inf)
    np.minimum.at(best, codes, np.array(errors, dtype=np.float64))
    first = np.unique(codes, return_index=True)[1]  # one reference per utterance
    return float(best.sum() / np.array(words, dtype=np.float64)[first].sum())
