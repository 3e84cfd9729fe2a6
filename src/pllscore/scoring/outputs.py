"""Optional per-token outputs (``outputs=("entropy", "rank")``) and what a scorer must compute for them.

* ``entropy``: the entropy, in nats, of the model's distribution over the vocabulary at the
  position that scores the token: for a causal LM the distribution given the tokens before it,
  for a masked LM the distribution at the masked position under each metric's masking.
  A view in bits divides it by ln 2; ``surprisal=True`` leaves it positive (it is an expected
  surprisal).
* ``rank``: 1 + the number of vocabulary items whose logit is strictly larger than the token's
  in that same distribution (1: the model's top choice). Tied items share the best rank; in the
  sliced readout an item within float rounding of the token's logit may count either way.

Both come from the same sliced readout as the log-probability, never holding a text's full
logits; a token that is not scored has NaN for both.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from pllscore.engine.readout import OUTPUTS, Wants
from pllscore.errors import InputError
from pllscore.metrics import PLL_KINDS
from pllscore.scoring.bow import check_word_prob

__all__ = ["OUTPUTS", "check_outputs", "wants_for"]


def check_outputs(outputs: str | Sequence[str] | None, word_prob: str | None, kind: str) -> tuple[str, ...]:
    """The per-token arrays a scorer must fill: the outputs asked, and ``word_correction`` for ``word_prob="bow"``."""
    asked = [outputs] if isinstance(outputs, str) else list(outputs or ())
    for name in asked:
        if name not in OUTPUTS:
            raise InputError(f"unknown output {name!r}; choose from {', '.join(OUTPUTS)}")
    chosen = tuple(dict.fromkeys(asked))
    if check_word_prob(word_prob) == "bow":
        if kind != "causal":
            scores = "a masked LM's PLL" if kind in PLL_KINDS else f"a {kind} LM's score"
            raise InputError(
                f"word_prob='bow' corrects a causal LM's word probabilities; {scores} has no such "
                "correction: leave word_prob out"
            )
        chosen += ("word_correction",)
    return chosen


def wants_for(asked: Sequence[str], end_mask: np.ndarray | None = None) -> Wants:
    """The readout's :class:`~pllscore.engine.readout.Wants` for what :func:`check_outputs` returned."""
    token_set = None if end_mask is None else torch.from_numpy(np.ascontiguousarray(end_mask))
    return Wants(entropy="entropy" in asked, rank="rank" in asked, token_set=token_set)
