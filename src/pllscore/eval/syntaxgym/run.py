"""``pllscore syntaxgym``: SyntaxGym test suites scored in-process, with any model pllscore loads.

:func:`syntaxgym` reads and checks every suite (:mod:`~pllscore.eval.syntaxgym.suite`) before the model
is loaded, scores each suite's distinct sentences through the table job of ``pllscore score``
(:mod:`~pllscore.eval.syntaxgym.scores`: a causal LM conditions the first token on BOS, a masked LM is
scored by PLL under each ``metrics``; locally or on Ray actors), turns token surprisals into region values
(:mod:`~pllscore.eval.syntaxgym.regions`) and evaluates the predictions
(:mod:`~pllscore.eval.syntaxgym.formula`).

With an ``output`` folder it writes ``regions.csv``, ``predictions.csv``, ``summary.csv`` and ``meta.json``
(provenance: command, date, versions, the model's identity and settings, and which suite each model and
metric has done, by the suite file's content) after every suite. A run into a folder that already holds a
suite, done by the same model (by identity) with the same metric and settings from the same file content,
skips it: an interrupted run resumes by suite. A suite done otherwise is scored again and its rows replaced;
other rows (other suites, models or metrics) are kept. ``force`` starts the folder afresh.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.eval.folder import output_folder, read_meta
from pllscore.eval.settings import EvalSettings
from pllscore.eval.syntaxgym.scores import Local, OnRay, check_final_eos
from pllscore.eval.syntaxgym.suite import Suite, read_suite
from pllscore.eval.syntaxgym.tables import PREDICTION_COLUMNS, REGION_COLUMNS, read_regions, suite_tables, summary_table
from pllscore.jobs.table import check_metric_option
from pllscore.settings import ModelSettings, RaySettings, TextSettings

__all__ = ["ENGINES", "KIND", "SyntaxGymResult", "read_suites", "syntaxgym"]

KIND = "syntaxgym"
ENGINES = ("local", "ray")
PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class SyntaxGymResult:
    """``regions``, ``predictions`` and ``summary`` (:mod:`~pllscore.eval.syntaxgym.tables`): every row of the
    output folder when there is one, else this run's. ``notes``: what reading the suites noticed (one line
    each); ``skipped``: suites the folder already held; ``errors``: suites that could not be read (the others
    were scored)."""

    output: Path | None
    regions: Any
    predictions: Any
    summary: Any
    notes: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


def read_suites(paths: Sequence[PathLike]) -> tuple[list[Suite], list[str]]:
    """The suites that read and check, and one error line per suite that does not (a name given twice too)."""
    suites: list[Suite] = []
    errors: list[str] = []
    for path in paths:
        try:
            suite = read_suite(path)
        except InputError as e:
            errors.append(str(e))
            continue
        if any(s.name == suite.name for s in suites):
            errors.append(f"suite {suite.name} ({os.fspath(path)}) is named like an earlier one; rename one")
            continue
        suites.append(suite)
    return suites, errors


@dataclass
class _Folder:
    """The output folder's rows and record, updated and written after each suite."""

    path: Path | None
    regions: Any
    predictions: Any
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def open(cls, output: PathLike | None, force: bool) -> _Folder:
        import pandas as pd

        path = output_folder(output)
        empty = cls(path, pd.DataFrame(columns=REGION_COLUMNS), pd.DataFrame(columns=PREDICTION_COLUMNS))
        if path is None or force:
            return empty
        meta = read_meta(path)
        has_rows = (path / "regions.csv").exists()
        if (meta is not None and meta.get("kind") != KIND) or (has_rows and meta is None):
            raise InputError(f"{path} holds other results than syntaxgym's; use another output folder or --force")
        if meta is None or not has_rows:
            return empty
        regions = read_regions(path / "regions.csv")
        predictions = pd.read_csv(path / "predictions.csv", keep_default_na=False)
        return cls(path, regions, predictions, meta)

    def done(self, entry: dict[str, Any]) -> bool:
        return entry in self.meta.get("suites", [])

    def add(self, suite: Suite, regions: Any, predictions: Any, entries: list[dict[str, Any]]) -> None:
        """Replace the rows of ``suite`` by this model and metrics with the new ones."""
        import numpy as np
        import pandas as pd

        keys = {(e["model_id"], e["metric"]) for e in entries}

        def merged(frame: Any, new: Any) -> Any:
            ours = np.array([(m, k) in keys for m, k in zip(frame["model_id"], frame["metric"])], dtype=bool)
            kept = frame[~(frame["suite"].astype(str).eq(suite.name).to_numpy() & ours)]
            return pd.concat([f for f in (kept, new) if len(f)], ignore_index=True) if len(kept) else new

        self.regions = merged(self.regions, regions)
        self.predictions = merged(self.predictions, predictions)
        old = [e for e in self.meta.get("suites", []) if (e["suite"], e["model_id"], e["metric"]) not in
               {(suite.name, m, k) for m, k in keys}]  # fmt: skip
        self.meta["suites"] = old + entries

    def write(self, run: dict[str, Any]) -> None:
        from pllscore.io.parts import write_json, write_part

        if self.path is None:
            return
        write_part(self.path / "regions.csv", self.regions, "csv")
        write_part(self.path / "predictions.csv", self.predictions, "csv")
        write_part(self.path / "summary.csv", summary_table(self.regions, self.predictions), "csv")
        runs = [r for r in self.meta.get("runs", []) if r is not run]
        self.meta = {"kind": KIND, **{k: v for k, v in self.meta.items() if k != "kind"}, "runs": [*runs, run]}
        write_json(self.path / "meta.json", self.meta)


def _run_record(described: Any, settings: EvalSettings, notes: list[str], final_eos: bool) -> dict[str, Any]:
    from pllscore.io.provenance import command_line, now, versions

    ident = described.ident
    model = {**described.record, "model_id": ident.model_id, "fingerprint": ident.fingerprint}
    recorded = {**settings.record(), **({"final_eos": True} if final_eos else {})}
    return {"command": command_line(), "date": now(), "model": model, "settings": recorded,
            "notes": notes, "versions": versions()}  # fmt: skip


def syntaxgym(
    suites: PathLike | Sequence[PathLike],
    scorer: Any,
    *,
    output: PathLike | None = None,
    force: bool = False,
    progress: bool | None = None,
    metrics: str | Sequence[str] | None = None,
    convention: str | None = None,
    final_eos: bool = False,
    engine: str = "local",
    model: ModelSettings | None = None,
    text: TextSettings | None = None,
    ray: RaySettings | None = None,
) -> SyntaxGymResult:
    """Score SyntaxGym test suites (JSON files) with one model: region surprisals and prediction results.

    Args:
        suites: one suite file or several.
        scorer: a loaded scorer, or a model name or path (loaded with ``model``'s settings).
        output: a folder for ``regions.csv``, ``predictions.csv``, ``summary.csv`` and ``meta.json``; a suite
            it already holds from the same model, metric, settings and file content is skipped (resume).
        force: start ``output`` afresh instead of adding to it.
        progress: a progress bar on stderr (None: only when stderr is a terminal).
        metrics: masked LMs: the PLL metric(s) (default ``word-l2r``; ``"all"`` for the four); causal LMs
            are scored by their log-likelihood.
        convention: ``"paper"`` (default) reads each sentence as given; ``"lm-eval"`` as lm-evaluation-harness
            reads a continuation (``" " + sentence``: GPT-2's first token is ``"ĠThe"``). Token offsets still
            index into the sentence, so each token goes to the same region by the same rule.
        final_eos: causal and encoder-decoder LMs: add log P(EOS | sentence) (the tokenizer's EOS token, in bits)
            to the last non-empty region as one more of its tokens, as lm-zoo's GPT-2 image did (off by default:
            SyntaxGym's own semantics score nothing after the last token). An encoder-decoder scores the sentence
            given the empty source; its special tokens are in no region unless this adds its EOS.
        engine: ``"local"``, or ``"ray"``: suites spread over Ray actors that each load the model (``scorer``
            must then be a name or path every worker can read); the same scoring code either way.
        model, text: the settings of ``pllscore score`` (:class:`~pllscore.settings.ModelSettings`: how a
            named model is loaded; :class:`~pllscore.settings.TextSettings`: its ``metrics`` and ``convention``).
        ray: :class:`~pllscore.settings.RaySettings` of the Ray engine (``address``, ``workers``,
            ``cpus_per_worker``, ``gpus_per_worker``).

    Returns:
        A :class:`SyntaxGymResult`. A suite that cannot be read (broken JSON, an unknown condition in a
        formula, ...) is left out and named in ``errors``; when none can be read, :class:`InputError`.
    """
    paths = [suites] if isinstance(suites, (str, os.PathLike)) else list(suites)
    if not paths:
        raise InputError("no suite given")
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; choose local or ray")
    good, errors = read_suites(paths)
    if not good:
        raise InputError(errors[0] if len(errors) == 1 else "; ".join(errors))
    notes = [n for s in good for n in s.notes]
    settings = EvalSettings.merge(model, text, metrics=metrics, convention=convention, what="syntaxgym")
    folder = _Folder.open(output, force)
    scoring = Local(scorer, settings, progress) if engine == "local" else OnRay(scorer, settings, ray, len(good))
    try:
        described = scoring.describe()
        check_metric_option(settings.text.metrics, [(described.record["kind"], described.record["name"])])
        if final_eos:  # before any suite is scored
            check_final_eos(described.record["kind"], described.record["name"])
        run = _run_record(described, settings, notes, final_eos)
        regions, predictions, skipped = _score_suites(scoring, described, good, folder, run, final_eos)
    finally:
        scoring.close()
    return _result(folder, regions, predictions, notes, skipped, errors)


def _score_suites(scoring: Any, described: Any, suites: list[Suite], folder: _Folder, run: dict[str, Any],
                  final_eos: bool) -> tuple[list[Any], list[Any], list[str]]:  # fmt: skip
    """Score the suites ``folder`` lacks and write it after each; this run's tables and the suites skipped."""
    ident = described.ident
    same = {**run["settings"], "text": {k: v for k, v in run["settings"]["text"].items() if k != "metrics"}}
    shown = ident.model_id.rsplit("@", 1)[0]
    todo: list[tuple[Suite, list[dict[str, Any]]]] = []
    skipped = []
    for suite in suites:
        entries = [{"suite": suite.name, "sha256": suite.fingerprint, "model_id": ident.model_id, "metric": m,
                    "settings": same} for m in described.metrics]  # fmt: skip
        if all(folder.done(e) for e in entries):
            skipped.append(suite.name)
        else:
            todo.append((suite, entries))
    distinct = [(s.name, list(dict.fromkeys(s.sentences()))) for s, _ in todo]
    this_regions, this_predictions = [], []
    for (suite, entries), scores in zip(todo, scoring.scores(distinct, final_eos)):
        regions, predictions = suite_tables(suite, scores, shown, ident.model_id)
        folder.add(suite, regions, predictions, entries)
        folder.write(run)
        this_regions.append(regions)
        this_predictions.append(predictions)
    return this_regions, this_predictions, skipped


def _result(folder: _Folder, regions: list[Any], predictions: list[Any], notes: list[str], skipped: list[str],
            errors: list[str]) -> SyntaxGymResult:  # fmt: skip
    import pandas as pd

    if folder.path is not None:
        regions, predictions = [folder.regions], [folder.predictions]
    r = pd.concat(regions, ignore_index=True) if regions else pd.DataFrame(columns=REGION_COLUMNS)
    p = pd.concat(predictions, ignore_index=True) if predictions else pd.DataFrame(columns=PREDICTION_COLUMNS)
    return SyntaxGymResult(folder.path, r, p, summary_table(r, p), tuple(notes), tuple(skipped), tuple(errors))
