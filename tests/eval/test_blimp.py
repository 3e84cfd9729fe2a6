"""BLiMP arithmetic, hand-checked on a small synthetic folder in BLiMP's format."""

from __future__ import annotations

import json
import math

import pytest

from pllscore import InputError
from pllscore.eval.blimp import PHENOMENA, blimp_tables, load_blimp
from pllscore.eval.runs import run_blimp
from tests.fakes import FakeScorer

# paradigm -> (phenomenon, [(good score, bad score), ...])
PARADIGMS = {
    "p_island_a": ("island_effects", [(-1, -2), (-1, -2), (-3, -2), (-1, -2)]),  # 3/4 right
    "p_island_b": ("island_effects", [(-1, -1), (-2, -1)]),  # a tie and a loss: 0/2
    "p_npi": ("npi_licensing", [(-1, -5), (-1, -5), (-1, -5), (-1, -5), (-1, -5), (-9, -5)]),  # 5/6
}


@pytest.fixture
def blimp_dir(tmp_path):
    table = {}
    for uid, (phen, pairs) in PARADIGMS.items():
        with open(tmp_path / f"{uid}.jsonl", "w") as f:
            for k, (g, b) in enumerate(pairs):
                good, bad = f"{uid} good {k}.", f"{uid} bad {k}."
                table[good], table[bad] = g, b
                f.write(json.dumps({"sentence_good": good, "sentence_bad": bad, "UID": uid, "linguistics_term": phen,
                                    "field": "syntax", "pairID": str(k)}) + "\n")  # fmt: skip
    return tmp_path, table


def test_accuracy_ties_wrong_and_overall_is_paradigm_mean(blimp_dir):
    folder, table = blimp_dir
    scored = FakeScorer(table)
    from pllscore.eval.pairs import score_pairs

    pairs = load_blimp(folder)
    par, summary = blimp_tables(score_pairs(scored, pairs))
    acc = dict(zip(par["paradigm"], par["accuracy"]))
    assert acc == {"p_island_a": 0.75, "p_island_b": 0.0, "p_npi": 5 / 6}
    row = summary.iloc[0]
    assert row["island_effects"] == round(100 * (0.75 + 0.0) / 2, 1) == 37.5
    assert row["npi_licensing"] == round(100 * 5 / 6, 1) == 83.3
    assert row["Overall"] == round(100 * (0.75 + 0.0 + 5 / 6) / 3, 1) == 52.8  # not the pooled 8/12 = 66.7
    assert list(summary.columns) == ["model", "metric", "Overall", *PHENOMENA]
    assert math.isnan(row["binding"])


def test_each_distinct_sentence_scored_once_per_call(tmp_path):
    (tmp_path / "p.jsonl").write_text(
        "\n".join(
            json.dumps({"sentence_good": "A.", "sentence_bad": b, "UID": "p", "linguistics_term": "binding"})
            for b in ["B.", "C.", "B."]
        )
    )
    fake = FakeScorer({"A.": -1, "B.": -2, "C.": -3})
    run_blimp([fake], data=tmp_path, metrics=["original", "word-l2r"])
    assert sorted(fake.asked) == ["A.", "B.", "C."]


def test_several_models_and_runs_make_one_table(blimp_dir, tmp_path):
    folder, table = blimp_dir
    out = tmp_path / "out"
    a = FakeScorer(table, name="mlm", offset={"original": 0.0})
    run_blimp([a], data=folder, metrics=["original", "word-l2r"], output=out)
    b = FakeScorer(table, kind="causal", name="clm")
    res = run_blimp([b], data=folder, output=out)
    assert list(zip(res.summary["model"], res.summary["metric"])) == [
        ("mlm", "original"),
        ("mlm", "word-l2r"),
        ("clm", "causal"),
    ]
    again = run_blimp([b], data=folder, output=out)  # a rerun replaces its own rows, not adds
    assert len(again.summary) == 3
    for name in ("summary.csv", "summary.md", "summary.tex", "paradigms.csv", "pairs.parquet", "meta.json"):
        assert (out / name).stat().st_size > 0
    assert "\\begin{tabular}" in (out / "summary.tex").read_text()
    assert len(json.loads((out / "meta.json").read_text())["runs"]) == 3


def test_loader_errors_and_limit(blimp_dir, tmp_path):
    folder, _ = blimp_dir
    assert len(load_blimp(folder, ["p_npi"], limit=2)) == 2
    with pytest.raises(InputError, match="did you mean p_npi"):
        load_blimp(folder, ["p_np"])
    with pytest.raises(InputError, match="not found"):
        load_blimp(tmp_path / "nope")
    (folder / "broken.jsonl").write_text('{"sentence_good": "a"}\n')
    with pytest.raises(InputError, match="line 1 of .*broken.jsonl is missing field 'linguistics_term'"):
        load_blimp(folder, ["broken"])
