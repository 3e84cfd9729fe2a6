"""Public home of the HTML report: see :mod:`pllscore.analysis.report`."""

from pllscore.analysis.report import *  # noqa: F401,F403
from pllscore.analysis.report import __all__  # noqa: F401
