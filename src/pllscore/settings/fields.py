"""The machinery of :mod:`pllscore.settings`: the :func:`setting` and :func:`choice` fields, the
:class:`Settings` base (checks, :meth:`Settings.record`), :func:`gather`, and the shared value checks.

This module imports only :mod:`pllscore.errors` and :mod:`pllscore.metrics`.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from pllscore.errors import InputError

__all__ = [
    "CONVENTIONS", "DEVICE_MAPS", "DTYPES", "LEVELS", "LONG_MODES", "MASK_BY", "NORMS", "OUTPUTS", "OUTPUT_FORMATS",
    "WORD_MODES", "WORD_PROBS", "Settings", "check_base", "check_choice", "check_device_map", "check_dtype",
    "check_format", "check_max_memory", "check_norms", "choice", "gather", "optional_str", "parse_max_memory",
    "positive", "setting", "tuple_or_none",
]  # fmt: skip

LEVELS = ("sentence", "word", "token")
LONG_MODES = ("error", "window")
CONVENTIONS = ("paper", "lm-eval")
WORD_MODES = ("tokenizer", "whitespace")
MASK_BY = ("tokenizer", "words")
OUTPUTS = ("entropy", "rank")
WORD_PROBS = ("sum", "bow")

# per choice: the values, and the error for another value
_CHOICES = {
    "level": (LEVELS, "unknown level {value!r}; choose sentence, word or token"),
    "long": (LONG_MODES, "unknown long-input mode {value!r}; use 'error' (default) or 'window'"),
    "convention": (CONVENTIONS, "unknown convention {value!r}; use 'paper' (default: the text as given) or 'lm-eval' "
                   "(lm-evaluation-harness: the text after a space, as the continuation of an empty context)"),
    "mask_by": (MASK_BY, "unknown mask_by {value!r}; use 'tokenizer' (default, the tokenizer's words) or 'words'"),
    "words": (WORD_MODES, "unknown words {value!r}; use 'tokenizer' (default), 'whitespace', or one list of "
              "words per text"),
    "word_prob": (WORD_PROBS, "unknown word_prob {value!r}; use 'sum' (default) or 'bow'"),
    "output": (OUTPUTS, "unknown output {value!r}; choose from entropy, rank"),
}  # fmt: skip


def check_choice(what: str, value: Any) -> Any:
    """``value`` if it is one of the known choices for ``what`` (level, long, convention, ...), else the error."""
    values, error = _CHOICES[what]
    if value not in values:
        raise InputError(error.format(value=value))
    return value


def _choice(what: str, *, optional: bool = False) -> Callable[[Any], Any]:
    """The check of a choice field; ``optional``: None and non-strings (a word list given in Python) pass."""
    return lambda v: v if optional and not isinstance(v, str) else check_choice(what, v)


def check_base(base: float | str) -> float | str:
    """``"e"``, 2, or another valid log base as a float."""
    if base in ("e", 2, 2.0):
        return base
    try:
        value = float(base)
    except (TypeError, ValueError):
        raise InputError(f"base must be e or a number such as 2, got {base!r}") from None
    if value <= 0 or value == 1:
        raise InputError(f"base must be positive and not 1, got {base!r}")
    return value


def positive(name: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise InputError(f"{name} must be a positive integer, got {value!r}")
        return value

    return check


def tuple_or_none(value: Any) -> tuple[str, ...] | None:
    """A repeatable option: None, one string, or a sequence of strings -> None or a tuple (empty -> None)."""
    if value is None:
        return None
    out = (value,) if isinstance(value, str) else tuple(value)
    return out or None


def setting(
    default: Any = None,
    help: str = "",
    *,
    flags: Sequence[str] = (),
    check: Callable[[Any], Any] | None = None,
    record: bool = True,
    repeatable: bool = False,
    factory: Callable[[], Any] | None = None,
    switches: dict[str, str] | None = None,
) -> Any:
    """A settings field: ``flags`` (empty: Python only) and ``help`` make its command-line option; ``check``
    validates (and may normalise) a value; ``record``: stored in provenance and compared on resume;
    ``switches``: a tuple field set on the command line by one on/off flag per value (``--entropy``)."""
    meta = {"help": help, "flags": tuple(flags), "check": check, "record": record, "repeatable": repeatable}
    meta["switches"] = dict(switches or {})
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def choice(what: str, default: Any, help: str, *, optional: bool = False) -> Any:
    """A field whose value is one of the choices of ``what`` (:func:`check_choice`); its flag is ``--what``
    (``mask_by``: ``--mask-by``). ``optional``: None and non-strings pass (see :func:`_choice`)."""
    return setting(default, help, flags=("--" + what.replace("_", "-"),), check=_choice(what, optional=optional))


S = TypeVar("S", bound="Settings")


@dataclass(frozen=True)
class Settings:
    """Base of the settings groups: checks in ``__post_init__``, :meth:`record`, :meth:`from_options`."""

    group: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            check = f.metadata.get("check")
            if check is not None:
                try:
                    object.__setattr__(self, f.name, check(getattr(self, f.name)))
                except InputError as e:
                    e.setting = f.name  # type: ignore[attr-defined]  # the command line names its flag instead
                    raise
        self._check_together()

    def _check_together(self) -> None:
        """Checks across fields (a subclass overrides)."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The field names, in order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_options(cls: type[S], options: dict[str, Any], *, pop: bool = False) -> S:
        """The settings of the keys of ``options`` that are fields (the rest stay); ``pop`` removes them."""
        take = options.pop if pop else options.get
        return cls(**{n: take(n) for n in cls.names() if n in options})

    @classmethod
    def recorded(cls) -> tuple[str, ...]:
        """The names of the fields that provenance records and resume compares."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("record", True))

    def replace(self: S, **changes: Any) -> S:
        """A copy with ``changes`` (checked again)."""
        return dataclasses.replace(self, **changes)

    def record(self) -> dict[str, Any]:
        """The recorded fields as JSON-ready values (what provenance writes and resume compares)."""
        out = {}
        for f in dataclasses.fields(self):
            if f.metadata.get("record", True):
                value = getattr(self, f.name)
                out[f.name] = list(value) if isinstance(value, tuple) else _plain(value)
        return out

    def as_dict(self) -> dict[str, Any]:
        """Every field by name, as given to the API functions."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def gather(options: dict[str, Any], *groups: Settings, what: str) -> tuple[Any, ...]:
    """``groups`` with the keyword ``options`` that are their fields put in (checked again); an option that is
    no group's field is refused, naming it (``what``: the function that was called)."""
    rest, out = dict(options), []
    for group in groups:
        mine = {n: rest.pop(n) for n in group.names() if n in rest}
        out.append(group.replace(**mine) if mine else group)
    if rest:
        import difflib

        name = next(iter(rest))
        close = difflib.get_close_matches(name, [n for g in groups for n in g.names()], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise InputError(f"{what}() got an unknown option {name!r}{hint}")
    return tuple(out)


def _plain(value: Any) -> Any:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if value is None or isinstance(value, (str, int, float, bool, list, dict)):
        return value
    describe = getattr(value, "describe", None)  # a unigram model given in Python
    return describe() if callable(describe) else repr(value)


# the names below are checked here, before any model or heavy library loads; the code that uses them
# (engine.models, results.norms, io.formats) checks them again and tests/test_cli_messages.py keeps them equal
DTYPES = ("float32", "fp32", "bfloat16", "bf16", "float16", "fp16", "half")
NORMS = ("sum", "mean", "per-char", "slor", "norm-lp")
OUTPUT_FORMATS = ("csv", "tsv", "jsonl", "parquet")


def check_dtype(value: Any) -> Any:
    """A dtype name (float32, bfloat16, float16 or an alias), None, or a non-string (a torch dtype, checked at load)."""
    if isinstance(value, str) and value.lower().removeprefix("torch.") not in DTYPES:
        raise InputError(f"unsupported dtype {value!r}; use float32, bfloat16 or float16")
    return value


#: the device maps accelerate computes (transformers' ``device_map=`` strings); a dict is passed as given
DEVICE_MAPS = ("auto", "balanced", "balanced_low_0", "sequential")
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_UNITS.update({"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40})
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([a-zA-Z]*)\s*$")


def check_device_map(value: Any) -> Any:
    """None, one of :data:`DEVICE_MAPS`, or a dict (module name -> device) given in Python."""
    if value is None or isinstance(value, dict) or value in DEVICE_MAPS:
        return value
    raise InputError(
        f"unknown device_map {value!r}; use 'auto' (spread the model over the GPUs, then the CPU, then disk), "
        "'balanced', 'balanced_low_0' or 'sequential'"
    )


def parse_max_memory(value: Any) -> dict[int | str, int] | None:
    """A per-device memory limit for a device map: ``"cuda:0=20GiB,cuda:1=20GiB,cpu=60GiB"`` (or a dict of the
    same) -> ``{0: bytes, 1: bytes, "cpu": bytes}``, as accelerate takes it. Devices: ``cuda:N`` (or ``N``),
    ``cpu``, ``mps``, ``disk``; sizes: bytes, or a number with B, KB, MB, GB, TB, KiB, MiB, GiB or TiB."""
    if value is None:
        return None
    pairs = value.items() if isinstance(value, dict) else None
    if pairs is None:
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"max_memory must be like 'cuda:0=20GiB,cpu=60GiB', got {value!r}")
        pairs = []
        for part in value.split(","):
            device, eq, size = part.partition("=")
            if not eq:
                raise InputError(f"max_memory: {part.strip()!r} is not DEVICE=SIZE; write e.g. cuda:0=20GiB,cpu=60GiB")
            pairs.append((device, size))
    out: dict[int | str, int] = {}
    for device, size in pairs:
        out[_memory_device(device)] = _size(size)
    return out


def _memory_device(device: Any) -> int | str:
    name = str(device).strip().lower()
    if name in ("cpu", "mps", "disk"):
        return name
    index = name.removeprefix("cuda:").removeprefix("cuda") or "0"
    if not index.isdigit():
        raise InputError(f"max_memory: unknown device {device!r}; use cuda:0, cuda:1, ..., cpu, mps or disk")
    return int(index)


def _size(size: Any) -> int:
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        return size
    m = _SIZE.match(str(size))
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _UNITS or float(m.group(1)) <= 0:
        raise InputError(f"max_memory: {str(size).strip()!r} is not a size; write e.g. 20GiB, 512MiB, 8GB or bytes")
    return int(float(m.group(1)) * _UNITS[unit])


def check_max_memory(value: Any) -> dict[int | str, int] | None:
    """:func:`parse_max_memory`, as a settings check."""
    return parse_max_memory(value)


def check_norms(value: Any) -> tuple[str, ...] | None:
    """A repeatable ``norm``: None or a tuple of :data:`NORMS` names."""
    given = tuple_or_none(value)
    for n in given or ():
        name = str(n).strip().lower().replace("_", "-")
        if {"per-character": "per-char", "normlp": "norm-lp", "total": "sum"}.get(name, name) not in NORMS:
            raise InputError(f"unknown norm {n!r}; choose from {', '.join(NORMS)}")
    return given


def check_format(value: Any) -> Any:
    """An output format name (case as given), or None."""
    if isinstance(value, str) and value.lower() not in OUTPUT_FORMATS:
        raise InputError(f"unknown format {value!r}; choose from {', '.join(OUTPUT_FORMATS)}")
    return value


def optional_str(name: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value is not None and not isinstance(value, str):
            raise InputError(f"{name} must be a string, got {type(value).__name__}")
        return value

    return check
