"""The one place matplotlib is imported: :func:`pyplot`, called only when a figure is drawn."""

from __future__ import annotations

from typing import Any

from pllscore.errors import InputError

__all__ = ["pyplot"]


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend (figures go to files, never to a window).

    Raises :class:`~pllscore.InputError` when matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("figures need matplotlib; reinstall it: pip install matplotlib") from None
    return plt
