"""The rescoring runs: :func:`rescore_frame` (a scored table, no model) and :func:`rescore` (the whole run)."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Any

from pllscore.errors import InputError
from pllscore.rescoring.choice import choose, combine
from pllscore.rescoring.evaluation import evaluate, oracle_wer, require
from pllscore.rescoring.lmscores import score_hypotheses
from pllscore.rescoring.nbest import SPLITS, read_checked
from pllscore.rescoring.settings import RescoreSettings
from pllscore.rescoring.summary import RescoreResult, RescoreSummary, write_rescored
from pllscore.rescoring.tuning import Tuning, tune

__all__ = ["rescore", "rescore_frame"]


def rescore_frame(frame: Any, **options: Any) -> tuple[Any, Tuning | None, dict[str, dict[str, float]]]:
    """Everything after the LM: combine, choose, and evaluate a scored table (no model needed).

    ``frame`` is a checked n-best table with ``lm_logprob`` and ``n_tokens``. ``options`` are the keywords of
    :func:`rescore` that act after the LM: ``lam`` (1.0), ``beta`` (0.0), ``tune_on_dev``, ``lambda_grid``,
    ``beta_grid``, ``eval_metric`` (``"wer"``), ``utt_column``, ``text_column``, ``score_column``,
    ``ref_column`` (default ``ref``) and ``split_column``. With ``tune_on_dev``, ``lam`` and ``beta``
    are tuned on the rows whose ``split_column`` is ``dev`` and applied to every row. Returns the table
    with ``combined`` and ``chosen``, the :class:`Tuning` (or None), and per split (``all``, or ``dev``
    and ``test``) the first-pass (``before``) and rescored (``after``) WER or BLEU, the number of
    utterances and, for WER, the ``oracle`` WER; empty without ``ref_column``.
    """
    settings = RescoreSettings.of(options, "rescore_frame")
    return _rescore_scored(frame, settings.checked(frame))


def _rescore_scored(frame: Any, settings: RescoreSettings) -> tuple[Any, Tuning | None, dict[str, dict[str, float]]]:
    """:func:`rescore_frame` with settings already :meth:`~RescoreSettings.checked` against ``frame``."""
    lam, beta, tuning, columns = settings.lam, settings.beta, None, settings.columns
    if settings.tune_on_dev:
        dev = frame[frame[columns.split] == "dev"].reset_index(drop=True)
        tuning = tune(dev, settings.lambda_grid, settings.beta_grid, metric=settings.eval_metric, **columns.keywords())
        lam, beta = tuning.lam, tuning.beta
    frame = choose(combine(frame, lam, beta, score_column=columns.score), utt_column=columns.utt)
    return frame, tuning, _evaluate_splits(frame, settings)


def _evaluate_splits(frame: Any, settings: RescoreSettings) -> dict[str, dict[str, float]]:
    """Per split, the first-pass and the rescored WER or BLEU (and the oracle WER); empty without references."""
    columns, metric = settings.columns, settings.eval_metric
    if columns.ref is None:
        return {}
    cols = columns.keywords()
    split = columns.split
    parts = [("all", frame)] if split is None else [(s, frame[frame[split] == s]) for s in SPLITS]
    per_split: dict[str, dict[str, float]] = {}
    for name, part in parts:
        if len(part) == 0:
            continue
        part = part.reset_index(drop=True)
        first = choose(part, by=columns.score, utt_column=columns.utt, out="_first")
        s: dict[str, float] = {
            "n_utterances": int(part[columns.utt].nunique()),
            "before": evaluate(first, chosen="_first", metric=metric, **cols),
            "after": evaluate(part, metric=metric, **cols),
        }
        if metric == "wer":
            s["oracle"] = oracle_wer(part, **cols)
        per_split[name] = s
    return per_split


def rescore(
    nbest: Any,
    output: str | os.PathLike[str] | None = None,
    *,
    model: Any,
    metric: str | None = None,
    format: str | None = None,
    input_format: str | None = None,
    lm_scores: str | os.PathLike[str] | None = None,
    resume: bool = False,
    force: bool = False,
    device: str = "auto",
    dtype: str | None = None,
    max_tokens: int | None = None,
    eos: bool = True,
    progress: bool | None = None,
    chunk_size: int = 256,
    stream: Any = None,
    **options: Any,
) -> RescoreResult:
    """Rescore an n-best table with a masked, causal or encoder-decoder LM and choose the best hypothesis per
    utterance.

    Args:
        nbest: a csv/tsv/jsonl/parquet file or a DataFrame, one hypothesis per row.
        output: where the rescored table goes (format from its extension or ``format``); None
            writes nothing (``stream``: write TSV there instead).
        model: a Hub name, a local folder or a loaded scorer (masked, causal or encoder-decoder).
        metric: a masked LM's PLL metric (default: the scorer's, word-l2r); None for a causal LM.
        **options: how the scored table is combined, chosen and evaluated (:func:`rescore_frame`'s keywords):
        lam, beta: the weights of the LM score and of the token count (ignored with ``tune_on_dev``).
        tune_on_dev: grid-search ``lam`` and ``beta`` on the rows whose split is ``dev`` (needs
            references and ``split_column``, default ``split``) and apply the best to every row.
        lambda_grid, beta_grid: ``"start:stop:step"`` (stop included), ``"0,0.5,1"`` or lists.
        eval_metric: ``"wer"`` (jiwer, corpus level) or ``"bleu"`` (sacrebleu, corpus level).
        utt_column, text_column, score_column: the utterance id, hypothesis and first-pass score columns.
        ref_column: the reference column (default: ``ref`` when the table has it); enables evaluation.
        split_column: a dev/test column; the summary reports each split.
        source_column: the source sentence of each utterance: every hypothesis is scored given it,
            log P(hypothesis | source) (machine translation with an encoder-decoder LM; a causal or masked LM
            reads it as the hypothesis's context).
        lm_scores: the intermediate file of LM scores (default ``OUTPUT.lm.parquet``; in memory without output).
        resume, force: continue an interrupted run, or overwrite earlier outputs.
        device, dtype, max_tokens, eos: passed to :func:`pllscore.load` when ``model`` is a name.
        chunk_size: hypotheses scored and committed at a time.

    Returns:
        :class:`RescoreResult` ``(frame, summary)``.
    """
    from pllscore.scoring.api import as_scorer

    t0 = time.perf_counter()
    out_name = None if output is None else os.fspath(output)
    settings = RescoreSettings.of(options, "rescore", ref=None)
    if settings.tune_on_dev and settings.columns.split is None:
        settings = replace(settings, columns=replace(settings.columns, split="split"))
    fmt, lm_scores = _check_output(out_name, nbest, format, lm_scores, resume=resume, force=force)
    frame, settings = _read_checked(nbest, settings, input_format)

    scorer = as_scorer(model, device=device, dtype=dtype, max_tokens=max_tokens, eos=eos)
    texts, lm_metric = _add_lm_scores(
        frame, scorer, settings.columns, metric=metric, lm_scores=lm_scores, resume=resume, force=force,
        progress=progress, chunk_size=chunk_size,
    )  # fmt: skip

    frame, tuning, per_split = _rescore_scored(frame, settings)
    summary = _summary(
        frame, settings, tuning, per_split, model=getattr(scorer, "name", str(model)), lm_metric=lm_metric,
        n_texts=len(texts), output=out_name, lm_scores=lm_scores,
    )  # fmt: skip
    summary.seconds = time.perf_counter() - t0
    _deliver(frame, summary, out_name, fmt, stream)
    return RescoreResult(frame, summary)


def _deliver(frame: Any, summary: RescoreSummary, out_name: str | None, fmt: str | None, stream: Any) -> None:
    """Write the rescored table to the output file (with its summary), else as TSV to ``stream``, if either is given."""
    if out_name is not None:
        write_rescored(frame, out_name, str(fmt), summary)
    elif stream is not None:
        from pllscore.io.delimited import tsv_text

        stream.write(tsv_text(frame, header=True))  # cells as they are, as in a .tsv output


def _summary(
    frame: Any,
    settings: RescoreSettings,
    tuning: Tuning | None,
    per_split: dict[str, dict[str, float]],
    *,
    model: str,
    lm_metric: str,
    n_texts: int,
    output: str | None,
    lm_scores: str | os.PathLike[str] | None,
) -> RescoreSummary:
    """What the run did: the weights used (given or tuned), the counts and the evaluation per split."""
    return RescoreSummary(
        model=model,
        metric=lm_metric,
        lam=float(settings.lam if tuning is None else tuning.lam),
        beta=float(settings.beta if tuning is None else tuning.beta),
        tuned=settings.tune_on_dev,
        n_utterances=int(frame[settings.columns.utt].nunique()),
        n_hypotheses=len(frame),
        n_texts=n_texts,
        eval_metric=settings.eval_metric if settings.columns.ref is not None else None,
        scores=per_split,
        output=output,
        lm_scores=None if lm_scores is None else os.fspath(lm_scores),
        grid=None if tuning is None else tuning.grid,
    )


def _read_checked(nbest: Any, settings: RescoreSettings, input_format: str | None) -> tuple[Any, RescoreSettings]:
    """The checked n-best table, and the settings with its reference column, checked for tuning against it.

    Everything that can fail without a model fails here, before the scoring: the table, what tuning
    needs, and a missing jiwer or sacrebleu.
    """
    frame, columns = read_checked(nbest, settings.columns, input_format)
    settings = replace(settings, columns=columns).checked(frame)
    if columns.ref is not None:
        require("jiwer" if settings.eval_metric == "wer" else "sacrebleu", settings.eval_metric.upper())
    return frame, settings


def _add_lm_scores(frame: Any, scorer: Any, columns: Any, **scoring: Any) -> tuple[list[Any], str]:
    """Score each distinct hypothesis text (with its source, when the table has one) once and give every row the
    ``lm_logprob`` and ``n_tokens`` of its text.

    ``scoring`` goes to :func:`score_hypotheses`. Returns the distinct texts (or (text, source) pairs) and the
    LM's metric.
    """
    import pandas as pd

    if columns.source is None:
        texts = list(dict.fromkeys(frame[columns.text].tolist()))
        scores, lm_metric = score_hypotheses(texts, scorer, **scoring)
        where = pd.Index(texts).get_indexer(frame[columns.text])
    else:
        keys = list(zip(frame[columns.text].tolist(), frame[columns.source].tolist()))
        texts = list(dict.fromkeys(keys))
        scores, lm_metric = score_hypotheses([t for t, _ in texts], scorer, sources=[s for _, s in texts], **scoring)
        where = pd.Index(texts).get_indexer(keys)
    frame["lm_logprob"] = scores["lm_logprob"].to_numpy()[where]
    frame["n_tokens"] = scores["n_tokens"].to_numpy()[where]
    return texts, lm_metric


def _check_output(
    out_name: str | None,
    nbest: Any,
    format: str | None,
    lm_scores: str | os.PathLike[str] | None,
    *,
    resume: bool,
    force: bool,
) -> tuple[str | None, str | os.PathLike[str] | None]:
    """The output's format and the LM scores' path (default ``OUTPUT.lm.parquet``), checked before any work.

    Without an output: no format, and the LM scores' path as given (None: kept in memory).

    Raises :class:`~pllscore.InputError` when the LM scores would overwrite the output, when the
    output exists without ``resume`` or ``force``, or when the output is the input file.
    """
    import pandas as pd

    from pllscore.io.writers import output_format

    if out_name is None:
        return None, lm_scores
    fmt = output_format(out_name, format)
    if lm_scores is None:
        lm_scores = f"{out_name}.lm.parquet"
    if os.path.abspath(os.fspath(lm_scores)) == os.path.abspath(out_name):
        raise InputError(f"the LM scores cannot go to the output {out_name!r} itself; give --lm-scores another path")
    if os.path.exists(out_name) and not (resume or force):
        raise InputError(f"output {out_name!r} already exists; pass --force to overwrite it")
    if not isinstance(nbest, pd.DataFrame) and os.path.abspath(out_name) == os.path.abspath(os.fspath(nbest)):
        raise InputError(f"output {out_name!r} is the input file; choose another output path")
    return fmt, lm_scores
