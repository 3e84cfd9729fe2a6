"""Turn ``blimp``, ``pairs``, ``diagnose``, ``syntaxgym`` and ``reading-times`` output folders into one HTML page
and a Markdown summary.

The HTML is self-contained (figures embedded as base64 PNG) and reads like a results
section: each folder becomes a section with its tables, figures, and the commands and
library versions that made it.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.results.columns import pair_columns_now

__all__ = ["make_report"]

_CSS = """
body { font-family: -apple-system, Segoe UI, Helvetica, Arial, sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #1b9e77; padding-bottom: .2em; } h2 { margin-top: 2em; color: #1b6e57; }
table { border-collapse: collapse; font-size: 13px; margin: .8em 0; } th, td { padding: 3px 8px; text-align: right; }
th { border-bottom: 1px solid #444; } tr:nth-child(even) { background: #f5f5f5; }
td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; border: 1px solid #ddd; margin: .5em 0; }
code, pre { background: #f3f3f3; padding: 2px 4px; font-size: 12px; }
pre { padding: .6em; overflow-x: auto; } .note { color: #555; font-size: 13px; }
"""


def _meta(folder: Path) -> dict[str, Any]:
    meta = folder / "meta.json"
    if not folder.is_dir():
        raise InputError(
            f"{os.fspath(folder)!r} is not a folder; give folders written by pllscore "
            "blimp/pairs/diagnose/syntaxgym/reading-times"
        )
    if not meta.exists():
        raise InputError(
            f"{os.fspath(folder)!r} has no meta.json; "
            "is it the -o folder of pllscore blimp, pairs, diagnose, syntaxgym or reading-times (a finished run)?"
        )
    try:
        return dict(json.loads(meta.read_text()))
    except json.JSONDecodeError:
        raise InputError(f"{meta} is not valid JSON; rerun the command that wrote it") from None


def _img(path: Path) -> str:
    return _png(path.read_bytes(), path.stem)


def _png(data: bytes, alt: str) -> str:
    encoded = base64.b64encode(data).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{encoded}">'


def _table(frame: Any, digits: int = 1) -> str:
    return str(frame.to_html(index=False, na_rep="", float_format=lambda x: f"{x:.{digits}f}", border=0))


def _md(frame: Any, digits: int = 1) -> str:
    shown = frame.astype(object).where(frame.notna(), None)
    return str(shown.to_markdown(index=False, floatfmt=f".{digits}f", missingval=""))


def _provenance(runs: list[dict[str, Any]]) -> tuple[str, str]:
    items_html, items_md = [], []
    for run in runs:
        models = ", ".join(
            f"{m.get('name')}"
            + (f" @ {m['revision']}" if m.get("revision") else "")
            + (f" ({m['model_id']})" if m.get("model_id") else "")
            for m in run.get("models", [])
        )
        versions = ", ".join(f"{k} {v}" for k, v in run.get("versions", {}).items())
        cmd = run.get("command") or "(Python API)"
        items_html.append(
            f"<li><code>{html.escape(cmd)}</code><br><span class='note'>{html.escape(str(run.get('date')))}; "
            f"models: {html.escape(models)}; {html.escape(versions)}</span></li>"
        )
        items_md.append(f"- `{cmd}` ({run.get('date')}; models: {models}; {versions})")
    return "<ul>" + "".join(items_html) + "</ul>", "\n".join(items_md)


def _opening(
    title: str, folder: Path, note: str, table: Any, digits: int = 1, *, note_html: str | None = None
) -> tuple[list[str], list[str]]:
    """A section's heading, note and main table, in HTML and in Markdown (``note_html``: the note written in HTML)."""
    parts = [
        f"<h2>{title} <span class='note'>({html.escape(folder.name)})</span></h2>",
        f"<p class='note'>{html.escape(note) if note_html is None else note_html}</p>",
        _table(table, digits=digits),
    ]
    return parts, [f"## {title} ({folder.name})", "", note, "", _md(table, digits=digits), ""]


def _closing(parts: list[str], md: list[str], runs: list[dict[str, Any]]) -> tuple[str, str]:
    """The section's HTML and Markdown, with how ``runs`` were made at the end."""
    prov_html, prov_md = _provenance(runs)
    parts += ["<h3>How it was made</h3>", prov_html]
    md += ["How it was made:", "", prov_md, ""]
    return "\n".join(parts), "\n".join(md)


def _blimp_section(folder: Path, meta: dict[str, Any]) -> tuple[str, str]:
    import pandas as pd

    summary = pd.read_csv(folder / "summary.csv").dropna(axis=1, how="all")
    kind = meta["kind"]
    title = "BLiMP accuracy" if kind == "blimp" else "Minimal-pair accuracy"
    what = "Accuracy (%) = share of pairs with score(good) &gt; score(bad), ties counted wrong. " + (
        "A phenomenon's accuracy is the mean of its paradigms; Overall is the mean over all paradigms."
        if kind == "blimp"
        else ""
    )
    summary = summary.rename(columns=pair_columns_now(summary.columns))
    norms = [c.removeprefix("Overall_") for c in summary.columns if c.startswith("Overall_")]
    if norms:
        meant = "; ".join(f"{n}: {_NORM_MEANING.get(n, n)}" for n in norms)
        what += (
            f" Overall_&lt;norm&gt; counts a pair right when the good sentence's normalised score is higher ({meant}); "
            "the phenomena columns use the summed score."
        )
    what += _unscored_note(folder)
    parts, md = _opening(title, folder, html.unescape(what), summary, note_html=what)
    if kind == "blimp" and (folder / "paradigms.csv").exists():
        par = pd.read_csv(folder / "paradigms.csv")
        par = par.rename(columns=pair_columns_now(par.columns))
        values = ["accuracy", *(f"accuracy_{n}" for n in norms if f"accuracy_{n}" in par.columns)]
        wide = (
            par.pivot_table(index=["phenomenon", "paradigm"], columns=["model", "metric"], values=values, sort=False)
            * 100
        )
        wide.columns = [
            f"{m} {k}" + (f" {v.removeprefix('accuracy_')}" if v != "accuracy" else "") for v, m, k in wide.columns
        ]
        parts += ["<details><summary>Per paradigm</summary>", _table(wide.reset_index()), "</details>"]
    return _closing(parts, md, meta.get("runs", []))


#: what each normalised score is, for the report's notes
_NORM_MEANING = {
    "mean": "per scored token",
    "per_char": "per character",
    "slor": "SLOR, (score - unigram log-prob) per token",
    "norm_lp": "NormLP, score / -unigram log-prob",
}


def _unscored_note(folder: Path) -> str:
    """A sentence naming the pairs that had a NaN (unscored) side, or nothing."""
    import pandas as pd

    path = folder / "pairs.parquet"
    if not path.exists():
        return ""
    pairs = pd.read_parquet(path)
    pairs = pairs.rename(columns=pair_columns_now(pairs.columns))  # a folder written under the old names
    pairs["unscored"] = pairs["good_logprob"].isna() | pairs["bad_logprob"].isna()
    counts = pairs.groupby(["model", "metric"], sort=False)["unscored"].sum()
    counts = counts[counts > 0]
    if counts.empty:
        return ""
    each = "; ".join(f"{html.escape(str(m))} {html.escape(str(k))}: {int(n)}" for (m, k), n in counts.items())
    return f" Pairs with a sentence that had no scored token (NaN score), counted wrong: {each}."


def _diagnose_section(folder: Path, meta: dict[str, Any]) -> tuple[str, str]:
    import pandas as pd

    summary = pd.read_csv(folder / "summary.csv").rename(columns={"system": "metric"})  # "system": older folders
    summary["r [95% CI]"] = [
        f"{r:.2f} [{lo:.2f}, {hi:.2f}]" for r, lo, hi in zip(summary["r"], summary["ci_low"], summary["ci_high"])
    ]
    wide = summary.pivot_table(
        index="analysis", columns="metric", values="r [95% CI]", aggfunc="first", sort=False
    ).reset_index()
    ns = summary.groupby("analysis", sort=False)["n"].first().reset_index()
    wide = wide.merge(ns, on="analysis")
    oov = pd.read_csv(folder / "oov.csv") if (folder / "oov.csv").exists() else None
    text = (
        f"Data: {meta.get('data')} ({meta.get('sentences')} sentences, {meta.get('distinct_words')} distinct words). "
        "length: Pearson r between tokens and negative score (a good metric is not driven by length alone); "
        "frequency: r between a word's score in a neutral context and its frequency "
        f"({meta.get('frequency_measure')}); agreement: r between masked and causal sentence scores. "
        "Each cell: r [95% CI]."
    )
    parts, md = _opening("Metric diagnostics", folder, text, wide)
    if oov is not None:
        parts += ["<h3>Words split into several tokens</h3>", _table(oov, digits=3)]
        md += ["Words split into several tokens:", "", _md(oov, digits=3), ""]
    for png in sorted(folder.glob("*.png")):
        parts.append(_img(png))
    return _closing(parts, md, [meta])


def _syntaxgym_section(folder: Path, meta: dict[str, Any]) -> tuple[str, str]:
    """The summary table, the accuracy figure, and per suite its predictions and region figure."""
    from pllscore.analysis.plotting.syntaxgym import figure_name, read_tables, syntaxgym_pngs

    regions, summary = read_tables(folder)
    summary = summary.dropna(axis=1, how="all")
    pngs = syntaxgym_pngs(regions, summary)
    formulas = _formulas(folder)
    text = (
        "Accuracy = share of a suite's items whose predictions all hold (SyntaxGym's definition); prediction_i = "
        "share of items where prediction i holds. Region surprisal: -log2 p of the region's tokens in bits, "
        "aggregated by the suite's metric (sum by default); a masked LM's are PLL token surprisals under its metric, "
        "not incremental ones. Figures: mean over items per region and condition, bars = standard error."
    )
    parts, md = _opening("SyntaxGym test suites", folder, text, summary, digits=2)
    if "accuracy.png" in pngs:
        parts.append(_png(pngs["accuracy.png"], "accuracy"))
    for suite in dict.fromkeys(regions["suite"].astype(str)):
        listed = formulas.get(suite, [])
        parts.append(f"<h3>{html.escape(suite)}</h3>")
        md.append(f"### {suite}\n")
        if listed:
            parts.append(
                "<ol start='0'>" + "".join(f"<li><code>{html.escape(f)}</code></li>" for f in listed) + "</ol>"
            )
            md += [f"{i}. `{f}`" for i, f in enumerate(listed)] + [""]
        parts.append(_png(pngs[figure_name(suite)], f"regions of {suite}"))
    runs = [{**r, "models": [r["model"]] if r.get("model") else []} for r in meta.get("runs", [])]
    return _closing(parts, md, runs)


def _reading_times_section(folder: Path, meta: dict[str, Any]) -> tuple[str, str]:
    """The fits table and the two figures of a ``pllscore reading-times`` folder."""
    from pllscore.analysis.plotting.reading_times import read_tables, reading_times_pngs

    words, fits = read_tables(folder)
    pngs = reading_times_pngs(words, fits)
    text = (
        "ΔLL = held-out log-likelihood per word (nats) that surprisal and its spillover add to a baseline of word "
        "length and frequency (cross-validated by text), ± standard error; coef = the full model's in-sample partial "
        "coefficient of surprisal (ms per bit, the other predictors held constant)."
    )
    parts, md = _opening("Reading times", folder, text, fits, digits=4)
    parts += [_png(data, name) for name, data in pngs.items()]
    return _closing(parts, md, [meta])


def _formulas(folder: Path) -> dict[str, list[str]]:
    """Each suite's prediction formulas, by prediction_id (from predictions.csv)."""
    import pandas as pd

    path = folder / "predictions.csv"
    if not path.exists():
        return {}
    frame = pd.read_csv(path, keep_default_na=False, usecols=["suite", "prediction_id", "formula"])
    first = frame.drop_duplicates(["suite", "prediction_id"]).sort_values("prediction_id", kind="stable")
    return {str(s): list(g["formula"].astype(str)) for s, g in first.groupby("suite", sort=False)}


def make_report(
    folders: Sequence[str | os.PathLike[str]], output: str | os.PathLike[str] = "report.html", *, force: bool = False
) -> tuple[Path, Path]:
    """Write ``output`` (HTML) and the same name with ``.md``; returns both paths.

    An existing ``output`` or its ``.md`` is refused (:class:`InputError`, before any folder is read) unless
    ``force``, which overwrites them."""
    if not folders:
        raise InputError(
            "no folders given; pass the -o folders of pllscore blimp, pairs, diagnose, syntaxgym or reading-times"
        )
    out = Path(output)
    if out.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"report {os.fspath(out)!r} should end in .html")
    if not force:
        there = [p for p in (out, out.with_suffix(".md")) if p.exists()]
        if there:
            raise InputError(
                f"{os.fspath(there[0])!r} exists; pass --force to overwrite the report, or choose another -o"
            )
    sections_html, sections_md = [], []
    bits = False
    for f in folders:
        folder = Path(f)
        meta = _meta(folder)
        kind = meta.get("kind")
        if kind in ("blimp", "pairs"):
            h, m = _blimp_section(folder, meta)
        elif kind == "diagnose":
            h, m = _diagnose_section(folder, meta)
        elif kind == "syntaxgym":
            h, m = _syntaxgym_section(folder, meta)
        elif kind == "reading-times":
            h, m = _reading_times_section(folder, meta)
        else:
            raise InputError(
                f"{folder}/meta.json is of kind {kind!r}; "
                "expected blimp, pairs, diagnose, syntaxgym or reading-times output"
            )
        sections_html.append(h)
        sections_md.append(m)
        bits = bits or kind == "syntaxgym"
    date = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>pllscore report</title>"
        f"<style>{_CSS}</style></head><body><h1>pllscore report</h1><p class='note'>Made {date} from "
        + ", ".join(f"<code>{html.escape(os.fspath(f))}</code>" for f in folders)
        + ". Scores are summed log-probabilities in nats: masked LMs by pseudo-log-likelihood under each metric "
        "(Kauf &amp; Ivanova, 2023), causal LMs by the chain rule"
        + ("; SyntaxGym region surprisals are -log2 p, in bits" if bits else "")
        + ".</p>"
        + "\n".join(sections_html)
        + "</body></html>\n"
    )
    md_path = out.with_suffix(".md")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
        md_path.write_text("# pllscore report\n\n" + "\n".join(sections_md), encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot write report {os.fspath(out)!r}: {e.strerror}") from None
    return out, md_path
