"""The parts of the scorers in :mod:`pllscore.scoring.scorers`.

:mod:`~pllscore.scoring.encoding`: texts -> token ids and alignments, and the checks on texts.
:mod:`~pllscore.scoring.stitching`: encoded texts -> what the engines run (windows for long
texts), and the engines' outputs -> per-token scores.
:mod:`~pllscore.scoring.base`: :class:`~pllscore.scoring.base.Scorer`, what both scorers share.
"""
