"""N-best rescoring with a language model (the use case of Salazar et al. 2020).

In: a table of hypotheses, one row each: an utterance id, the hypothesis text, its first-pass
score (from an ASR or MT system), and optionally the utterance's reference and a dev/test split.
Out: every hypothesis with its LM score ``lm`` (a masked LM's PLL under one metric, or a causal
LM's log-likelihood, in nats), ``n_tokens`` (the tokens the LM scored), the combined score
``combined = first_pass + lam * lm + beta * n_tokens`` and ``chosen`` (the best hypothesis of its
utterance; ties go to the first in input order); with references, the word error rate (or BLEU)
of the first-pass choice and of the rescored choice.

Two steps, kept apart:

1. :func:`score_hypotheses`: the distinct hypothesis texts are scored with
   :func:`pllscore.score_file` into an intermediate file next to the output (``OUT.lm.parquet``),
   so an interrupted run keeps its finished chunks and ``resume=True`` continues it.
2. :func:`combine`, :func:`choose`, :func:`evaluate` and :func:`tune`: pure pandas/numpy on the
   scored table, no model needed.

:func:`rescore` runs both; ``pllscore rescore`` is that function on the command line.
"""

from __future__ import annotations

import io
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from pllscore.errors import InputError, PllscoreError

__all__ = [
    "DEFAULT_BETA_GRID",
    "DEFAULT_LAMBDA_GRID",
    "RescoreResult",
    "RescoreSummary",
    "Tuning",
    "check_nbest",
    "choose",
    "combine",
    "evaluate",
    "oracle_wer",
    "parse_grid",
    "read_nbest",
    "rescore",
    "rescore_frame",
    "score_hypotheses",
    "tune",
]

DEFAULT_LAMBDA_GRID = "0:1:0.05"  # 21 values
DEFAULT_BETA_GRID = "-2:2:0.25"  # 17 values
EVAL_METRICS = ("wer", "bleu")
SPLITS = ("dev", "test")
ADDED = ("lm", "n_tokens", "combined", "chosen")  # the columns rescoring adds
_AUTO = "ref"  # the reference column used when the table has one and none is named


# --- reading and checking -------------------------------------------------------------------


def read_nbest(
    source: Any,
    *,
    utt_column: str = "utt_id",
    text_column: str = "hyp",
    score_column: str = "score",
    ref_column: str | None = None,
    split_column: str | None = None,
    fmt: str | None = None,
) -> tuple[Any, str | None]:
    """Read an n-best table (csv, tsv, jsonl, parquet, or a DataFrame) and check it with :func:`check_nbest`.

    Returns the checked frame and the name of its reference column: ``ref_column``, else ``ref``
    when the table has that column, else None (no evaluation).
    """
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        frame, name = source, "the n-best table"
    else:
        from pllscore.io.readers import read_table

        name = os.fspath(source)
        frame = read_table(name, fmt=fmt)
    for col in ADDED:
        if col in frame.columns:
            raise InputError(f"{name} already has a column {col!r}, which rescoring writes; rename that column")
    if ref_column is None and _AUTO in frame.columns:
        ref_column = _AUTO
    checked = check_nbest(
        frame,
        utt_column=utt_column,
        text_column=text_column,
        score_column=score_column,
        ref_column=ref_column,
        split_column=split_column,
        source=name,
    )
    return checked, ref_column


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pd.NA
    except (TypeError, ValueError):
        return False


def _blank(value: Any) -> bool:
    return _missing(value) or (isinstance(value, str) and not value.strip())


def check_nbest(
    frame: Any,
    *,
    utt_column: str = "utt_id",
    text_column: str = "hyp",
    score_column: str = "score",
    ref_column: str | None = None,
    split_column: str | None = None,
    source: str = "the n-best table",
) -> Any:
    """Check an n-best table and return a copy whose first-pass score column is float64.

    ``ref_column`` and ``split_column`` are optional (None: not checked). Raises
    :class:`~pllscore.InputError` (one line: the problem, where, and the fix) for a missing
    column, an empty table, a missing utterance id, an
    utterance with no hypotheses, an empty or non-text hypothesis, a first-pass score that is
    not a finite number, a missing or inconsistent reference, and a split value other than dev
    or test (or two splits for one utterance).
    """
    import pandas as pd

    frame = frame.reset_index(drop=True).copy()
    columns = [str(c) for c in frame.columns]
    listed = ", ".join(columns) if columns else "(none)"
    needed = [(utt_column, "--utt-column"), (text_column, "--text-column"), (score_column, "--score-column")]
    if ref_column is not None:
        needed.append((ref_column, "--ref-column"))
    if split_column is not None:
        needed.append((split_column, "--split-column"))
    for col, flag in needed:
        if col not in columns:
            raise InputError(f"{source} has no column {col!r} (its columns are: {listed}); name the column with {flag}")
    if len(frame) == 0:
        raise InputError(f"{source} has no rows; it needs at least one hypothesis")

    def at(i: int) -> str:
        return f"row {i} of {source} (utterance {frame[utt_column].iloc[i]!r})"

    for i, u in enumerate(frame[utt_column]):
        if _blank(u):
            raise InputError(f"row {i} of {source} has no utterance id in column {utt_column!r}; fill it in")
    utt = frame[utt_column]

    hyps = frame[text_column]
    for i, h in enumerate(hyps):
        if not _blank(h) and not isinstance(h, str):
            raise InputError(f"{at(i)}: column {text_column!r} holds {type(h).__name__}, not text; quote it as text")
    empty = np.array([_blank(h) for h in hyps], dtype=bool)
    if empty.any():
        all_empty = pd.Series(empty).groupby(utt.to_numpy(), sort=False).all()
        if all_empty.any():
            u = all_empty[all_empty].index[0]
            raise InputError(
                f"utterance {u!r} in {source} has no hypotheses (its {text_column!r} cells are empty); "
                "give it at least one hypothesis or remove its rows"
            )
        i = int(np.flatnonzero(empty)[0])
        raise InputError(
            f"{at(i)}: the hypothesis is empty and an LM cannot score empty text; remove the row "
            f"({int(empty.sum())} such rows in all)"
        )

    raw = frame[score_column]
    numbers = pd.to_numeric(raw.map(lambda v: v.strip() if isinstance(v, str) else v), errors="coerce")
    bad = ~np.isfinite(numbers.to_numpy(np.float64)) | raw.map(lambda v: isinstance(v, bool)).to_numpy(bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{at(i)}: the first-pass score {raw.iloc[i]!r} in column {score_column!r} is not a finite number; "
            f"fix it, or name the score column with --score-column ({int(bad.sum())} such rows in all)"
        )
    frame[score_column] = numbers.astype("float64")

    if ref_column is not None:
        _check_per_utterance(frame, utt_column, ref_column, source, "reference", "--ref-column")
    if split_column is not None:
        _check_per_utterance(frame, utt_column, split_column, source, "split", "--split-column")
        splits = frame[split_column]
        for i, s in enumerate(splits):
            if s not in SPLITS:
                raise InputError(
                    f"{at(i)}: split {s!r} in column {split_column!r} is neither dev nor test; "
                    "mark each utterance dev (to tune lambda and beta on) or test"
                )
    return frame


def _check_per_utterance(frame: Any, utt_column: str, column: str, source: str, what: str, flag: str) -> None:
    """Every row of an utterance has the same, non-empty value in ``column``."""
    values = frame[column]
    for i, v in enumerate(values):
        if _blank(v) or not isinstance(v, str):
            shown = "empty" if _blank(v) else f"{type(v).__name__}, not text"
            raise InputError(
                f"row {i} of {source} (utterance {frame[utt_column].iloc[i]!r}): the {what} in column {column!r} "
                f"is {shown}; give every utterance one, or name another column with {flag}"
            )
    distinct = values.groupby(frame[utt_column].to_numpy(), sort=False).nunique()
    if (distinct > 1).any():
        u = distinct[distinct > 1].index[0]
        raise InputError(
            f"utterance {u!r} in {source} has {int(distinct[u])} different {what}s in column {column!r}; "
            f"an utterance has one {what}, the same on each of its rows"
        )


# --- the pure steps ---------------------------------------------------------------------------


def combine(
    frame: Any,
    lam: float,
    beta: float,
    *,
    score_column: str = "score",
    lm_column: str = "lm",
    n_tokens_column: str = "n_tokens",
    out: str = "combined",
) -> Any:
    """A copy of ``frame`` with ``out = first_pass + lam * lm + beta * n_tokens``."""
    frame = frame.copy()
    frame[out] = _combined(
        frame[score_column].to_numpy(np.float64),
        frame[lm_column].to_numpy(np.float64),
        frame[n_tokens_column].to_numpy(np.float64),
        lam,
        beta,
    )
    return frame


def _combined(score: Any, lm: Any, n: Any, lam: float, beta: float) -> Any:
    return score + lam * lm + beta * n  # one formula for combine and tune, so both choose alike


def _choice(codes: Any, values: Any) -> Any:
    """Per group code (0..k-1), the position of its highest value; ties go to the earliest, NaN is lowest."""
    v = np.where(np.isnan(values), -np.inf, values)
    order = np.lexsort((np.arange(len(v)), -v, codes))
    first = np.ones(len(order), dtype=bool)
    first[1:] = codes[order][1:] != codes[order][:-1]
    return order[first]  # in code order: utterances in order of first appearance


def _codes(frame: Any, utt_column: str) -> Any:
    import pandas as pd

    codes, _ = pd.factorize(frame[utt_column], sort=False)
    return codes


def choose(frame: Any, *, by: str = "combined", utt_column: str = "utt_id", out: str = "chosen") -> Any:
    """A copy of ``frame`` with ``out``: True for the row with the highest ``by`` of each utterance.

    Ties go to the first row in input order; a NaN score is lower than any number (an utterance
    whose scores are all NaN gets its first row).
    """
    frame = frame.copy()
    chosen = np.zeros(len(frame), dtype=bool)
    chosen[_choice(_codes(frame, utt_column), frame[by].to_numpy(np.float64))] = True
    frame[out] = chosen
    return frame


def _needs(module: str, what: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise PllscoreError(
            f"{what} needs the {module} package, which is not installed; pip install 'pllscore[rescore]'"
        ) from None


def _corpus_metric(metric: str, refs: Sequence[str], hyps: Sequence[str]) -> float:
    """Corpus WER (a fraction: all word errors over all reference words) or corpus BLEU (0-100)."""
    if metric == "wer":
        jiwer = _needs("jiwer", "WER")
        return float(jiwer.wer(list(refs), list(hyps)))
    if metric == "bleu":
        sacrebleu = _needs("sacrebleu", "BLEU")
        return float(sacrebleu.corpus_bleu(list(hyps), [list(refs)]).score)
    raise InputError(f"unknown evaluation metric {metric!r}; choose wer or bleu")


def _check_eval(metric: str) -> str:
    m = metric.lower() if isinstance(metric, str) else metric
    if m not in EVAL_METRICS:
        raise InputError(f"unknown evaluation metric {metric!r}; choose wer or bleu")
    return str(m)


def evaluate(
    frame: Any,
    *,
    chosen: str = "chosen",
    metric: str = "wer",
    utt_column: str = "utt_id",
    text_column: str = "hyp",
    ref_column: str = "ref",
) -> float:
    """The corpus WER (fraction) or BLEU (0-100) of the hypotheses marked ``chosen``, one per utterance."""
    metric = _check_eval(metric)
    picked = frame[frame[chosen].to_numpy(bool)]
    n_utt = frame[utt_column].nunique()
    if len(picked) != n_utt or picked[utt_column].nunique() != n_utt:
        raise InputError(f"column {chosen!r} must mark exactly one hypothesis per utterance")
    return _corpus_metric(metric, picked[ref_column].tolist(), picked[text_column].tolist())


def oracle_wer(frame: Any, *, utt_column: str = "utt_id", text_column: str = "hyp", ref_column: str = "ref") -> float:
    """The lowest corpus WER any choice of one hypothesis per utterance reaches (its word errors, summed)."""
    jiwer = _needs("jiwer", "WER")
    errors, words = [], []
    for ref, hyp in zip(frame[ref_column].tolist(), frame[text_column].tolist()):
        w = jiwer.process_words(ref, hyp)
        errors.append(w.substitutions + w.deletions + w.insertions)
        words.append(w.substitutions + w.deletions + w.hits)
    codes = _codes(frame, utt_column)
    best = np.full(codes.max() + 1, np.inf)
    np.minimum.at(best, codes, np.array(errors, dtype=np.float64))
    first = np.unique(codes, return_index=True)[1]  # one reference per utterance
    return float(best.sum() / np.array(words, dtype=np.float64)[first].sum())


@dataclass
class Tuning:
    """The outcome of :func:`tune`: the best ``lam`` and ``beta``, their ``value`` on dev, and every grid point."""

    lam: float
    beta: float
    value: float
    metric: str
    grid: Any  # DataFrame: lam, beta, value


def tune(
    dev: Any,
    lam_grid: Sequence[float] | str = DEFAULT_LAMBDA_GRID,
    beta_grid: Sequence[float] | str = DEFAULT_BETA_GRID,
    *,
    metric: str = "wer",
    score_column: str = "score",
    utt_column: str = "utt_id",
    text_column: str = "hyp",
    ref_column: str = "ref",
) -> Tuning:
    """Grid-search ``lam`` and ``beta`` for the lowest corpus WER (or the highest BLEU) on ``dev``.

    ``dev`` has the scored columns (``lm``, ``n_tokens``) and a reference per hypothesis. Among
    grid points that tie, the one with the smallest ``lam``, then the smallest ``|beta|``, then the
    smallest ``beta`` wins (the least change to the first pass).
    """
    import pandas as pd

    metric = _check_eval(metric)
    lams, betas = parse_grid(lam_grid, "lambda"), parse_grid(beta_grid, "beta")
    score = dev[score_column].to_numpy(np.float64)
    lm = dev["lm"].to_numpy(np.float64)
    n = dev["n_tokens"].to_numpy(np.float64)
    codes = _codes(dev, utt_column)
    refs, hyps = dev[ref_column].tolist(), dev[text_column].tolist()
    seen: dict[bytes, float] = {}  # many grid points make the same choice: evaluate each choice once
    rows = []
    for lam in lams:
        for beta in betas:
            pick = _choice(codes, _combined(score, lm, n, lam, beta))
            key = pick.tobytes()
            if key not in seen:
                seen[key] = _corpus_metric(metric, [refs[i] for i in pick], [hyps[i] for i in pick])
            rows.append((lam, beta, seen[key]))
    grid = pd.DataFrame(rows, columns=["lam", "beta", "value"])
    sign = 1.0 if metric == "wer" else -1.0
    ranked = sorted(rows, key=lambda r: (sign * r[2], r[0], abs(r[1]), r[1]))
    lam, beta, value = ranked[0]
    return Tuning(lam=lam, beta=beta, value=value, metric=metric, grid=grid)


def parse_grid(grid: Sequence[float] | str, name: str = "grid") -> list[float]:
    """Grid values from ``"start:stop:step"`` (stop included), ``"0,0.5,1"``, or a list of numbers."""
    if isinstance(grid, str):
        text = grid.strip()
        try:
            if ":" in text:
                start, stop, step = (float(p) for p in text.split(":"))
                if step <= 0 or stop < start:
                    raise ValueError
                count = int(math.floor((stop - start) / step + 1e-9)) + 1
                values = [round(start + k * step, 10) for k in range(count)]
            else:
                values = [float(p) for p in text.split(",") if p.strip()]
        except ValueError:
            raise InputError(
                f"cannot read the {name} grid {grid!r}; write start:stop:step (e.g. 0:1:0.05) or a list (0,0.5,1)"
            ) from None
    else:
        values = [float(v) for v in grid]
    if not values or not all(math.isfinite(v) for v in values):
        raise InputError(f"the {name} grid {grid!r} is empty or not finite; give finite numbers")
    return list(dict.fromkeys(values))


# --- LM scores ---------------------------------------------------------------------------------


def score_hypotheses(
    texts: Sequence[str],
    model: Any,
    *,
    metric: str | None = None,
    lm_scores: str | os.PathLike[str] | None = None,
    resume: bool = False,
    force: bool = False,
    progress: bool | None = None,
    chunk_size: int = 256,
) -> tuple[Any, str]:
    """Score ``texts`` with :func:`pllscore.score_file`; returns (``lm``, ``n_tokens``) per text and the LM's metric.

    ``lm_scores``: the file the scores are written to (resumable); None scores in memory.
    ``n_tokens`` is the number of tokens the LM scored (total / mean per scored token).
    """
    import pandas as pd

    from pllscore.scorefile import score_file

    metrics = None
    if metric is not None:
        from pllscore.metrics import resolve_metrics

        chosen = resolve_metrics(metric)
        if len(chosen) != 1:
            raise InputError(f"rescoring uses one LM score; give one metric, not {', '.join(chosen)}")
        metrics = list(chosen)
    common: dict[str, Any] = dict(model=model, metrics=metrics, progress=progress, chunk_size=chunk_size)
    if lm_scores is None:
        if resume:
            raise InputError("--resume needs a file for the LM scores; give -o (or --lm-scores)")
        buffer = io.StringIO()
        summary = score_file(list(texts), None, stream=buffer, **common)
        buffer.seek(0)
        table = pd.read_csv(buffer, sep="\t")  # the numbers are what is read back (an empty cell is NaN)
    else:
        summary = score_file(list(texts), lm_scores, resume=resume, force=force, **common)
        table = _read_scores(os.fspath(lm_scores))
    name = summary.metrics[0]
    if len(table) != len(texts) or table["row"].tolist() != list(range(len(texts))):
        raise InputError(f"the LM scores in {lm_scores!r} do not match the hypotheses; rerun with --force")
    total = table[name].to_numpy(np.float64)
    mean = table[f"{name}_mean"].to_numpy(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        scored = np.where(np.isfinite(total) & (mean != 0), np.rint(total / mean), 0).astype(np.int64)
    return pd.DataFrame({"lm": total, "n_tokens": scored}), name


def _read_scores(path: str) -> Any:
    import pandas as pd

    from pllscore.io.writers import output_format

    fmt = output_format(path)
    if fmt == "parquet":
        return pd.read_parquet(path)
    if fmt == "jsonl":
        return pd.read_json(path, lines=True)
    return pd.read_csv(path, sep="," if fmt == "csv" else "\t")


def rescore_frame(
    frame: Any,
    *,
    lam: float = 1.0,
    beta: float = 0.0,
    tune_on_dev: bool = False,
    lambda_grid: Sequence[float] | str = DEFAULT_LAMBDA_GRID,
    beta_grid: Sequence[float] | str = DEFAULT_BETA_GRID,
    eval_metric: str = "wer",
    utt_column: str = "utt_id",
    text_column: str = "hyp",
    score_column: str = "score",
    ref_column: str | None = "ref",
    split_column: str | None = None,
) -> tuple[Any, Tuning | None, dict[str, dict[str, float]]]:
    """Everything after the LM: combine, choose, and evaluate a scored table (no model needed).

    ``frame`` is a checked n-best table with ``lm`` and ``n_tokens``. With ``tune_on_dev``,
    ``lam`` and ``beta`` are tuned on the rows whose ``split_column`` is ``dev`` and applied to
    every row. Returns the table with ``combined`` and ``chosen``, the :class:`Tuning` (or None),
    and per split (``all``, or ``dev`` and ``test``) the first-pass (``before``) and rescored
    (``after``) WER or BLEU, the number of utterances and, for WER, the ``oracle`` WER; empty
    without ``ref_column``.
    """
    eval_metric = _check_eval(eval_metric)
    cols = dict(utt_column=utt_column, text_column=text_column)
    tuning = None
    if tune_on_dev:
        if ref_column is None:
            raise InputError("--tune needs references: name the reference column with --ref-column")
        if split_column is None:
            raise InputError("--tune needs a dev/test split: name a column whose values are dev or test")
        dev = frame[frame[split_column] == "dev"].reset_index(drop=True)
        if len(dev) == 0:
            raise InputError(f"--tune needs dev utterances: no row has split 'dev' in column {split_column!r}")
        tuning = tune(
            dev, lambda_grid, beta_grid, metric=eval_metric, score_column=score_column, ref_column=ref_column, **cols
        )
        lam, beta = tuning.lam, tuning.beta
    frame = choose(combine(frame, lam, beta, score_column=score_column), utt_column=utt_column)
    per_split: dict[str, dict[str, float]] = {}
    if ref_column is not None:
        parts = [("all", frame)] if split_column is None else [(s, frame[frame[split_column] == s]) for s in SPLITS]
        for name, part in parts:
            if len(part) == 0:
                continue
            part = part.reset_index(drop=True)
            first = choose(part, by=score_column, utt_column=utt_column, out="_first")
            s: dict[str, float] = {
                "n_utterances": int(part[utt_column].nunique()),
                "before": evaluate(first, chosen="_first", metric=eval_metric, ref_column=ref_column, **cols),
                "after": evaluate(part, metric=eval_metric, ref_column=ref_column, **cols),
            }
            if eval_metric == "wer":
                s["oracle"] = oracle_wer(part, ref_column=ref_column, **cols)
            per_split[name] = s
    return frame, tuning, per_split


# --- the whole run -----------------------------------------------------------------------------


@dataclass
class RescoreSummary:
    """What a :func:`rescore` run did: settings, counts and the evaluation per split."""

    model: str
    metric: str  # the LM's: a PLL metric, or "causal"
    lam: float
    beta: float
    tuned: bool
    n_utterances: int
    n_hypotheses: int
    n_texts: int  # distinct hypothesis texts scored
    eval_metric: str | None = None  # "wer" or "bleu"; None without references
    # per split ("all", or "dev" and "test"): {"n_utterances", "before", "after", and "oracle" for WER}
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    output: str | None = None
    lm_scores: str | None = None
    seconds: float = 0.0
    grid: Any = None  # the tuning grid (DataFrame: lam, beta, value on dev), when tuned

    def lines(self) -> list[str]:
        """The summary for the terminal, one line per split."""
        how = "tuned on dev" if self.tuned else "given"
        out = [
            f"rescored {self.n_hypotheses} hypotheses of {self.n_utterances} utterances with {self.model} "
            f"({self.metric}): lambda={self.lam:g} beta={self.beta:g} ({how}) in {self.seconds:.1f} s"
        ]
        for split, s in self.scores.items():
            if self.eval_metric == "wer":
                oracle = f", oracle {s['oracle']:.1%}" if "oracle" in s else ""
                text = f"WER {s['before']:.1%} -> {s['after']:.1%}{oracle}"
            else:
                text = f"BLEU {s['before']:.2f} -> {s['after']:.2f}"
            out.append(f"{split}: {text} (first pass -> rescored; {int(s['n_utterances'])} utterances)")
        if self.output:
            out.append(f"-> {self.output}")
        return out

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "grid"}
        return d


class RescoreResult(NamedTuple):
    """The rescored table (input columns, ``lm``, ``n_tokens``, ``combined``, ``chosen``) and its summary."""

    frame: Any
    summary: RescoreSummary


def rescore(
    nbest: Any,
    output: str | os.PathLike[str] | None = None,
    *,
    model: Any,
    metric: str | None = None,
    lam: float = 1.0,
    beta: float = 0.0,
    tune_on_dev: bool = False,
    lambda_grid: Sequence[float] | str = DEFAULT_LAMBDA_GRID,
    beta_grid: Sequence[float] | str = DEFAULT_BETA_GRID,
    eval_metric: str = "wer",
    utt_column: str = "utt_id",
    text_column: str = "hyp",
    score_column: str = "score",
    ref_column: str | None = None,
    split_column: str | None = None,
    format: str | None = None,
    input_format: str | None = None,
    lm_scores: str | os.PathLike[str] | None = None,
    resume: bool = False,
    force: bool = False,
    device: str = "auto",
    dtype: str | None = None,
    max_tokens: int | None = None,
    progress: bool | None = None,
    chunk_size: int = 256,
    stream: Any = None,
) -> RescoreResult:
    """Rescore an n-best table with a masked or causal LM and choose the best hypothesis per utterance.

    Args:
        nbest: a csv/tsv/jsonl/parquet file or a DataFrame, one hypothesis per row.
        output: where the rescored table goes (format from its extension or ``format``); None
            writes nothing (``stream``: write TSV there instead).
        model: a Hub name, a local folder or a loaded scorer (masked or causal).
        metric: a masked LM's PLL metric (default: the scorer's, word-l2r); None for a causal LM.
        lam, beta: the weights of the LM score and of the token count (ignored with ``tune_on_dev``).
        tune_on_dev: grid-search ``lam`` and ``beta`` on the rows whose split is ``dev`` (needs
            references and ``split_column``, default ``split``) and apply the best to every row.
        lambda_grid, beta_grid: ``"start:stop:step"`` (stop included), ``"0,0.5,1"`` or lists.
        eval_metric: ``"wer"`` (jiwer, corpus level) or ``"bleu"`` (sacrebleu, corpus level).
        utt_column, text_column, score_column: the utterance id, hypothesis and first-pass score columns.
        ref_column: the reference column (default: ``ref`` when the table has it); enables evaluation.
        split_column: a dev/test column; the summary reports each split.
        lm_scores: the intermediate file of LM scores (default ``OUTPUT.lm.parquet``; in memory without output).
        resume, force: continue an interrupted run, or overwrite earlier outputs.
        device, dtype, max_tokens: passed to :func:`pllscore.load` when ``model`` is a name.
        chunk_size: hypotheses scored and committed at a time.

    Returns:
        :class:`RescoreResult` ``(frame, summary)``.
    """
    import pandas as pd

    from pllscore.scorer import as_scorer

    t0 = time.perf_counter()
    out_name = None if output is None else os.fspath(output)
    eval_metric = _check_eval(eval_metric)
    if tune_on_dev and split_column is None:
        split_column = "split"
    if out_name is not None:
        from pllscore.io.writers import output_format

        fmt = output_format(out_name, format)
        if lm_scores is None:
            lm_scores = f"{out_name}.lm.parquet"
        if os.path.abspath(os.fspath(lm_scores)) == os.path.abspath(out_name):
            raise InputError(
                f"the LM scores cannot go to the output {out_name!r} itself; give --lm-scores another path"
            )
        if os.path.exists(out_name) and not (resume or force):
            raise InputError(f"output {out_name!r} already exists; pass --force to overwrite it")
        if not isinstance(nbest, pd.DataFrame) and os.path.abspath(out_name) == os.path.abspath(os.fspath(nbest)):
            raise InputError(f"output {out_name!r} is the input file; choose another output path")
    frame, ref = read_nbest(
        nbest,
        utt_column=utt_column,
        text_column=text_column,
        score_column=score_column,
        ref_column=ref_column,
        split_column=split_column,
        fmt=input_format,
    )
    if tune_on_dev:  # what tuning needs fails now, not after the scoring
        if ref is None:
            raise InputError("--tune needs references: name the reference column with --ref-column")
        if not (frame[split_column] == "dev").any():
            raise InputError(f"--tune needs dev utterances: no row has split 'dev' in column {split_column!r}")
        lambda_grid, beta_grid = parse_grid(lambda_grid, "lambda"), parse_grid(beta_grid, "beta")
    if ref is not None:  # a missing jiwer/sacrebleu fails now, not after the scoring
        _needs("jiwer" if eval_metric == "wer" else "sacrebleu", eval_metric.upper())

    scorer = as_scorer(model, device=device, dtype=dtype, max_tokens=max_tokens)
    texts = list(dict.fromkeys(frame[text_column].tolist()))
    scores, lm_metric = score_hypotheses(
        texts, scorer, metric=metric, lm_scores=lm_scores, resume=resume, force=force,
        progress=progress, chunk_size=chunk_size,
    )  # fmt: skip
    where = pd.Index(texts).get_indexer(frame[text_column])
    frame["lm"] = scores["lm"].to_numpy()[where]
    frame["n_tokens"] = scores["n_tokens"].to_numpy()[where]

    frame, tuning, per_split = rescore_frame(
        frame, lam=lam, beta=beta, tune_on_dev=tune_on_dev, lambda_grid=lambda_grid, beta_grid=beta_grid,
        eval_metric=eval_metric, utt_column=utt_column, text_column=text_column, score_column=score_column,
        ref_column=ref, split_column=split_column,
    )  # fmt: skip
    summary = RescoreSummary(
        model=getattr(scorer, "name", str(model)),
        metric=lm_metric,
        lam=float(lam if tuning is None else tuning.lam),
        beta=float(beta if tuning is None else tuning.beta),
        tuned=tune_on_dev,
        n_utterances=int(frame[utt_column].nunique()),
        n_hypotheses=len(frame),
        n_texts=len(texts),
        eval_metric=eval_metric if ref is not None else None,
        scores=per_split,
        output=out_name,
        lm_scores=None if lm_scores is None else os.fspath(lm_scores),
        grid=None if tuning is None else tuning.grid,
    )
    summary.seconds = time.perf_counter() - t0
    if out_name is not None:
        _write(frame, out_name, fmt, summary)
    elif stream is not None:
        stream.write(frame.to_csv(sep="\t", index=False, lineterminator="\n"))
    return RescoreResult(frame, summary)


def _write(frame: Any, path: str, fmt: str, summary: RescoreSummary) -> None:
    import json

    from pllscore.io.writers import meta_path, write_json, write_part
    from pllscore.provenance import now

    meta: Mapping[str, Any] = {"command": "rescore", "finished": now(), **summary.to_dict()}
    try:
        write_part(path, frame, fmt, metadata={"pllscore": json.dumps(meta, default=str)})
        write_json(meta_path(path), meta)
    except OSError as e:
        raise InputError(f"cannot write {path!r}: {e.strerror}; choose another output path") from None
