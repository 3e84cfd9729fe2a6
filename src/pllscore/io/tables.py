"""Write a result table as CSV, Markdown and LaTeX side by side."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pllscore.errors import InputError

__all__ = ["write_tables"]


def write_tables(frame: Any, stem: str | os.PathLike[str], *, digits: int = 1) -> list[Path]:
    """Write ``stem.csv``, ``stem.md`` and ``stem.tex``; returns their paths."""
    stem = Path(stem)
    paths = [stem.with_suffix(s) for s in (".csv", ".md", ".tex")]
    try:
        stem.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(paths[0], index=False)
        shown = frame.astype(object).where(frame.notna(), None)  # tabulate leaves None cells empty, not "nan"
        paths[1].write_text(shown.to_markdown(index=False, floatfmt=f".{digits}f", missingval="") + "\n")
        latex = frame.to_latex(index=False, float_format=f"%.{digits}f", na_rep="--", escape=True)
        paths[2].write_text(latex)
    except OSError as e:
        raise InputError(f"cannot write {os.fspath(stem)}.*: {e.strerror}; choose another output folder") from None
    return paths
