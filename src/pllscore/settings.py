"""Every option of pllscore, declared once: its type, default, help text, command-line flag and check.

Frozen dataclasses grouped by what they change: :class:`ModelSettings` (which model and how it runs),
:class:`TextSettings` (how each text is scored), :class:`TableSettings` (what a table becomes: column,
level, units, norms, format), :class:`RunSettings` (resume, force, progress, chunk size) and
:class:`RaySettings` (the Ray engine). A field's :func:`setting` carries its help and flag, which
:mod:`pllscore.cli.options` turns into a command-line option; each class checks its values in
``__post_init__`` (one-line :class:`~pllscore.errors.InputError`); :meth:`Settings.record` is what provenance
writes and resume compares; :func:`gather` puts keyword options into the groups. This module imports only
:mod:`pllscore.errors` and :mod:`pllscore.metrics`, so everything else may import it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from pllscore.errors import InputError
from pllscore.metrics import DEFAULT_METRIC, METRICS

__all__ = [
    "CONVENTIONS", "LEVELS", "LONG_MODES", "MASK_BY", "OUTPUTS", "WORD_MODES", "WORD_PROBS", "ModelSettings",
    "RaySettings", "RunSettings", "Settings", "TableSettings", "TextSettings", "check_base", "check_choice", "choice",
    "gather", "setting",
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


def _positive(name: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise InputError(f"{name} must be a positive integer, got {value!r}")
        return value

    return check


def _tuple_or_none(value: Any) -> tuple[str, ...] | None:
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
                object.__setattr__(self, f.name, check(getattr(self, f.name)))
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


@dataclass(frozen=True)
class ModelSettings(Settings):
    """Which model, and how it runs. ``model`` is a Hub name, a folder, a .gguf file or a loaded scorer. Only the
    recorded fields (model, dtype, revision, kind, bos, long, stride) can change a number; the rest are speed."""

    group: ClassVar[str] = "model"

    model: Any = setting(
        None, "Hub name, local folder or .gguf file of a masked or causal LM.", flags=("--model", "-m")
    )
    device: str = setting("auto", "auto, cpu, cuda, cuda:1 or mps.", flags=("--device",), record=False)
    dtype: str | None = setting(None, "float32 (default, exact), bfloat16 or float16.", flags=("--dtype",))
    revision: str | None = setting(None, "A Hub branch, tag or commit.")
    kind: str | None = setting(None, "masked or causal (default: read from the model's config).")
    bos: bool = setting(True, "A causal LM conditions the first token on BOS.")
    trust_remote_code: bool = setting(False, "Allow model code from the Hub.", record=False)
    max_tokens: int | None = setting(
        None, "Padded tokens per batch.", flags=("--max-tokens",), check=_positive("max_tokens"), record=False
    )
    compile: bool = setting(
        False,
        "torch.compile the model's layers (tens of seconds; pays on long runs).",
        flags=("--compile",),
        record=False,
    )
    share_prefixes: bool = setting(
        True,
        "Causal LMs: compute each distinct prefix of the texts once (default on where exact).",
        flags=("--share-prefixes/--no-share-prefixes",),
        record=False,
    )
    long: str = choice("long", "error", "Texts longer than the model allows: error, or window.")
    stride: int | None = setting(
        None, "Causal window step for --long window.", flags=("--stride",), check=_positive("stride")
    )

    def load_kwargs(self) -> dict[str, Any]:
        """What :func:`pllscore.load` takes of these settings (all but the model)."""
        out = self.as_dict()
        del out["model"]
        return out


def _metrics(value: Any) -> tuple[str, ...] | None:
    from pllscore.metrics import resolve_metrics

    given = _tuple_or_none(value)
    return None if given is None else resolve_metrics(given)


def _outputs(value: Any) -> tuple[str, ...]:
    given = _tuple_or_none(value) or ()
    return tuple(dict.fromkeys(check_choice("output", v) for v in given))


def _optional_str(name: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value is not None and not isinstance(value, str):
            raise InputError(f"{name} must be a string, got {type(value).__name__}")
        return value

    return check


@dataclass(frozen=True)
class TextSettings(Settings):
    """How each text is read and scored. ``metrics`` None means the scorer's own (word-l2r by default)."""

    group: ClassVar[str] = "text"

    metrics: tuple[str, ...] | None = setting(
        None,
        f"{', '.join(METRICS)} or all; repeatable (default {DEFAULT_METRIC}; masked LMs only).",
        flags=("--metric",),
        check=_metrics,
        repeatable=True,
    )
    context: str | None = setting(
        None,
        "Score each text given this context (only the text's tokens are scored).",
        flags=("--context",),
        check=_optional_str("context"),
    )
    context_column: str | None = setting(
        None, "Score each text given the value of this column of its row.", flags=("--context-column",)
    )
    sep: str = setting(" ", "What joins a context and its text (default one space).", flags=("--context-sep",))
    words: str = choice(
        "words", "tokenizer", "Words of word scores and --level word: tokenizer (default) or whitespace.", optional=True
    )
    words_column: str | None = setting(
        None, "Column of pre-segmented words, a JSON list per row, joined by --word-sep.", flags=("--words-column",)
    )
    word_sep: str = setting(" ", "What joins the words of --words-column (default a space).", flags=("--word-sep",))
    mask_by: str = choice(
        "mask_by", "tokenizer", "word-l2r/whole-word mask: tokenizer words (default) or the user's words."
    )
    outputs: tuple[str, ...] = setting(
        (),
        "Per-token outputs besides the log-probability: entropy, rank (word and token levels).",
        check=_outputs,
        factory=tuple,
        switches={
            "entropy": "Also write <metric>_entropy: the entropy (nats, or bits with --base 2) per token.",
            "rank": "Also write <metric>_rank: each token's rank (1: the top choice).",
        },
    )
    word_prob: str | None = choice(
        "word_prob",
        None,
        "Word scores: sum of tokens, or bow (corrected for Ġ/▁ tokenizers; causal LMs).",
        optional=True,
    )
    convention: str = choice(
        "convention", "paper", "paper (default: each text as given) or lm-eval (' ' + text, as lm-eval reads it)."
    )

    def _check_together(self) -> None:
        if self.context is not None and self.context_column is not None:
            raise InputError("give either --context or --context-column, not both")
        if not isinstance(self.words, str) and self.words_column is not None:
            raise InputError("give the words either in words= or in --words-column, not both")
        if self.words_column is not None and self.words != "tokenizer":
            raise InputError(f"give either --words {self.words} or --words-column {self.words_column}, not both")


@dataclass(frozen=True)
class TableSettings(Settings):
    """What a table of texts becomes: which column is read, which rows and columns are written."""

    group: ClassVar[str] = "table"

    column: str | None = setting(None, "Text column of a table (default sentence/text).", flags=("--column",))
    id_column: str | None = setting(None, "Column copied to every output row.", flags=("--id-column",))
    level: str = choice("level", "sentence", "sentence, word or token.")
    base: float | str = setting("e", "Log base: e (nats) or 2 (bits).", flags=("--base",), check=check_base)
    surprisal: bool = setting(False, "Write surprisal (negated log-probability).", flags=("--surprisal",))
    norm: tuple[str, ...] | None = setting(
        None,
        "Also write <metric>_<norm>: per-char, slor or norm-lp (sum and mean are always written); repeatable.",
        flags=("--norm",),
        check=_tuple_or_none,
        repeatable=True,
    )
    unigram: Any = setting(
        None, "For slor/norm-lp: a tsv/csv of token counts, or wordfreq[:LANG] (word-level).", flags=("--unigram",)
    )
    unigram_corpus: Any = setting(  # not recorded: the run records the counts it made as ``unigram``
        None,
        "For slor/norm-lp: a text file to count with the model's tokenizer.",
        flags=("--unigram-corpus",),
        record=False,
    )
    format: str | None = setting(
        None, "csv, tsv, jsonl or parquet (default: from -o, else tsv).", flags=("--format",), record=False
    )
    input_format: str | None = setting(None, "Input format (default: from the input's extension).", record=False)
    skip_empty: bool = setting(False, "Skip empty lines instead of failing.", flags=("--skip-empty",))


@dataclass(frozen=True)
class RunSettings(Settings):
    """How a run goes; only ``chunk_size`` (the unit of resume) is recorded."""

    group: ClassVar[str] = "run"

    resume: bool = setting(
        False, "Continue an interrupted run into the same output.", flags=("--resume",), record=False
    )
    force: bool = setting(False, "Overwrite an existing output.", flags=("--force",), record=False)
    progress: bool | None = setting(
        None, "Progress bar on stderr (None: only when stderr is a terminal).", record=False
    )
    chunk_size: int = setting(256, "Input rows scored and written at a time.", check=_positive("chunk_size"))


@dataclass(frozen=True)
class RaySettings(Settings):
    """The Ray engine: where the cluster is and how the input is cut."""

    group: ClassVar[str] = "ray"

    address: str | None = setting(
        None, "Ray: auto, or ray://HOST:PORT (default: local Ray).", flags=("--address",), record=False
    )
    workers: int | None = setting(
        None, "Ray: number of model actors.", flags=("--workers",), check=_positive("workers"), record=False
    )
    gpus_per_worker: float = setting(0, "Ray: GPUs per actor.", flags=("--gpus-per-worker",), record=False)
    cpus_per_worker: int = setting(
        1, "Ray: CPUs (torch threads) per actor.", check=_positive("cpus_per_worker"), record=False
    )
    block_rows: int = setting(
        1024, "Ray: input rows per block and output shard.", flags=("--block-rows",), check=_positive("block_rows")
    )
