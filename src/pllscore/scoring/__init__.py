"""Scoring: texts -> encode once -> the kind's plan and engine -> :class:`~pllscore.results.scores.Results`.

:mod:`~pllscore.scoring.base`: :class:`Scorer`, the one scoring path (:meth:`Scorer.encode`,
:meth:`Scorer.check`, :meth:`Scorer.score`) and the hooks a model kind fills.
:mod:`~pllscore.scoring.masked`: :class:`MaskedScorer` (pseudo-log-likelihoods).
:mod:`~pllscore.scoring.mntp`: :class:`MntpScorer` (a masked LM read as masked next-token prediction trained it).
:mod:`~pllscore.scoring.causal`: :class:`CausalScorer` (log-likelihoods).
:mod:`~pllscore.scoring.seq2seq`: :class:`Seq2SeqScorer` (encoder-decoder: log P(text | source)).
:mod:`~pllscore.scoring.api`: :func:`load`, :func:`as_scorer`, :func:`score`, :func:`predict`.
:mod:`~pllscore.scoring.predict`, :mod:`~pllscore.scoring.slot_sites`: :meth:`Scorer.predict`, what a model
expects in a slot.
:mod:`~pllscore.scoring.encoding`: texts -> token ids and alignments (:class:`Encodings`), the checks on texts.
:mod:`~pllscore.scoring.stitching`: encoded texts -> what the engines run (windows for long texts), and
the engines' outputs -> per-token scores.
:mod:`~pllscore.scoring.words`, :mod:`~pllscore.scoring.outputs`, :mod:`~pllscore.scoring.bow`: user
words, per-token outputs, the word-beginning correction.

Its names load on first use, so that importing a light part (``scoring.words``) does not load torch.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = [
    "CausalScorer",
    "Encodings",
    "MaskedScorer",
    "MntpScorer",
    "Scorer",
    "Seq2SeqScorer",
    "as_scorer",
    "load",
    "predict",
    "score",
]

# the module of each name, imported on first use
_HOMES = {
    "base": ("Scorer",),
    "masked": ("MaskedScorer",),
    "mntp": ("MntpScorer",),
    "causal": ("CausalScorer",),
    "seq2seq": ("Seq2SeqScorer",),
    "encoding": ("Encodings",),
    "api": ("load", "as_scorer", "predict", "score"),
}

if TYPE_CHECKING:
    from pllscore.scoring.api import as_scorer, load, predict, score
    from pllscore.scoring.base import Scorer
    from pllscore.scoring.causal import CausalScorer
    from pllscore.scoring.encoding import Encodings
    from pllscore.scoring.masked import MaskedScorer
    from pllscore.scoring.mntp import MntpScorer
    from pllscore.scoring.seq2seq import Seq2SeqScorer


def __getattr__(name: str) -> Any:
    home = next((module for module, names in _HOMES.items() if name in names), None)
    if home is None:
        raise AttributeError(f"module 'pllscore.scoring' has no attribute {name!r}")
    return getattr(import_module(f"pllscore.scoring.{home}"), name)
