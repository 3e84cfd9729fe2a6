"""How a table of texts is scored into output rows: one code path for the local and the Ray engine.

:class:`ScoreOptions` holds every option that changes a number, a row or a column (metrics, level,
contexts, user words, norms, per-token outputs, convention, ...). It is plain data, so the Ray
driver can check it without a model and ship it to its actors. :meth:`ScoreOptions.prepare` binds
it to a loaded scorer (the metrics, the unigram model, the per-token outputs: once per model), and
:meth:`Prepared.table` to an input table (its contexts and words, every text checked before any
scoring); :meth:`TableJob.rows` then scores rows ``lo:hi`` and returns their output rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pllscore.errors import InputError, InputTooLongError, NonFiniteError
from pllscore.io.readers import InputTable
from pllscore.metrics import PLL_KINDS
from pllscore.settings import TableSettings, TextSettings

__all__ = ["KEEP_TOKENS", "Prepared", "ScoreOptions", "TableJob", "check_metric_option", "output_rows"]

#: how many tokens' encodings a :class:`TableJob` keeps from its check for its scoring (about 700 MB)
KEEP_TOKENS = 2_000_000

#: the kinds with one score (no metric option), as an error names them
_ONE_SCORE = {
    "causal": "a causal LM, scored by its log-likelihood",
    "seq2seq": "an encoder-decoder LM, scored by log P(text | source)",
}


def check_metric_option(metrics: Any, models: Sequence[tuple[str, str]]) -> None:
    """Refuse ``metrics`` (the --metric option) when no model of ``models`` (kind, name) is a masked LM: the others
    have one score each, and a metric would be silently ignored."""
    if metrics and models and all(kind in _ONE_SCORE for kind, _ in models):
        kind, name = models[0]
        what = f"{name!r} is {_ONE_SCORE[kind]}" if len(models) == 1 else "no model given is a masked LM"
        raise InputError(f"{what}; drop the metrics= option")


@dataclass(frozen=True)
class ScoreOptions:
    """What to compute for each row of a table (see :func:`pllscore.score_file` for each option): the
    :class:`~pllscore.settings.TextSettings` and :class:`~pllscore.settings.TableSettings` it holds (checked
    by themselves) and the model settings' mode for over-long texts."""

    text: TextSettings = field(default_factory=TextSettings)
    table: TableSettings = field(default_factory=TableSettings)
    long: str = "error"

    def __post_init__(self) -> None:
        """The one check a table adds to its settings (the Ray driver makes these options before starting Ray)."""
        if not isinstance(self.text.words, str):
            raise InputError("words must be 'tokenizer' or 'whitespace' here; give pre-segmented words in a column")

    @classmethod
    def from_settings(cls, text: TextSettings, table: TableSettings, long: str = "error") -> ScoreOptions:
        """The options of a :class:`~pllscore.settings.TextSettings` and a :class:`~pllscore.settings.TableSettings`
        (``long``: the model settings' mode for over-long texts)."""
        return cls(text, table, long)

    def check_columns(self, table: InputTable) -> None:
        """Refuse a table without the id, context or words column these options name."""
        for name, what in (
            (self.table.id_column, "id"),
            (self.text.context_column, "context"),
            (self.text.words_column, "words"),
        ):
            if name is not None and name not in table.frame.columns:
                cols = ", ".join(map(str, table.frame.columns))
                raise InputError(f"{what} column {name!r} not in {table.source}; its columns are: {cols}")

    def check_kind(self, kind: str, name: str) -> tuple[str, ...]:
        """The checks that need the model's kind only; the per-token arrays the scorer must fill."""
        check_metric_option(self.text.metrics, [(kind, name)])
        return _check_outputs(self.text.outputs, self.text.word_prob, kind, self.table.level)

    def norms(self, unigram: Any) -> tuple[str, ...]:
        """The norms that add columns (``sum`` and ``mean`` are always there), checked against ``unigram``."""
        from pllscore.results.norms import check_norms

        norms = tuple(n for n in check_norms(self.table.norm, unigram) if n not in ("sum", "mean"))
        if norms and self.table.level != "sentence":
            raise InputError(f"--norm {norms[0]} is a sentence score; use --level sentence")
        return norms

    def prepare(self, scorer: Any) -> Prepared:
        """Bind to a loaded scorer: the metrics it computes, the unigram model, the per-token outputs."""
        from pllscore.metrics import resolve_metrics
        from pllscore.results.unigram import load_unigram

        asked = self.check_kind(scorer.kind, scorer.name)
        if scorer.kind not in PLL_KINDS:  # one score, named after the kind ("causal", "seq2seq")
            metrics: tuple[str, ...] = (scorer.kind,)
        else:
            given = self.text.metrics
            metrics = scorer.metric if given is None or given == [] else resolve_metrics(given)
        uni = load_unigram(
            self.table.unigram, corpus=self.table.unigram_corpus, tokenizer=getattr(scorer, "tokenizer", None)
        )
        norms = self.norms(uni)
        uni = uni if any(n in ("slor", "norm-lp") for n in norms) else None
        return Prepared(self, scorer, tuple(metrics), norms, uni, asked)


@dataclass
class Prepared:
    """:class:`ScoreOptions` bound to a scorer; :meth:`table` binds it to an input table."""

    options: ScoreOptions
    scorer: Any
    metrics: tuple[str, ...]
    norms: tuple[str, ...]
    unigram: Any
    asked: tuple[str, ...]

    @property
    def outputs(self) -> list[str]:
        """The per-token outputs asked (entropy, rank), without the BOW correction's internal array."""
        return [n for n in self.asked if n != "word_correction"]

    def table(self, table: InputTable) -> TableJob:
        """Bind to ``table``: its contexts and words read and checked, every text checked (too long, empty, ...)."""
        from pllscore.scoring.words import table_words

        o = self.options
        o.check_columns(table)
        contexts = _contexts(table, o.text.context, o.text.context_column)
        words = table_words(table, o.text.words, o.text.words_column, o.text.word_sep)
        job = TableJob(self, table, contexts, words)
        job.check()
        return job


@dataclass
class TableJob:
    """One input table under prepared options: :meth:`rows` scores a slice of it.

    Each text is encoded once: :meth:`check` encodes them all (which checks them) and keeps the encodings
    that :meth:`score` then scores. Encodings take about 360 bytes per token (10 KB for a 27-token
    sentence, measured with tiny-bert and tiny-gpt2), so only the first :data:`KEEP_TOKENS` tokens' worth
    are kept; the rows after them (files of more than some 70,000 sentences) are encoded again when scored.
    """

    prepared: Prepared
    table: InputTable
    contexts: list[str] | None
    words: str | list[list[str]]
    _texts: list[str] = field(init=False, repr=False)
    _kept: Any = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        self._texts = self.table.texts  # once: table.texts rebuilds the whole list

    def check(self) -> None:
        """Fail before any scoring if some text is too long: an error after hours of work helps nobody."""
        from pllscore.scoring.encoding import Encodings

        kept: list[Any] = []
        n_kept, step = 0, 4096
        for lo in range(0, len(self._texts), step):
            encodings = self._encode(lo, min(lo + step, len(self._texts)))
            if len(kept) * step == lo and n_kept + encodings.n_tokens <= KEEP_TOKENS:
                kept.append(encodings)
                n_kept += encodings.n_tokens
        self._kept = Encodings.concat(kept) if kept else None

    def _encode(self, lo: int, hi: int) -> Any:
        """The encodings of rows ``lo:hi``; an error names the input row."""
        o, table, scorer = self.prepared.options, self.table, self.prepared.scorer
        given: dict[str, Any] = {"long": o.long, "convention": o.text.convention, "mask_by": o.text.mask_by}
        if self.contexts is not None:
            given.update(context=self.contexts[lo:hi], sep=o.text.sep)
        words = self.words if isinstance(self.words, str) else self.words[lo:hi]
        try:
            return scorer.encode(self._texts[lo:hi], words=words, word_sep=o.text.word_sep, **given)
        except InputTooLongError as e:
            i = lo + e.index
            where = table.where(i) if e.part is None else f"the {e.part} of {table.where(i)}"
            fix = ", or score it in windows with --long window" if e.windows else ""
            raise InputError(
                f"{where} is {e.n_tokens} tokens long (special tokens included) but the model allows "
                f"at most {e.limit}; shorten or split it{fix}"
            ) from None
        except InputError as e:
            raise InputError(f"{table.source}: {e}") from None

    def score(self, lo: int, hi: int, progress: bool | None = False) -> Any:
        """The :class:`~pllscore.Results` of rows ``lo:hi``; a non-finite score names the input row. ``progress``:
        the scorer's own bar over these rows (off by default: a file run draws its own, which the engine's batches
        move through :func:`pllscore.engine.progress.reporting`)."""
        p, o = self.prepared, self.prepared.options
        kwargs: dict[str, Any] = {"metric": list(p.metrics)} if p.scorer.kind in PLL_KINDS else {}
        if p.asked:
            kwargs.update(outputs=p.outputs, word_prob=o.text.word_prob)
        if self._kept is not None and hi <= len(self._kept):
            encodings = self._kept[lo:hi]
        else:
            encodings = self._encode(lo, hi)
        try:
            return p.scorer.score(encodings, progress=progress, **kwargs)
        except NonFiniteError as e:  # name the input line, not the position within the slice
            i = lo + e.index
            raise NonFiniteError(i, e.value, e.dtype, where=self.table.where(i)) from None

    def rows(self, lo: int, hi: int, progress: bool | None = False) -> Any:
        """The output rows of input rows ``lo:hi``: their scores, with the input's columns at sentence level
        (``progress``: as :meth:`score` takes it)."""
        p, o = self.prepared, self.prepared.options
        results = self.score(lo, hi, progress)
        return output_rows(
            results, self.table, lo, hi, o.table.level, o.table.id_column, o.table.base, o.table.surprisal,
            norm=p.norms, unigram=p.unigram,
        )  # fmt: skip


def _check_outputs(outputs: Sequence[str], word_prob: str | None, kind: str, level: str) -> tuple[str, ...]:
    """What the scorer must fill (:func:`pllscore.scoring.outputs.check_outputs`), refused at a level without it."""
    from pllscore.scoring.outputs import check_outputs

    asked = check_outputs(outputs, word_prob, kind)
    per_token = [n for n in asked if n != "word_correction"]
    if per_token and level == "sentence":
        raise InputError(f"--{per_token[0]} is a per-token output; use --level token or word")
    if "word_correction" in asked and level != "word":
        raise InputError("--word-prob bow changes word scores only (tokens and totals are unchanged); use --level word")
    return asked


def _contexts(table: InputTable, context: str | None, column: str | None) -> list[str] | None:
    """Per kept row, its context (from ``context`` or the ``column`` of its row), or None for no context."""
    if context is not None:
        return [context] * len(table.rows) if context else None
    if column is None:
        return None
    out = []
    for i, value in enumerate(table.frame[column].tolist()):
        if value is None or (isinstance(value, float) and value != value):  # a missing value: no context
            value = ""
        if not isinstance(value, str):
            raise InputError(f"context column {column!r} at {table.where(i)} is a {type(value).__name__}, not text")
        out.append(value)
    return out


def output_rows(
    results: Any,
    table: InputTable,
    lo: int,
    hi: int,
    level: str,
    id_column: str | None,
    base: Any,
    surprisal: bool,
    *,
    norm: Sequence[str] | None = None,
    unigram: Any = None,
) -> Any:
    """The output rows of ``table`` rows ``lo:hi``: ``text_id`` (the 0-based input row), then the input's columns
    (sentence level; one named like an output column gets ``_input`` after its name) or the id column, then the
    scores of :func:`~pllscore.results.frames.to_wide_frame`."""
    import pandas as pd

    from pllscore.results.frames import to_wide_frame

    scores = to_wide_frame(results, level=level, base=base, surprisal=surprisal, norm=norm, unigram=unigram)  # type: ignore[arg-type]
    local = scores.pop("text_id").to_numpy()
    rows = pd.Series(table.rows[lo:hi]).to_numpy()[local]
    if level == "sentence":
        carried = table.frame.iloc[lo:hi].reset_index(drop=True)
        carried = carried.rename(
            columns={c: f"{c}_input" for c in carried.columns if c in scores.columns or c == "text_id"}
        )
        front = carried.iloc[local].reset_index(drop=True)
    else:
        front = (
            pd.DataFrame({id_column: table.frame[id_column].iloc[lo:hi].to_numpy()[local]})
            if id_column
            else pd.DataFrame()
        )
    front.insert(0, "text_id", rows)
    return pd.concat([front, scores.reset_index(drop=True)], axis=1)
