"""Each word's surprisal (bits) from a scorer: the numbers of ``pllscore score --words whitespace --mask-by words
--long window --level word --base 2 --surprisal`` for each text, its words joined by single spaces.

A text is scored as one text through :meth:`pllscore.Scorer.score` (``words="whitespace"``,
``long="window"``): a causal LM after BOS, a masked LM under its metric (word-l2r by default) with each
displayed word masked whole (``mask_by="words"``: ``don't`` is not read with its own pieces visible;
``mask_by="tokenizer"`` masks the tokenizer's words, as Kauf & Ivanova define word-l2r), an
encoder-decoder LM given the empty source and without windows, which encoder-decoder LMs do not take
(``pllscore score`` without ``--long window``). ``word_prob="bow"`` applies the BOW correction. Nothing
is scored here: the scorer's word results are read in the same unit the score command writes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pllscore.errors import InputError
from pllscore.metrics import PLL_KINDS

__all__ = ["word_surprisals"]


def word_surprisals(
    scorer: Any,
    texts: Sequence[str],
    words: Sequence[Sequence[str]],
    *,
    metric: str | None = None,
    bow: bool = False,
    progress: bool | None = None,
    label: str | None = None,
    mask_by: str = "words",
) -> list[Any]:
    """Per text, the surprisal in bits of each of its ``words`` (the text is the words joined by single spaces).

    Raises:
        InputError: a word no token of the model starts in (a word the tokenizer cannot place), or a text
            whose words the scorer splits otherwise.
    """
    joined = [" ".join(ws) for ws in words]
    options: dict[str, Any] = {"words": "whitespace", "progress": progress}
    if scorer.kind != "seq2seq":  # an encoder-decoder LM reads its whole text (no windows; too long: an error)
        options["long"] = "window"
    if scorer.kind in PLL_KINDS:
        options["mask_by"] = mask_by
        if metric is not None:
            options["metric"] = metric
    elif metric is not None and metric not in ("causal", scorer.kind):
        raise InputError(f"{scorer.name!r} is a {scorer.kind} LM, scored by its log-likelihood; drop --metric")
    if bow:
        options["word_prob"] = "bow"
    results = scorer.score(joined, **options).view(base=2, surprisal=True)
    if len(results) != len(joined):
        raise InputError(f"give one metric per run (the scores of {scorer.name!r} have {len(results.metrics)})")
    name = label or scorer.name
    out = []
    for text, ws, res in zip(texts, words, results):
        scores = res.words
        if len(scores) != len(ws):  # pragma: no cover - words are checked for whitespace when read
            raise InputError(f"text {text!r}: {len(ws)} words but the scorer found {len(scores)}")
        values = np.array([w.score for w in scores], dtype=float)
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            i = int(bad[0])
            raise InputError(
                f"word {ws[i]!r} (word {i + 1} of text {text!r}) has no token of its own under {name}: the tokenizer "
                "cannot place it; merge it with its neighbour or drop it from the table"
            )
        out.append(values)
    return out
