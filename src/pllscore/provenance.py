"""What made an output: library versions, the command line, the time, the models."""

from __future__ import annotations

import datetime as _dt
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["command_line", "model_record", "now", "run_record", "versions"]


def versions() -> dict[str, str]:
    """Versions of pllscore, torch, transformers and Python."""
    import torch
    import transformers

    from pllscore import __version__

    return {
        "pllscore": __version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": sys.version.split()[0],
    }


def command_line() -> str | None:
    """The ``pllscore ...`` command being run, or None when called from Python."""
    return " ".join(["pllscore", *sys.argv[1:]]) if Path(sys.argv[0]).name.startswith("pllscore") else None


def now() -> str:
    """The current UTC time, ISO 8601, to the second."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def model_record(scorer: Any) -> dict[str, Any]:
    """Name, resolved revision (when known) and kind of a scorer's model."""
    return {"name": scorer.name, "revision": scorer.revision, "kind": scorer.kind}


def run_record(scorer: Any, metrics: Sequence[str]) -> dict[str, Any]:
    """Model, revision, metrics, command and library versions of a run."""
    return {
        "model": scorer.name,
        "revision": scorer.revision,
        "kind": scorer.kind,
        "metrics": list(metrics),
        "dtype": str(getattr(scorer, "dtype", next(scorer.model.parameters()).dtype)).removeprefix("torch."),
        "device": str(scorer.device),
        "command": command_line(),
        **versions(),
    }
