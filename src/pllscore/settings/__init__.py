"""Every option of pllscore, declared once: its type, default, help text, command-line flag and check.

Frozen dataclasses grouped by what they change: :class:`ModelSettings` (which model and how it runs),
:class:`TextSettings` (how each text is scored), :class:`TableSettings` (what a table becomes: column,
level, units, norms, format), :class:`RunSettings` (resume, force, progress, chunk size) and
:class:`RaySettings` (the Ray engine). A field's :func:`setting` carries its help and flag, which
:mod:`pllscore.cli.options` turns into a command-line option; each class checks its values in
``__post_init__`` (one-line :class:`~pllscore.errors.InputError`); :meth:`Settings.record` is what provenance
writes and resume compares; :func:`gather` puts keyword options into the groups. The fields' machinery is
:mod:`pllscore.settings.fields`. The package imports only :mod:`pllscore.errors` and :mod:`pllscore.metrics`,
so everything else may import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pllscore.errors import InputError
from pllscore.metrics import DEFAULT_METRIC, METRICS
from pllscore.settings.fields import (
    CONVENTIONS,
    LEVELS,
    LONG_MODES,
    MASK_BY,
    OUTPUTS,
    WORD_MODES,
    WORD_PROBS,
    Settings,
    check_base,
    check_choice,
    check_device_map,
    check_dtype,
    check_format,
    check_max_memory,
    check_norms,
    choice,
    gather,
    optional_str,
    positive,
    setting,
    tuple_or_none,
)

__all__ = [
    "CONVENTIONS", "LEVELS", "LONG_MODES", "MASK_BY", "OUTPUTS", "WORD_MODES", "WORD_PROBS", "BabylmSettings",
    "ModelSettings",
    "PredictSettings", "RaySettings", "RunSettings", "Settings", "TableSettings", "TextSettings", "check_base",
    "check_choice", "choice", "gather", "setting",
]  # fmt: skip


@dataclass(frozen=True)
class ModelSettings(Settings):
    """Which model, and how it runs. ``model`` is a Hub name, a folder, a .gguf file or a loaded scorer. Only the
    recorded fields (model, dtype, autocast, revision, kind, bos, eos, long, stride) can change a number; the rest
    are speed and memory."""

    group: ClassVar[str] = "model"

    model: Any = setting(
        None, "Hub name, local folder or .gguf file of a masked, causal or encoder-decoder LM.", flags=("--model", "-m")
    )
    device: str = setting("auto", "auto, cpu, cuda, cuda:1 or mps.", flags=("--device",), record=False)
    dtype: str | None = setting(
        None,
        "float32 (default, exact), bfloat16 or float16: the weights are loaded in that type.",
        flags=("--dtype",),
        check=check_dtype,
    )
    autocast: bool = setting(
        False,
        "With --dtype bfloat16/float16: keep float32 weights and autocast the matrix products instead.",
        flags=("--autocast",),
    )
    device_map: str | None = setting(
        None,
        "auto: spread a model too large for one device over the GPUs, then the CPU, then disk (accelerate).",
        flags=("--device-map",),
        check=check_device_map,
        record=False,
    )
    max_memory: Any = setting(
        None,
        "With --device-map: memory per device, e.g. cuda:0=20GiB,cuda:1=20GiB,cpu=60GiB.",
        flags=("--max-memory",),
        check=check_max_memory,
        record=False,
    )
    offload_folder: str | None = setting(
        None,
        "With --device-map: folder for the layers that fit in no device's memory.",
        flags=("--offload-folder",),
        record=False,
    )
    revision: str | None = setting(None, "A Hub branch, tag or commit.")
    kind: str | None = setting(
        None,
        "mntp reads a masked LM as GPT-BERT (masked next-token prediction); masked, causal or seq2seq force a kind "
        "(default: read from the model's config).",
        flags=("--kind",),
    )
    bos: bool = setting(True, "A causal LM conditions the first token on BOS.")
    eos: bool = setting(
        True,
        "Encoder-decoder LMs: the closing EOS (and BART's leading BOS) count in the total, as in the model's loss.",
        flags=("--eos/--no-eos",),
    )
    trust_remote_code: bool = setting(False, "Allow model code from the Hub.", record=False)
    max_tokens: int | None = setting(
        None, "Padded tokens per batch.", flags=("--max-tokens",), check=positive("max_tokens"), record=False
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
    overlap: bool = setting(
        True,
        "Launch the next batch while the device runs this one (default); --no-overlap: one batch at a time, each "
        "waited for (the same numbers).",
        flags=("--overlap/--no-overlap",),
        record=False,
    )
    cache: bool = setting(
        True,
        "GGUF files: keep the converted weights in the user cache (PLLSCORE_CACHE) and load them from there.",
        flags=("--cache/--no-cache",),
        record=False,
    )
    long: str = choice("long", "error", "Texts longer than the model allows: error, or window.")
    stride: int | None = setting(
        None, "Causal window step for --long window.", flags=("--stride",), check=positive("stride")
    )

    def _check_together(self) -> None:
        if self.autocast and str(self.dtype).lower().removeprefix("torch.") in ("none", "float32", "fp32"):
            raise InputError(
                "--autocast runs float32 weights in a reduced type: add --dtype bfloat16 or float16, or drop --autocast"
            )
        if self.stride is not None and self.long != "window":
            raise InputError(
                f"--stride {self.stride} is the step of --long window; add --long window, or drop --stride"
            )

    def load_kwargs(self) -> dict[str, Any]:
        """What :func:`pllscore.load` takes of these settings (all but the model)."""
        out = self.as_dict()
        del out["model"]
        return out


def _metrics(value: Any) -> tuple[str, ...] | None:
    from pllscore.metrics import resolve_metrics

    given = tuple_or_none(value)
    return None if given is None else resolve_metrics(given)


def _outputs(value: Any) -> tuple[str, ...]:
    given = tuple_or_none(value) or ()
    return tuple(dict.fromkeys(check_choice("output", v) for v in given))


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
        check=optional_str("context"),
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
        "Also write <metric>_logprob_<norm>: per-char, slor or norm-lp (sum and mean are always written); repeatable.",
        flags=("--norm",),
        check=check_norms,
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
        None,
        "csv, tsv, jsonl or parquet (default: from -o, else tsv).",
        flags=("--format",),
        check=check_format,
        record=False,
    )
    input_format: str | None = setting(None, "Input format (default: from the input's extension).", record=False)
    skip_empty: bool = setting(False, "Skip empty lines instead of failing.", flags=("--skip-empty",))
    allow_gaps: bool = setting(
        False,
        "Reading times: a text's word positions may skip numbers (words left out on purpose).",
        flags=("--allow-gaps",),
        record=False,
    )


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
    chunk_size: int = setting(256, "Input rows scored and written at a time.", check=positive("chunk_size"))

    def _check_together(self) -> None:
        if self.resume and self.force:
            raise InputError("give either --resume (continue the output) or --force (start it afresh), not both")


@dataclass(frozen=True)
class RaySettings(Settings):
    """The Ray engine: where the cluster is and how the input is cut."""

    group: ClassVar[str] = "ray"

    address: str | None = setting(
        None, "Ray: auto, or ray://HOST:PORT (default: local Ray).", flags=("--address",), record=False
    )
    workers: int | None = setting(
        None, "Ray: number of model actors.", flags=("--workers",), check=positive("workers"), record=False
    )
    gpus_per_worker: float = setting(0, "Ray: GPUs per actor.", flags=("--gpus-per-worker",), record=False)
    cpus_per_worker: int = setting(
        1, "Ray: CPUs (torch threads) per actor.", check=positive("cpus_per_worker"), record=False
    )
    block_rows: int = setting(
        1024, "Ray: input rows per block and output shard.", flags=("--block-rows",), check=positive("block_rows")
    )
    keep_workers: bool = setting(
        False,
        "Ray: keep the actors for this process's next calls, which load their own model in place (none if it "
        "is the same); pllscore.jobs.ray.release_workers() ends them.",
        record=False,
    )


@dataclass(frozen=True)
class PredictSettings(Settings):
    """What ``pllscore predict`` asks of each slot (:meth:`pllscore.Scorer.predict`); the level is
    :class:`TableSettings`' ``level`` (word or token)."""

    group: ClassVar[str] = "predict"

    k: int = setting(10, "Words (or tokens) per text.", flags=("-k",), check=positive("k"))
    word_tokens: int = setting(
        3, "The most tokens of a predicted word.", flags=("--word-tokens",), check=positive("word_tokens")
    )
    candidates: str | None = setting(
        None,
        "Score these words in every slot instead: a .txt file (one word per line) or a table with a word "
        "column (and a text_id column for one list per text).",
        flags=("--candidates",),
    )


# the BabyLM command's group, in a module of its own; imported last, as it builds on the fields above
from pllscore.settings.babylm import BabylmSettings  # noqa: E402
