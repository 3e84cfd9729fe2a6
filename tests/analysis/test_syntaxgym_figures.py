"""SyntaxGym figures (accuracy per suite; mean region surprisal by condition), ``pllscore syntaxgym --plot``
and the ``pllscore report`` section of a syntaxgym folder."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from pllscore.analysis.plotting.backend import pyplot
from pllscore.analysis.plotting.syntaxgym import (
    accuracy_figure,
    figure_name,
    plot_syntaxgym,
    read_tables,
    regions_figure,
    syntaxgym_pngs,
)
from pllscore.analysis.report import make_report
from tests.conftest import TINY_GPT2
from tests.eval.test_syntaxgym_formula import DATA
from tests.test_cli import run

PNG = b"\x89PNG\r\n\x1a\n"
COLUMNS = ["suite", "item_number", "condition_name", "region_number", "content", "surprisal_bits", "n_tokens", "model",
           "metric", "model_id"]  # fmt: skip


def _folder(tmp_path, with_predictions: bool = True):
    """A syntaxgym folder written by hand: two models on suite 'agr' (two items, two conditions, an empty
    region), one model on 'bare/one' (no predictions)."""
    rows = []
    for model, shift in (("m1", 0.0), ("m2", 1.0)):
        for item in (1, 2):
            for cond, verb in (("match", "is"), ("mismatch", "are")):
                bump = 3.0 if cond == "mismatch" else 0.0
                values = [(1, "The", 4.0 + item), (2, "", np.nan), (3, verb, 2.0 + bump + item + shift)]
                rows += [
                    ("agr", item, cond, n, c, v, int(bool(c)), model, "causal", f"{model}@x") for n, c, v in values
                ]
    rows += [("bare/one", 1, "only", 1, "Hello world", 7.5, 2, "m1", "causal", "m1@x")]
    regions = pd.DataFrame(rows, columns=COLUMNS)
    summary = pd.DataFrame(
        [("agr", "m1", "causal", 2, 1, 1.0, 1.0), ("agr", "m2", "causal", 2, 1, 0.5, 0.5),
         ("bare/one", "m1", "causal", 1, 0, np.nan, np.nan)],
        columns=["suite", "model", "metric", "items", "predictions", "accuracy", "prediction_0"],
    )  # fmt: skip
    if not with_predictions:
        summary["accuracy"] = summary["prediction_0"] = np.nan
    predictions = pd.DataFrame(
        [("agr", i, 0, "(3;%match%) < (3;%mismatch%)", True, m, "causal", f"{m}@x")
         for m in ("m1", "m2") for i in (1, 2)],
        columns=["suite", "item_number", "prediction_id", "formula", "result", "model", "metric", "model_id"],
    )  # fmt: skip
    regions.to_csv(tmp_path / "regions.csv", index=False)
    predictions.to_csv(tmp_path / "predictions.csv", index=False)
    summary.to_csv(tmp_path / "summary.csv", index=False)
    run_record = {"command": "pllscore syntaxgym agr.json", "date": "2026-11-25", "versions": {"pllscore": "0"},
                  "model": {"name": "m1", "model_id": "m1@x"}}  # fmt: skip
    (tmp_path / "meta.json").write_text(json.dumps({"kind": "syntaxgym", "suites": [], "runs": [run_record]}))
    return tmp_path


def test_region_figure_draws_the_mean_over_items_per_condition_one_panel_per_model(tmp_path):
    regions, _ = read_tables(_folder(tmp_path))
    assert regions.loc[regions["region_number"] == 2, "content"].eq("").all()  # empty contents read as ""
    fig = regions_figure(regions, "agr")
    try:
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert [ax.get_title(loc="left") for ax in axes] == ["agr: m1, 2 items", "agr: m2, 2 items"]
        for ax, shift in zip(axes, (0.0, 1.0)):
            lines = {c.get_label(): c.lines[0].get_ydata() for c in ax.containers}  # the errorbars' data lines
            assert list(lines) == ["match", "mismatch"]
            # region 1: 4 + mean(1, 2); region 2 is empty (NaN: no point); region 3: 2 + bump + 1.5 + shift
            np.testing.assert_allclose(lines["match"], [5.5, np.nan, 3.5 + shift])
            np.testing.assert_allclose(lines["mismatch"], [5.5, np.nan, 6.5 + shift])
            labels = [t.get_text() for t in ax.get_xticklabels()]
            assert labels == ["1\nThe", "2\n(empty)", "3\nis / are"]
    finally:
        pyplot().close(fig)


def test_accuracy_figure_has_a_bar_per_suite_and_model(tmp_path):
    _, summary = read_tables(_folder(tmp_path))
    fig = accuracy_figure(summary)
    try:
        (ax,) = fig.axes
        heights = {p.get_gid(): [] for p in ax.patches}
        for p in ax.patches:
            heights[p.get_gid()].append(p.get_height())
        assert heights == {"acc-0": [1.0, 0.0], "acc-1": [0.5, 0.0]}  # 'bare/one' has no accuracy: drawn as 0, n/a
        assert "n/a" in [t.get_text() for t in ax.texts]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["agr\n(2 items)", "bare/one\n(1 item)"]
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["m1", "m2"]
    finally:
        pyplot().close(fig)


def test_pngs_and_files_one_per_suite_plus_accuracy(tmp_path):
    folder = _folder(tmp_path)
    pngs = syntaxgym_pngs(*read_tables(folder))
    assert list(pngs) == ["accuracy.png", "regions-agr.png", "regions-bare_one.png"]
    assert all(data.startswith(PNG) for data in pngs.values())
    written = plot_syntaxgym(folder)
    assert [p.name for p in written] == list(pngs) and all(p.read_bytes().startswith(PNG) for p in written)
    assert figure_name("a b/c") == "regions-a_b_c.png"


def test_no_accuracy_figure_without_predictions(tmp_path):
    assert list(syntaxgym_pngs(*read_tables(_folder(tmp_path, with_predictions=False)))) == [
        "regions-agr.png",
        "regions-bare_one.png",
    ]


def test_report_section_embeds_the_figures_formulas_and_provenance(tmp_path):
    (tmp_path / "sg").mkdir()
    html_path, md_path = make_report([_folder(tmp_path / "sg")], tmp_path / "r.html")
    page = html_path.read_text()
    assert "<h2>SyntaxGym test suites" in page
    assert re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,', page) == [
        "accuracy",
        "regions of agr",
        "regions of bare/one",
    ]
    assert "<code>(3;%match%) &lt; (3;%mismatch%)</code>" in page
    assert "pllscore syntaxgym agr.json" in page and "models: m1 (m1@x)" in page
    md = md_path.read_text()
    assert "## SyntaxGym test suites (sg)" in md and "| agr      | m2      | causal   |" in md


def test_read_tables_names_a_missing_file(tmp_path):
    from pllscore.errors import InputError

    (tmp_path / "regions.csv").write_text(",".join(COLUMNS) + "\n")
    with pytest.raises(InputError, match="lacks summary.csv"):
        read_tables(tmp_path)


def test_cli_plot_then_report(tmp_path):
    if not TINY_GPT2.is_dir():
        pytest.skip("shared models not found")
    out, rep = tmp_path / "sg", tmp_path / "report.html"
    suites = [str(DATA / "agreement.json"), str(DATA / "npz_garden_path.json")]
    done = run("syntaxgym", *suites, "-m", str(TINY_GPT2), "-o", str(out), "--plot")
    assert done.returncode == 0, done.stderr
    names = ["accuracy.png", "regions-agreement.png", "regions-npz_garden_path.png"]
    assert f"figures written to {out}/ ({', '.join(names)})" in done.stderr
    assert all((out / n).read_bytes().startswith(PNG) for n in names)
    done = run("report", str(out), "-o", str(rep))
    assert done.returncode == 0, done.stderr
    page = rep.read_text()
    assert page.count("data:image/png;base64,") == 3 and "<h3>npz_garden_path</h3>" in page
    assert "pllscore syntaxgym" in page and "tiny-gpt2" in page


def test_cli_plot_needs_an_output_folder():
    done = run("syntaxgym", str(DATA / "agreement.json"), "-m", str(TINY_GPT2), "--plot")
    assert done.returncode == 1 and "--plot draws into the output folder" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
