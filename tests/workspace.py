"""A fresh folder to run documentation examples in, laid out as a reader's checkout.

The examples run "from the root of a checkout, with ../shared beside it" and write their outputs
under relative names. :func:`example_folder` makes ``BASE/checkout`` with a link to every entry of
the repository (``examples/``, ``tests/``, ``.venv``, ...) and ``BASE/shared`` linked to the shared
assets, so the examples' inputs resolve as in a checkout while what they write lands in the fresh
folder: two pages, or two test runs, never overwrite each other's files, nor a user's.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

__all__ = ["ROOT", "example_folder"]


def example_folder(base: Path) -> Path:
    """``base/checkout``: links to the repository's entries, with ``base/shared`` as its ``../shared``."""
    if SHARED.exists():
        (base / "shared").symlink_to(SHARED, target_is_directory=True)
    work = base / "checkout"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name != ".git":
            (work / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    return work
