"""The whole run: LM scores, combination, choice, evaluation, summary and output (:func:`rescore`)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pllscore.errors import InputError
from pllscore.rescoring.choose import choose, combine
from pllscore.rescoring.evaluate import (
    DEFAULT_BETA_GRID,
    DEFAULT_LAMBDA_GRID,
    Tuning,
    check_eval_metric,
    evaluate,
    needs_package,
    oracle_wer,
    parse_grid,
    tune,
)
from pllscore.rescoring.nbest import SPLITS, read_nbest
from pllscore.rescoring.scores import score_hypotheses


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
    eval_metric = check_eval_metric(eval_metric)
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
    eval_metric = check_eval_metric(eval_metric)
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
        needs_package("jiwer" if eval_metric == "wer" else "sacrebleu", eval_metric.upper())

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
