"""The BabyLM sentence tasks under pllscore's own convention: each completion scored given its prefix by a Scorer.

A sentence is its prefix, a separator and its completion (the official split: the completion is the end of
the sentence). pllscore reads it as :meth:`~pllscore.scoring.base.Scorer.score` reads a text with a
context: the prefix (without its trailing whitespace) is the context, the whitespace between them the
separator, the completion (without its leading whitespace) the scored text; a sentence whose completion is
the whole of it has no context. So EWoK scores each target given ``Context1`` (for every backend; the
official ``enc_dec_prefix`` gives the second target ``Context2``), entity tracking each option given the
story, COMPS the property given each prefix, BLiMP and WUG whole sentences. The scorer of each backend:
a masked LM by word-l2r PLL (``mntp``: each token read one position before its mask), a causal LM with
BOS before the text (and the context), an encoder-decoder (``enc_dec_mask``, ``enc_dec_prefix``) by
log P(completion | prefix as the source).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pllscore.errors import InputError
from pllscore.plan.babylm_reads import Item
from pllscore.scoring.causal import CausalScorer
from pllscore.scoring.masked import MaskedScorer
from pllscore.scoring.mntp import MntpScorer
from pllscore.scoring.seq2seq import Seq2SeqScorer

__all__ = ["Text", "backend_scorer", "pll_scores", "pll_texts", "split_sentence"]

#: (context, separator, text) of one sentence
Text = tuple[str, str, str]


def split_sentence(sentence: str, completion: str) -> Text:
    """``sentence`` as (context, separator, text): the completion its end, the whitespace at the join the
    separator."""
    head = sentence[: len(sentence) - len(completion)]
    context = head.rstrip()
    text = completion.lstrip()
    sep = head[len(context) :] + completion[: len(completion) - len(text)]
    return (context, sep if context else "", text if context else sentence.strip() or sentence)


def pll_texts(items: Sequence[Item]) -> list[list[Text]]:
    """Per item, each sentence as (context, separator, text)."""
    return [[split_sentence(s, c) for s, c in zip(item.sentences, item.completions)] for item in items]


def backend_scorer(
    model: Any, tokenizer: Any, backend: str, *, name: str | None = None, mask_by: str = "tokenizer"
) -> Any:
    """pllscore's scorer of ``model`` for a BabyLM backend: causal with BOS, ``mlm`` and ``mntp`` by word-l2r
    (their masks following ``mask_by``), both encoder-decoder backends by the seq2seq scorer."""
    masked = {"metric": "word-l2r", "mask_by": mask_by, "name": name}
    if backend == "causal":
        return CausalScorer(model, tokenizer, bos=True, name=name)
    if backend == "mlm":
        return MaskedScorer(model, tokenizer, **masked)
    if backend == "mntp":
        return MntpScorer(model, tokenizer, **masked)
    if backend in ("enc_dec_mask", "enc_dec_prefix"):
        return Seq2SeqScorer(model, tokenizer, name=name)
    raise InputError(
        f"convention 'pllscore' has no scorer for the {backend} backend in this version; use convention 'babylm'"
    )


def pll_scores(model: Any, tokenizer: Any, backend: str, texts: Sequence[Sequence[Text]]) -> list[np.ndarray]:
    """Per item, its sentences' scores (nats, float64) by pllscore's scorer for ``backend``; each distinct
    (context, separator, text) is scored once."""
    scorer = backend_scorer(model, tokenizer, backend)
    distinct = list(dict.fromkeys(t for item in texts for t in item))
    totals: dict[Text, float] = {}
    for sep in dict.fromkeys(t[1] for t in distinct):
        group = [t for t in distinct if t[1] == sep]
        results = scorer.score([t[2] for t in group], context=[t[0] for t in group], sep=sep, progress=False)
        totals.update({t: float(r.total) for t, r in zip(group, results)})
    return [np.array([totals[t] for t in item], dtype=np.float64) for item in texts]
