"""Public home of the unigram models used by ``slor`` and ``norm-lp``: see :mod:`pllscore.results.unigram`."""

from pllscore.results.unigram import *  # noqa: F401,F403
from pllscore.results.unigram import __all__  # noqa: F401
