"""The options of ``pllscore babylm`` (:class:`BabylmSettings`): backend, tasks, checkpoints, convention, temperatures.

The model's loading options are :class:`~pllscore.settings.ModelSettings`' and the run's (``--resume``,
``--force``) :class:`~pllscore.settings.RunSettings`'; this group holds what only the BabyLM evaluation has.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from pllscore.errors import InputError
from pllscore.settings.fields import Settings, positive, setting, tuple_or_none

__all__ = ["BABYLM_BACKENDS", "BABYLM_CONVENTIONS", "BabylmSettings"]

#: the official pipeline's backends, under its names
BABYLM_BACKENDS = ("causal", "mlm", "mntp", "enc_dec_mask", "enc_dec_prefix")
#: ``babylm``: the official numbers; ``pllscore``: pllscore's exact metrics; ``both``: the two side by side
BABYLM_CONVENTIONS = ("babylm", "pllscore", "both")


def _backend(value: Any) -> Any:
    if value not in BABYLM_BACKENDS:
        given = "no --backend given" if value is None else f"unknown backend {value!r}"
        raise InputError(f"{given}; choose {', '.join(BABYLM_BACKENDS)} (the official pipeline's backends)")
    return value


def _convention(value: Any) -> Any:
    if value not in BABYLM_CONVENTIONS:
        raise InputError(
            f"unknown convention {value!r}; use babylm (the official numbers), pllscore (pllscore's exact metrics) "
            "or both"
        )
    return value


def _temperature(name: str, optional: bool = False) -> Any:
    def check(value: Any) -> Any:
        if value is None and optional:
            return None
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be a positive number, got {value!r}") from None
        if not (math.isfinite(number) and number > 0):
            raise InputError(f"{name} must be a positive number, got {value!r}")
        return number

    return check


def _selection(flag: str, help: str) -> Any:
    """A repeatable flag choosing what runs (none: everything there is); the record names what ran instead."""
    return setting(None, help, flags=(flag,), check=tuple_or_none, repeatable=True, record=False)


@dataclass(frozen=True)
class BabylmSettings(Settings):
    """What ``pllscore babylm`` runs: the backend, which tasks and checkpoints, which convention, at which
    temperatures (``min_temperature`` alone by default; up to ``max_temperature`` in steps of
    ``temperature_interval``, as the official pipeline's ``--min_temperature``/``--max_temperature``/
    ``--temperature_interval``)."""

    group: ClassVar[str] = "babylm"

    backend: str | None = setting(
        None,
        "causal, mlm, mntp, enc_dec_mask or enc_dec_prefix: how the model is read, as the official pipeline names it.",
        flags=("--backend", "-b"),
        check=_backend,
    )
    tasks: tuple[str, ...] | None = _selection(
        "--tasks",
        "Tasks to run (blimp, supplement, ewok, entity_tracking, wug_adj, wug_past, comps, reading, or a folder's "
        "name); repeatable or comma-separated (default: every task the data folder holds).",
    )
    revisions: tuple[str, ...] | None = _selection(
        "--revision",
        "A checkpoint: a Hub branch, tag or commit, or a sub-folder of a local model folder; repeatable "
        "(default: main, or every sub-folder of a folder of checkpoints).",
    )
    revisions_file: str | None = setting(
        None,
        "A file of checkpoints, one a line (after those of --revision).",
        flags=("--revisions-file",),
        record=False,
    )
    convention: str = setting(
        "babylm",
        "babylm (the official numbers, written under zero_shot/), pllscore (pllscore's exact metrics, under "
        "pllscore/) or both (side by side in the summary).",
        flags=("--convention",),
        check=_convention,
    )
    min_temperature: float = setting(
        1.0, "The (lowest) temperature the logits are divided by.", flags=("--min-temperature",),
        check=_temperature("min_temperature"),
    )  # fmt: skip
    max_temperature: float | None = setting(
        None,
        "Also every temperature up to this one; each task reports the best (default: --min-temperature only).",
        flags=("--max-temperature",),
        check=_temperature("max_temperature", optional=True),
    )
    temperature_interval: float = setting(
        0.05, "The step between temperatures.", flags=("--temperature-interval",),
        check=_temperature("temperature_interval"),
    )  # fmt: skip
    batch_size: int | None = setting(
        None, "Items per batch (default: the task's own).", flags=("--batch-size",), check=positive("batch_size"),
        record=False,
    )  # fmt: skip

    trust_remote_code: bool = setting(
        False,
        "Run the model's own code (GPT-BERT and other custom architectures), as the official pipeline always does.",
        flags=("--trust-remote-code",),
        record=False,
    )

    def _check_together(self) -> None:
        if self.max_temperature is not None and self.max_temperature < self.min_temperature:
            raise InputError(
                f"--max-temperature {self.max_temperature:g} is below --min-temperature {self.min_temperature:g}"
            )

    def conventions(self) -> tuple[str, ...]:
        """The conventions to run, the official first."""
        return ("babylm", "pllscore") if self.convention == "both" else (self.convention,)
