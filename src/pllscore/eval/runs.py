"""One call per evaluation command: load models, score, write tables, record provenance.

:func:`run_blimp` and :func:`run_pairs` are what ``pllscore blimp`` and ``pllscore pairs``
run. Writing into a folder that already holds results of the same kind adds rows, so several
models end up in one table. Rows are keyed by the model's identity (``model_id``: its name and
a fingerprint of its files, revision or weights, :func:`pllscore.io.provenance.model_key`) and the
metric: the same model and metric run again replace their old rows, while two different models
that share a folder name (``runA/checkpoint-1000``, ``runB/checkpoint-1000``) are two rows,
shown under names that tell them apart.

Rows of one folder must be comparable, so a folder remembers how its results were made (the
data's content fingerprint, paradigms, ``limit``, the good/bad columns, the counting
convention): a run made differently is refused with an :class:`InputError` unless
``force=True``, which replaces the folder's results with the new run's.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.eval.blimp import blimp_tables, load_blimp
from pllscore.eval.pairs import accuracy, norm_columns, score_pairs
from pllscore.io.tables import write_tables

__all__ = ["CONVENTION", "EvalResult", "run_blimp", "run_pairs"]

#: how pairs are counted; results counted another way are never merged into one table
CONVENTION = "summed log-probability; right when good > bad; a tie or an unscored (NaN) side is wrong"


@dataclass(frozen=True)
class EvalResult:
    """Tables of an evaluation run (all rows in the output folder, not only this run's)."""

    output: Path | None
    pairs: Any
    accuracy: Any
    summary: Any

    def unscored(self) -> Any:
        """Pairs with a NaN score on either side (counted wrong), per model and metric that has any.

        Columns ``model``, ``metric``, ``n_unscored`` and ``n`` (all its pairs).
        """
        frame = self.pairs.assign(n_unscored=self.pairs["good_score"].isna() | self.pairs["bad_score"].isna())
        counts = frame.groupby(["model", "metric"], sort=False)["n_unscored"].agg(n_unscored="sum", n="size")
        return counts[counts["n_unscored"] > 0].reset_index()


def _scorers(models: Sequence[Any], device: str, dtype: str | None, **load: Any) -> list[Any]:
    from pllscore.scoring.scorers import as_scorer

    if not models:
        raise InputError("no model given; pass --model (repeatable)")
    # anything that is not a name or a path is taken to be a scorer already
    return [as_scorer(m, device=device, dtype=dtype, **load) for m in models]


@dataclass(frozen=True)
class _Identity:
    model_id: str  # unique: "<label>@<12 hex of the fingerprint>"
    name: str  # absolute path of a local model, else its name
    fingerprint: str | None


def _identity(scorer: Any) -> _Identity:
    from pllscore.io.provenance import model_identity, model_key

    if not hasattr(scorer, "model"):  # a stand-in scorer without a model (tests): its name is all there is
        return _Identity(scorer.name, scorer.name, None)
    ident = model_identity(scorer)
    return _Identity(model_key(scorer), ident["name"], ident["fingerprint"])


def _display_names(names: dict[str, str]) -> dict[str, str]:
    """model_id -> the name shown in tables: the folder's basename (or Hub name) where that is unique.

    Models that share one get the shortest path suffix that tells them apart
    (``runA/checkpoint-1000``), or their ``model_id`` where the path is the same (a folder
    whose weights changed between runs).
    """
    by_label: dict[str, list[str]] = defaultdict(list)
    for mid in names:
        by_label[mid.rsplit("@", 1)[0]].append(mid)
    shown: dict[str, str] = {}
    for label, ids in by_label.items():
        if len(ids) == 1:
            shown[ids[0]] = label
            continue
        paths = [names[m].replace("\\", "/").rstrip("/").split("/") for m in ids]
        if len({"/".join(p) for p in paths}) < len(ids):
            shown.update({m: m for m in ids})
            continue
        for k in range(2, max(map(len, paths)) + 1):
            suffixes = ["/".join(p[-k:]) for p in paths]
            if len(set(suffixes)) == len(ids):
                break
        shown.update(zip(ids, suffixes))
    counts: dict[str, int] = defaultdict(int)
    for name in shown.values():
        counts[name] += 1
    return {m: (m if counts[name] > 1 else name) for m, name in shown.items()}


def _name_models(frame: Any) -> Any:
    """Set the readable ``model`` column of every row from ``model_id`` (unique per model)."""
    names = dict(zip(frame["model_id"], frame["model_name"]))
    frame["model"] = frame["model_id"].map(_display_names(names))
    return frame


def _score_all(
    scorers: list[Any],
    idents: list[_Identity],
    pairs: Any,
    metrics: Any,
    progress: bool | None,
    norms: tuple[str, ...] = ("sum",),
    unigram: Any = None,
    unigram_corpus: Any = None,
    convention: str = "paper",
    **columns: str,
) -> Any:
    import pandas as pd

    from pllscore.results.unigram import load_unigram

    frames = []
    for scorer, ident in zip(scorers, idents):
        uni = None
        if any(n in ("slor", "norm-lp") for n in norms):  # a corpus is counted with each model's own tokenizer
            uni = load_unigram(unigram, corpus=unigram_corpus, tokenizer=getattr(scorer, "tokenizer", None))
        scored = score_pairs(
            scorer, pairs, metrics=metrics, progress=progress, norms=norms, unigram=uni, convention=convention,
            **columns,
        )  # fmt: skip
        at = scored.columns.get_loc("model") + 1
        scored.insert(at, "model_id", ident.model_id)
        scored.insert(at + 1, "model_name", ident.name)
        frames.append(scored)
    return pd.concat(frames, ignore_index=True)


def _read_meta(output: Path) -> dict[str, Any] | None:
    meta = output / "meta.json"
    if not meta.exists():
        return None
    try:
        return dict(json.loads(meta.read_text()))
    except (json.JSONDecodeError, TypeError, ValueError):
        raise InputError(f"{meta} is not valid JSON; use another output folder or --force") from None


def _shown(value: Any) -> str:
    if isinstance(value, list):
        head = ", ".join(map(str, value[:3])) + (", ..." if len(value) > 3 else "")
        return f"[{head}] ({len(value)})"
    if isinstance(value, str) and value.startswith("sha256:"):
        return value[:19] + "... (by content)"
    return str(value)


def _check_folder(output: Path | None, kind: str, settings: dict[str, Any], force: bool) -> bool:
    """Whether the run adds to results already in ``output``; refuse one made differently from them.

    ``settings`` (data fingerprint, paradigms, limit, columns, convention) must equal the
    folder's; with ``force`` the folder's results are replaced instead.
    """
    if output is None or force:
        return False
    meta = _read_meta(output)
    has_rows = (output / "pairs.parquet").exists()
    if meta is not None and meta.get("kind") != kind:
        raise InputError(
            f"{output} holds {meta.get('kind') or 'other'} results, not {kind}; use another output folder or --force"
        )
    if not has_rows:
        return False
    old = (meta or {}).get("settings")
    if old is None:
        raise InputError(
            f"{output} holds results that do not record how they were made (an earlier pllscore); "
            "use another output folder or --force"
        )
    old = {"text_convention": "paper", **old}  # a folder written before the option: sentences as given
    for key in dict.fromkeys([*settings, *old]):  # a key only one side has (norms) differs too
        value = settings.get(key)
        if old.get(key) != value:
            raise InputError(
                f"{output} holds results made with {key}={_shown(old.get(key))}; this run has "
                f"{key}={_shown(value)}; use another output folder or --force"
            )
    return True


def _merge(output: Path | None, adding: bool, scored: Any) -> Any:
    """Add this run's rows to what the folder already holds (same model_id and metric: replaced)."""
    import pandas as pd

    if output is not None and adding:
        old = pd.read_parquet(output / "pairs.parquet")
        done = set(zip(scored["model_id"], scored["metric"]))
        keep = [(m, k) not in done for m, k in zip(old["model_id"], old["metric"])]
        scored = pd.concat([old[keep], scored], ignore_index=True)
    return _name_models(scored)


def _record(
    output: Path,
    kind: str,
    run: dict[str, Any],
    settings: dict[str, Any],
    scorers: list[Any],
    idents: list[_Identity],
    adding: bool,
) -> None:
    from pllscore.io.provenance import command_line, model_record, now, versions

    meta = _read_meta(output) if adding else None
    if meta is None:
        meta = {"kind": kind, "runs": []}
    meta["settings"] = settings
    run.update(
        command=command_line(),
        date=now(),
        models=[
            {**model_record(s), "model_id": i.model_id, "fingerprint": i.fingerprint} for s, i in zip(scorers, idents)
        ],
        versions=versions(),
    )
    meta["runs"].append(run)
    (output / "meta.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")


def _prepare(output: str | os.PathLike[str] | None) -> Path | None:
    if output is None:
        return None
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise InputError(f"output {os.fspath(out)!r} is a file; give a folder for the tables")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create output folder {os.fspath(out)!r}: {e.strerror}") from None
    return out


def run_blimp(
    models: Sequence[Any],
    *,
    data: str | os.PathLike[str],
    metrics: str | Sequence[str] | None = None,
    paradigms: Sequence[str] | None = None,
    limit: int | None = None,
    output: str | os.PathLike[str] | None = None,
    device: str = "auto",
    dtype: str | None = None,
    progress: bool | None = None,
    force: bool = False,
    norms: str | Sequence[str] | None = None,
    unigram: Any = None,
    unigram_corpus: str | os.PathLike[str] | None = None,
    compile: bool = False,
    share_prefixes: bool = True,
    convention: str = "paper",
) -> EvalResult:
    """Score BLiMP with each model (masked models under ``metrics``, causal ones by log-likelihood).

    Writes into ``output`` (if given): ``pairs.parquet`` (per-pair scores), ``paradigms.csv``
    (per-paradigm accuracy), ``summary.csv/.md/.tex`` (the paper's table) and ``meta.json``.
    A folder that holds results made with other data, paradigms or ``limit`` is refused
    (:class:`InputError`) unless ``force``, which replaces them.

    ``norms`` (:data:`pllscore.results.norms.NORMS`; ``sum`` is always there) adds per norm
    ``good_<norm>``, ``bad_<norm>``, ``correct_<norm>`` to the pairs, ``accuracy_<norm>`` to the
    paradigms and ``Overall_<norm>`` to the summary; ``slor`` and ``norm-lp`` need ``unigram``
    (a token-count table or ``"wordfreq"``) or ``unigram_corpus`` (counted with each model's
    tokenizer). A folder's rows must have been made with the same norms and unigram source.
    ``compile`` and ``share_prefixes`` are passed to :func:`pllscore.load`.

    ``convention`` says how a sentence is read: ``"paper"`` (default) as given, ``"lm-eval"`` as
    lm-evaluation-harness reads it (the continuation ``" " + sentence`` of an empty context after
    lm-eval's prefix token; see :mod:`pllscore.scoring.encoding`). A folder records it and refuses
    a run made with the other one.
    """
    from pllscore.io.provenance import content_fingerprint

    norms_, norm_record = _norm_settings(norms, unigram, unigram_corpus)
    conv_record = _convention_settings(convention)
    out = _prepare(output)
    pairs = load_blimp(data, paradigms, limit)
    used = sorted(paradigms) if paradigms else sorted(p.stem for p in Path(data).glob("*.jsonl"))
    settings = {
        "paradigms": used,
        "limit": limit,
        "data": "sha256:" + content_fingerprint([Path(data) / f"{uid}.jsonl" for uid in used]),
        "convention": CONVENTION,
        **conv_record,
        **norm_record,
    }
    adding = _check_folder(out, "blimp", settings, force)
    scorers = _scorers(models, device, dtype, compile=compile, share_prefixes=share_prefixes)
    idents = [_identity(s) for s in scorers]
    scored = _merge(
        out, adding, _score_all(scorers, idents, pairs, metrics, progress, norms_, unigram, unigram_corpus, convention)
    )
    paradigm_acc, summary = blimp_tables(scored)
    if out is not None:
        scored.to_parquet(out / "pairs.parquet", index=False)
        paradigm_acc.to_csv(out / "paradigms.csv", index=False)
        write_tables(summary, out / "summary")
        run = {"data": os.fspath(data), "paradigms": used, "limit": limit, "metrics": metrics, "force": force,
               "norms": list(norms_), "unigram": _source(unigram, unigram_corpus),
               "text_convention": convention}  # fmt: skip
        _record(out, "blimp", run, settings, scorers, idents, adding)
    return EvalResult(out, scored, paradigm_acc, summary)


def run_pairs(
    file: str | os.PathLike[str],
    models: Sequence[Any],
    *,
    good: str,
    bad: str,
    group: str | None = None,
    metrics: str | Sequence[str] | None = None,
    output: str | os.PathLike[str] | None = None,
    device: str = "auto",
    dtype: str | None = None,
    progress: bool | None = None,
    force: bool = False,
    norms: str | Sequence[str] | None = None,
    unigram: Any = None,
    unigram_corpus: str | os.PathLike[str] | None = None,
    compile: bool = False,
    share_prefixes: bool = True,
    convention: str = "paper",
) -> EvalResult:
    """Score any minimal-pair table (csv/tsv/jsonl/parquet); accuracy overall and per ``group``.

    Writes into ``output`` (if given): ``pairs.parquet``, ``groups.csv`` (per-group accuracy, when
    ``group`` is given) and ``summary.csv/.md/.tex`` (rows model x metric, columns Overall and
    each group, x 100). A folder that holds results made from another file (by content) or
    other good/bad columns is refused (:class:`InputError`) unless ``force``, which replaces them.
    The result's ``accuracy`` is per model, metric and group (overall without ``group``), with
    ``n`` and ``n_unscored``. ``norms``, ``unigram``, ``unigram_corpus``: as for :func:`run_blimp`
    (``Overall_<norm>`` columns in the summary; ``accuracy_<norm>`` in the accuracy tables).
    ``compile`` and ``share_prefixes`` are passed to :func:`pllscore.load`.
    ``convention``: as for :func:`run_blimp`.
    """
    from pllscore.io.provenance import content_fingerprint
    from pllscore.io.readers import read_table

    norms_, norm_record = _norm_settings(norms, unigram, unigram_corpus)
    conv_record = _convention_settings(convention)
    out = _prepare(output)
    table = read_table(file)
    for role, col in (("good", good), ("bad", bad), ("group", group)):
        if col is not None and col not in table.columns:
            raise InputError(
                f"{role} column {col!r} not in {os.fspath(file)}; its columns are: {', '.join(map(str, table.columns))}"
            )
    for col in (good, bad):
        empty = [i for i, t in enumerate(table[col]) if not isinstance(t, str) or not t.strip()]
        if empty:
            raise InputError(
                f"column {col!r} of {os.fspath(file)} has empty texts (rows {', '.join(map(str, empty[:10]))})"
            )
    settings = {
        "file": "sha256:" + content_fingerprint([file]),
        "good": good,
        "bad": bad,
        "convention": CONVENTION,
        **conv_record,
        **norm_record,
    }
    adding = _check_folder(out, "pairs", settings, force)
    scorers = _scorers(models, device, dtype, compile=compile, share_prefixes=share_prefixes)
    idents = [_identity(s) for s in scorers]
    scored = _merge(
        out,
        adding,
        _score_all(
            scorers, idents, table, metrics, progress, norms_, unigram, unigram_corpus, convention, good=good, bad=bad
        ),
    )
    overall = accuracy(scored, [])
    summary = overall.rename(columns={"accuracy": "Overall"}).drop(columns=["model_id", "n", "n_unscored"])
    summary = summary.rename(columns={f"accuracy_{n}": f"Overall_{n}" for n in norm_columns(overall)})
    for col in ["Overall", *(f"Overall_{n}" for n in norm_columns(overall))]:
        summary[col] *= 100
    groups = None
    if group is not None:
        groups = accuracy(scored, [group])
        wide = groups.pivot_table(index=["model", "metric"], columns=group, values="accuracy", sort=False) * 100
        summary = summary.merge(wide.reset_index(), on=["model", "metric"])
    summary = summary.round(1)
    if out is not None:
        scored.to_parquet(out / "pairs.parquet", index=False)
        if groups is not None:
            groups.to_csv(out / "groups.csv", index=False)
        elif (out / "groups.csv").exists():
            (out / "groups.csv").unlink()  # made by an earlier run with --group: it would not cover these rows
        write_tables(summary, out / "summary")
        run = {"file": os.fspath(file), "good": good, "bad": bad, "group": group, "metrics": metrics, "force": force,
               "norms": list(norms_), "unigram": _source(unigram, unigram_corpus),
               "text_convention": convention}  # fmt: skip
        _record(out, "pairs", run, settings, scorers, idents, adding)
    return EvalResult(out, scored, groups if groups is not None else overall, summary)


def _convention_settings(convention: str) -> dict[str, Any]:
    """What a folder records of the text convention (checked before any model is loaded)."""
    from pllscore.scoring.encoding import check_convention

    return {"text_convention": check_convention(convention)}


def _norm_settings(
    norms: str | Sequence[str] | None, unigram: Any, unigram_corpus: Any
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The norms asked for (checked; ``sum`` first) and what a folder records of them (nothing for sum alone).

    Checked before any model is loaded; a unigram table or corpus is recorded by its content.
    """
    from pllscore.io.provenance import content_fingerprint
    from pllscore.results.norms import check_norms

    if unigram is not None and unigram_corpus is not None:
        raise InputError("give either --unigram or --unigram-corpus, not both")
    given = unigram if unigram is not None else unigram_corpus
    chosen = check_norms(norms, given)
    norms_ = ("sum", *(n for n in chosen if n != "sum"))
    if norms_ == ("sum",):
        return norms_, {}
    record: dict[str, Any] = {"norms": list(norms_)}
    if any(n in ("slor", "norm-lp") for n in norms_):
        if isinstance(given, (str, os.PathLike)) and not str(given).startswith("wordfreq"):
            if not Path(given).is_file():
                what = "corpus" if unigram_corpus is not None else "table"
                raise InputError(f"unigram {what} {os.fspath(given)!r} not found")
            record["unigram"] = "sha256:" + content_fingerprint([given])
            record["unigram_source"] = "corpus" if unigram_corpus is not None else "table"
        else:
            record["unigram"] = given if isinstance(given, str) else repr(given)
    return norms_, record


def _source(unigram: Any, corpus: Any) -> str | None:
    if corpus is not None:
        return f"corpus {os.fspath(corpus)}"
    return None if unigram is None else os.fspath(unigram) if isinstance(unigram, (str, os.PathLike)) else repr(unigram)
