"""``pllscore diagnose`` as one call: score the data, run every diagnostic, write tables and figures."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pllscore.analysis import diagnostics as dx
from pllscore.engine.progress import model_stage, stage
from pllscore.errors import InputError
from pllscore.settings import TableSettings, TextSettings

__all__ = ["DATASETS", "Diagnosis", "run_diagnose"]

#: named data sets: file under shared/data and its text column
DATASETS = {
    "eventsadapt": ("eventsadapt/EventsAdapt.csv", "Sentence"),
    "brown": ("brown/brown_stimuli.csv", "sentence"),
}


def shared_data(relative: str) -> Path:
    """``shared/data/<relative>`` beside the working directory, else beside the source checkout."""
    for root in (Path("..") / "shared" / "data", Path(__file__).resolve().parents[3].parent / "shared" / "data"):
        if (root / relative).exists():
            return root / relative
    return Path("..") / "shared" / "data" / relative


@dataclass(frozen=True)
class Diagnosis:
    """All diagnostic results; ``summary`` has one row per (analysis, system)."""

    output: Path | None
    summary: Any
    oov: dict[str, Any]
    data: dict[str, Any]


def _sentences(data: str, column: str | None, sample: int | None, seed: int) -> tuple[list[str], str]:
    from pllscore.io.readers import read_input

    if data.lower() in DATASETS:
        relative, default_col = DATASETS[data.lower()]
        path = os.fspath(shared_data(relative))
        if not os.path.isfile(path):
            raise InputError(f"data set {data!r} expected at {path}; pass its file path instead")
    else:
        path, default_col = data, None
    table = read_input(path, column=column or default_col, skip_empty=True)
    texts = list(dict.fromkeys(table.texts))
    if sample is not None and sample < len(texts):
        import numpy as np

        pick = np.sort(np.random.default_rng(seed).choice(len(texts), size=sample, replace=False))
        texts = [texts[i] for i in pick]
    return texts, path


def run_diagnose(
    model: Any,
    *,
    data: str,
    causal_model: Any = None,
    column: str | None = None,
    sample: int | None = None,
    seed: int = 0,
    metrics: Any = "all",
    output: str | os.PathLike[str] | None = None,
    device: str = "auto",
    dtype: str | None = None,
    progress: bool | None = None,
    norms: str | Sequence[str] | None = None,
    unigram: Any = None,
    unigram_corpus: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> Diagnosis:
    """Sentence length, word frequency, agreement with the causal LM, and OOV ratio.

    Args:
        model: a masked LM (name, folder or scorer); every metric in ``metrics`` is diagnosed.
        data: ``"eventsadapt"``, ``"brown"``, or a text/table file (``column`` picks the text).
        causal_model: a causal LM, diagnosed too and used for the agreement analysis.
        sample: use this many distinct sentences, drawn at random with ``seed``.
        output: folder for ``summary.csv/.md/.tex``, per-analysis data, figures and ``meta.json``; it must be
            new or empty, or hold an earlier diagnose run and ``force`` be given. It is written whole into a
            fresh folder beside it, which then takes its place: no file of an earlier run is left in it.
        force: replace the earlier diagnose run in ``output``.
        norms: the length analysis is also run on these normalised scores (``length:<norm>`` rows;
            :data:`pllscore.results.norms.NORMS`); ``slor`` and ``norm-lp`` need ``unigram`` (a token-count
            table or ``"wordfreq"``) or ``unigram_corpus`` (counted with each model's tokenizer).
    """
    from pllscore.scoring.api import as_scorer

    chosen = _chosen_norms(norms, unigram, unigram_corpus)
    if output is not None:
        _check_output(Path(output), force)
    texts, source = _sentences(data, column, sample, seed)
    mlm = as_scorer(model, kind="masked", role="diagnose", device=device, dtype=dtype)
    clm = None
    if causal_model is not None:
        clm = as_scorer(causal_model, kind="causal", role="--causal-model", device=device, dtype=dtype)
    table = TableSettings(norm=chosen, unigram=unigram, unigram_corpus=unigram_corpus)
    n = 1 if clm is None else 2
    with stage(model_stage(1, n, Path(mlm.name).name, "sentences")):
        masked, mlm_unigram = score_table(mlm, texts, TextSettings(metrics=metrics), table, progress)
    causal, clm_unigram = None, None
    if clm is not None:
        with stage(model_stage(2, n, Path(clm.name).name, "sentences")):
            causal, clm_unigram = score_table(clm, texts, TextSettings(), table, progress)
    unis = [mlm_unigram, clm_unigram]
    summary, data_frames, n_words = _analyses(texts, mlm, clm, masked, causal, chosen, unis, progress)
    oovs = [{"model": s.name, **dx.oov_ratio(s.tokenizer, texts)} for s in (mlm, clm) if s is not None]
    out = None
    if output is not None:
        out = Path(output)
        extra: dict[str, Any] = {}
        if len(chosen) > 1:  # the norms and their unigram source, beside the rest
            extra = {"norms": list(chosen), "unigram": [u.describe() for u in unis if u is not None] or None}
        with _fresh_folder(out, force) as fresh:
            _write_outputs(fresh, summary, oovs, data_frames)
            _record(fresh, mlm, clm, source, len(texts), n_words, sample, seed, list(masked.metrics), extra)
    return Diagnosis(out, summary, oovs[0], data_frames)


def _check_output(out: Path, force: bool) -> None:
    """Refuse, before any scoring, an output that is a file, a non-empty folder without ``force``, or a folder
    that holds something else than a diagnose run (never replaced, even with ``force``)."""
    if not out.exists():
        return
    where = os.fspath(out)
    if not out.is_dir():
        raise InputError(f"output {where!r} is a file; give a folder for the tables and figures")
    if not any(out.iterdir()):
        return
    if not force:
        raise InputError(f"output folder {where!r} is not empty; pass --force to replace it, or choose another folder")
    try:
        kind = json.loads((out / "meta.json").read_text()).get("kind")
    except (OSError, ValueError, AttributeError):
        kind = None
    if kind != "diagnose":
        raise InputError(
            f"output folder {where!r} holds other files than a diagnose run's; --force replaces only a diagnose run, "
            "choose another folder"
        )


@contextlib.contextmanager
def _fresh_folder(out: Path, force: bool) -> Iterator[Path]:
    """A new folder beside ``out`` to write into; once written whole, it takes the place of ``out`` (an earlier run
    there, checked by :func:`_check_output`, is removed). Where writing fails, ``out`` is left as it was."""
    _check_output(out, force)  # again: another process may have written there while this one scored
    from pllscore.io.parts import replacing

    with replacing(out) as fresh:
        yield fresh


def score_table(
    scorer: Any, texts: list[str], text: TextSettings, table: TableSettings, progress: bool | None
) -> tuple[Any, Any]:
    """The results of ``texts`` and the unigram model of ``table``'s norms (None when no norm needs one), through
    the table job of ``pllscore score``: the same metrics, checks, unigram model and convention."""
    from pllscore.io.readers import read_input
    from pllscore.jobs.table import ScoreOptions

    prepared = ScoreOptions.from_settings(text, table, scorer.long).prepare(scorer)
    return prepared.table(read_input(texts)).score(0, len(texts), progress=progress), prepared.unigram


def _chosen_norms(norms: str | Sequence[str] | None, unigram: Any, unigram_corpus: Any) -> tuple[str, ...]:
    """The norms of the length analysis, ``sum`` first; checked against the unigram source before any scoring."""
    from pllscore.results.norms import check_norms

    if unigram is not None and unigram_corpus is not None:
        raise InputError("give either --unigram or --unigram-corpus, not both")
    chosen = check_norms(norms, unigram if unigram is not None else unigram_corpus)
    return ("sum", *(n for n in chosen if n != "sum"))


def _analyses(
    texts: list[str],
    mlm: Any,
    clm: Any,
    masked: Any,
    causal: Any,
    norms: tuple[str, ...],
    unis: list[Any],
    progress: bool | None,
) -> tuple[Any, dict[str, Any], int]:
    """Run every diagnostic: the summary (one row per analysis and system), the data behind each, the word count."""
    import pandas as pd

    length_summary, length_data = dx.length(masked, causal, norms=norms, unigram=unis[0], causal_unigram=unis[1])
    words = dx.distinct_words(texts)
    freq_summary, freq_data = dx.word_frequency(words, mlm, clm, metrics=masked.metrics, progress=progress)
    parts = [length_summary, freq_summary]
    data_frames = {"length": length_data, "frequency": freq_data}
    if causal is not None:
        agree_summary, agree_data = dx.agreement(masked, causal)
        parts.append(agree_summary)
        data_frames["agreement"] = agree_data
    return pd.concat(parts, ignore_index=True), data_frames, len(words)


def _write_outputs(out: Path, summary: Any, oovs: list[dict[str, Any]], data_frames: dict[str, Any]) -> None:
    """The summary and OOV tables (csv, md, tex), each analysis's data as csv, and the figures."""
    import pandas as pd

    from pllscore.io.tables import write_tables

    write_tables(summary.round(4), out / "summary", digits=3)
    write_tables(pd.DataFrame(oovs), out / "oov", digits=3)
    for name, frame in data_frames.items():
        frame.to_csv(out / f"{name}.csv", index=False)
    _figures(out, data_frames)


def _figures(out: Path, data_frames: dict[str, Any]) -> None:
    """The paper's scatter figures: length (summed scores), word frequency per context, agreement."""
    from pllscore.analysis.plotting.diagnostics import scatter_panels

    length_data, freq_data = data_frames["length"], data_frames["frequency"]
    by_sum = length_data[length_data["norm"] == "sum"]
    scatter_panels(by_sum, "n_tokens", "surprisal", xlabel="tokens", ylabel="− score (nats)",
                   title="Sentence length vs negative score", path=out / "length.png")  # fmt: skip
    for ctx in dx.CONTEXTS:
        sub = freq_data[(freq_data["context"] == ctx) & (freq_data["zipf"] > 0)]
        scatter_panels(sub, "zipf", "logprob", xlabel="Zipf frequency (wordfreq)", ylabel="word score (nats)",
                       title=f"Word frequency vs word score, context '{dx.CONTEXTS[ctx].format('___')}'",
                       path=out / f"frequency-{ctx}.png")  # fmt: skip
    if "agreement" in data_frames:
        scatter_panels(data_frames["agreement"], "causal_logprob", "logprob", xlabel="causal LM score (nats)",
                       ylabel="masked LM score (nats)", title="Agreement with the causal LM",
                       path=out / "agreement.png")  # fmt: skip


def _record(
    out: Path,
    mlm: Any,
    clm: Any,
    source: str,
    n: int,
    n_words: int,
    sample: Any,
    seed: int,
    metrics: list[str],
    extra: dict[str, Any],
) -> None:
    """``meta.json``: what was run, on what, with which models and versions (and ``extra``, the norms asked)."""
    from pllscore.io.provenance import command_line, model_record, now, versions

    meta = {
        "kind": "diagnose",
        "command": command_line(),
        "date": now(),
        "data": source,
        "sentences": n,
        "distinct_words": n_words,
        "sample": sample,
        "seed": seed,
        "metrics": metrics,
        "models": [model_record(s) for s in (mlm, clm) if s is not None],
        "frequency_measure": dx.FREQUENCY_MEASURE,
        "contexts": dx.CONTEXTS,
        "versions": versions(),
        **extra,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
