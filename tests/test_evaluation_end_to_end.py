"""blimp -> diagnose -> report on ../shared/models, through the command line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.conftest import SHARED, TINY_BERT, TINY_GPT2
from tests.test_cli import run

pytestmark = pytest.mark.shared
BLIMP = SHARED.parent / "data" / "blimp"


# enough for the pipeline and the accuracy floor below: on the first 250 pairs of each paradigm tiny-bert is right
# on 75.6%, as on all 1,000, and tiny-gpt2 on 78.8%; timing the whole paradigms is benchmarks/'s job, not the suite's
LIMIT, SAMPLE = 250, 40


def test_blimp_diagnose_report(tmp_path):
    bl, dg, rep = tmp_path / "blimp", tmp_path / "diag", tmp_path / "report.html"
    paradigms = ["--paradigm", "anaphor_number_agreement", "--paradigm", "determiner_noun_agreement_1"]
    done = run("blimp", "-m", str(TINY_BERT), "-m", str(TINY_GPT2), "--metric", "word-l2r", "--data", str(BLIMP),
               *paradigms, "--limit", str(LIMIT), "-o", str(bl), "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = pd.read_csv(bl / "summary.csv")
    assert summary[["model", "metric"]].values.tolist() == [["tiny-bert-cased", "word-l2r"], ["tiny-gpt2", "causal"]]
    pairs = pd.read_parquet(bl / "pairs.parquet")
    assert len(pairs) == 2 * 2 * LIMIT
    per_paradigm = pairs.groupby(["model", "paradigm"])["correct"].mean().groupby("model").mean() * 100
    assert summary.set_index("model")["Overall"].to_dict() == pytest.approx(per_paradigm.round(1).to_dict(), abs=0.051)
    # these two agreement paradigms are easy: even the tiny models are well above chance
    assert (summary["Overall"] > 60).all()

    done = run("diagnose", "-m", str(TINY_BERT), "-c", str(TINY_GPT2), "--data", "eventsadapt", "--sample", str(SAMPLE),
               "-o", str(dg))  # fmt: skip
    assert done.returncode == 0, done.stderr
    diag = pd.read_csv(dg / "summary.csv")
    assert set(diag["metric"]) == {"original", "word-l2r", "whole-word", "sentence-l2r", "causal"}
    assert (diag[diag["analysis"] == "length"]["n"] == SAMPLE).all()
    assert diag["r"].notna().all() and ((diag["ci_low"] <= diag["r"]) & (diag["r"] <= diag["ci_high"])).all()
    for fig in (
        "length.png",
        "agreement.png",
        "frequency-my-word.png",
        "frequency-dictionary.png",
        "frequency-none.png",
    ):
        assert (dg / fig).read_bytes().startswith(b"\x89PNG") and (dg / fig).stat().st_size > 5000
    assert json.loads((dg / "meta.json").read_text())["sentences"] == SAMPLE
    assert "OOV" in done.stdout

    done = run("report", str(bl), str(dg), "-o", str(rep))
    assert done.returncode == 0, done.stderr
    page = rep.read_text()
    assert page.count("data:image/png;base64,") == 5
    assert "BLiMP accuracy" in page and "Metric diagnostics" in page and "pllscore blimp" in page
    md = rep.with_suffix(".md").read_text()
    assert "| tiny-bert-cased | word-l2r |" in md and "r [95% CI]" in md


def test_report_errors(tmp_path):
    done = run("report", str(tmp_path), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 1 and "has no meta.json" in done.stderr
