"""SyntaxGym suites scored by the tiny shared models: every region value against an independent computation,
every prediction against SyntaxGym's own grammar, and the command end to end (tables, summary, provenance,
resume by suite, one-line errors)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import pllscore
from pllscore.eval.syntaxgym.suite import read_suite
from tests.conftest import TINY_BERT, TINY_GPT2
from tests.eval.test_syntaxgym_formula import DATA, reference
from tests.test_cli import run

SUITES = sorted(p for p in DATA.glob("*.json") if p.name != "published_formulas.json")
AGGREGATE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "median": np.median, "range": np.ptp}


def independent_regions(scorer, contents, metric, suite_metric):
    """Region values by hand: the sentence joined from the stripped contents, each region found in it by
    ``str.index``, each token (scored alone by the scorer, not through the table job) to the region of its
    first non-space character, ``-log2 p`` aggregated by the suite's metric."""
    sentence = " ".join(c.strip() for c in contents if c.strip())
    kwargs = {} if metric == "causal" else {"metric": metric}
    (score,) = scorer.score([sentence], **kwargs)
    ranges, at = [], 0
    for content in contents:
        text = content.strip()
        if not text:
            ranges.append(None)
            continue
        start = sentence.index(text, at)
        ranges.append((start, start + len(text)))
        at = start + len(text)
    bits = [[] for _ in contents]
    for token in score.tokens:
        first = next(i for i in range(token.span[0], len(sentence)) if not sentence[i].isspace())
        (region,) = [k for k, r in enumerate(ranges) if r is not None and r[0] <= first < r[1]]
        bits[region].append(-token.score / math.log(2))
    return [(0.0 if suite_metric == "sum" else math.nan) if not b else float(AGGREGATE[suite_metric](b)) for b in bits]


def check_against_independent(scorer, result, suites):
    for path in suites:
        suite = read_suite(path)
        for metric in result.regions["metric"].unique():
            rows = result.regions[(result.regions["suite"] == suite.name) & (result.regions["metric"] == metric)]
            preds = result.predictions[
                (result.predictions["suite"] == suite.name) & (result.predictions["metric"] == metric)
            ]
            for item in suite.items:
                values = {}
                for cond in item.conditions:
                    mine = rows[(rows["item_number"] == item.number) & (rows["condition_name"] == cond.name)]
                    expected = independent_regions(scorer, cond.contents, metric, suite.metric)
                    got = mine.sort_values("region_number")["surprisal_bits"].to_numpy()
                    np.testing.assert_allclose(got, expected, atol=1e-3, rtol=0, err_msg=f"{path.name} {cond.name}")
                    values.update({(cond.name, n): v for n, v in zip(cond.numbers, expected)})
                for i, formula in enumerate(suite.predictions):
                    (result_row,) = preds[(preds["item_number"] == item.number) & (preds["prediction_id"] == i)][
                        "result"
                    ]
                    theirs = reference(formula.text.replace("[", "(").replace("]", ")"))
                    assert bool(result_row) == bool(theirs(values)), (path.name, item.number, i)


def test_causal_region_surprisals_and_predictions_match_an_independent_computation(shared_gpt2):
    result = pllscore.syntaxgym(SUITES, shared_gpt2)
    assert sorted(result.regions["suite"].unique()) == sorted(p.stem for p in SUITES)
    assert set(result.regions["metric"]) == {"causal"}
    check_against_independent(shared_gpt2, result, SUITES)
    # hand-checked: tiny-gpt2 reads " ," as a lone "Ġ" (offsets 21-21) and ",": both go to the comma's region 3;
    # the empty comma region has no token (its mean is NaN)
    npz = result.regions[(result.regions["suite"] == "npz_garden_path") & (result.regions["item_number"] == 1)]
    comma = npz[npz["region_number"] == 3].set_index("condition_name")
    assert comma.loc["ambig_comma", "n_tokens"] == 2 and comma.loc["ambig_nocomma", "n_tokens"] == 0
    assert np.isnan(comma.loc["ambig_nocomma", "surprisal_bits"])
    the_woman = npz[(npz["region_number"] == 4) & (npz["condition_name"] == "ambig_comma")]
    assert the_woman["content"].item() == " the woman" and the_woman["n_tokens"].item() == 2
    gap = result.regions[(result.regions["suite"] == "filler_gap") & (result.regions["content"] == "")]
    assert (gap["surprisal_bits"] == 0).all() and (gap["n_tokens"] == 0).all()


def test_masked_region_surprisals_match_under_every_pll_metric(shared_bert):
    result = pllscore.syntaxgym(SUITES[:3], shared_bert, metrics="all")
    assert set(result.regions["metric"]) == set(pllscore.METRICS)
    check_against_independent(shared_bert, result, SUITES[:3])
    assert set(result.summary["metric"]) == set(pllscore.METRICS)


def test_summary_accuracy_is_the_share_of_items_whose_predictions_all_hold(shared_gpt2):
    result = pllscore.syntaxgym(DATA / "agreement.json", shared_gpt2)
    preds = result.predictions
    all_hold = preds.groupby("item_number")["result"].all().mean()
    (row,) = result.summary.itertuples()
    assert (row.suite, row.items, row.predictions) == ("agreement", 2, 3)
    assert row.accuracy == pytest.approx(all_hold)
    for i in range(3):
        assert getattr(row, f"prediction_{i}") == pytest.approx(preds[preds["prediction_id"] == i]["result"].mean())
    # (1;%match_sing%) = (1;%mismatch_sing%): the same first word in the same position, so always true
    assert preds[preds["prediction_id"] == 1]["result"].all()


def test_cli_end_to_end_tables_summary_provenance_and_resume_by_suite(tmp_path):
    if not TINY_GPT2.is_dir():
        pytest.skip("shared models not found")
    out = tmp_path / "out"
    done = run("syntaxgym", str(DATA / "agreement.json"), "-m", str(TINY_GPT2), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "agreement" in done.stdout and "accuracy" in done.stdout
    first = pd.read_csv(out / "regions.csv", keep_default_na=False)
    assert list(first.columns[:6]) == [
        "suite",
        "item_number",
        "condition_name",
        "region_number",
        "content",
        "surprisal_bits",
    ]
    assert len(first) == 2 * 4 * 7
    meta = json.loads((out / "meta.json").read_text())
    assert meta["kind"] == "syntaxgym"
    (record,) = meta["runs"]
    assert record["command"].startswith("pllscore syntaxgym") and "pllscore" in record["versions"]
    assert record["model"]["fingerprint"].startswith("sha256:") and record["model"]["kind"] == "causal"
    # a second run with one more suite: agreement is skipped, the new one is scored, both are in the tables
    done = run("syntaxgym", str(DATA / "agreement.json"), str(DATA / "filler_gap.json"), "-m", str(TINY_GPT2),
               "-o", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"suite agreement: already in {out}, skipped" in done.stderr
    assert "meta.string_predictions" in done.stderr  # filler_gap keeps its formula there, as published
    regions = pd.read_csv(out / "regions.csv", keep_default_na=False)
    assert set(regions["suite"]) == {"agreement", "filler_gap"}
    pd.testing.assert_frame_equal(regions[regions["suite"] == "agreement"].reset_index(drop=True), first)
    predictions = pd.read_csv(out / "predictions.csv")
    assert list(predictions.columns[:5]) == ["suite", "item_number", "prediction_id", "formula", "result"]
    assert len(predictions) == 2 * 3 + 1
    summary = pd.read_csv(out / "summary.csv")
    assert summary["suite"].tolist() == ["agreement", "filler_gap"]
    assert [line.split()[0] for line in done.stdout.splitlines()[1:]] == ["agreement", "filler_gap"]


def test_cli_masked_model_takes_the_pll_metrics(tmp_path):
    if not TINY_BERT.is_dir():
        pytest.skip("shared models not found")
    done = run("syntaxgym", str(DATA / "center_embed.json"), "-m", str(TINY_BERT), "--metric", "word-l2r",
               "--metric", "sentence-l2r", "-o", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    regions = pd.read_csv(tmp_path / "out" / "regions.csv")
    assert set(regions["metric"]) == {"word-l2r", "sentence-l2r"}
    assert sum("center_embed" in line for line in done.stdout.splitlines()) == 2


def _write(tmp_path, name, change):
    data = json.loads((DATA / "agreement.json").read_text())
    change(data)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_bad_input_is_one_line_and_the_good_suites_are_still_scored(tmp_path):
    if not TINY_GPT2.is_dir():
        pytest.skip("shared models not found")
    broken = tmp_path / "broken.json"
    broken.write_text('{"meta": {"name": "broken"}, "items": [}')
    unknown = _write(
        tmp_path,
        "unknown.json",
        lambda d: d.update(
            meta={"name": "unknown", "metric": "sum"}, predictions=[{"type": "formula", "formula": "(6;%nope%) > 0"}]
        ),
    )
    empty = _write(tmp_path, "empty.json", lambda d: d.update(meta={"name": "empty"}, items=[]))  # fmt: skip
    cases = [
        (broken, f"error: suite {broken} is not valid JSON (line 1, column 40): Expecting value"),
        (unknown, "error: suite unknown, item 1, prediction 0 ((6;%nope%) > 0): no condition 'nope' in the item"),
        (empty, "error: suite empty has no items"),
    ]
    for path, line in cases:
        done = run("syntaxgym", str(path), "-m", str(TINY_GPT2), "-q")
        assert done.returncode == 1
        assert done.stderr.strip().splitlines()[-1].startswith(line), done.stderr
        assert "Traceback" not in done.stderr and done.stdout == ""
    out = tmp_path / "out"
    done = run("syntaxgym", str(broken), str(DATA / "reflexive.json"), "-m", str(TINY_GPT2), "-o", str(out))
    assert done.returncode == 1
    assert [ln for ln in done.stderr.splitlines() if ln.startswith("error:")] == [cases[0][1]]
    assert set(pd.read_csv(out / "regions.csv")["suite"]) == {"reflexive"} and "reflexive" in done.stdout


def test_a_folder_of_other_results_is_refused(tmp_path):
    if not TINY_GPT2.is_dir():
        pytest.skip("shared models not found")
    (tmp_path / "meta.json").write_text(json.dumps({"kind": "blimp", "runs": []}))
    done = run("syntaxgym", str(DATA / "reflexive.json"), "-m", str(TINY_GPT2), "-o", str(tmp_path), "-q")
    assert done.returncode == 1 and "holds other results than syntaxgym's" in done.stderr
    done = run("syntaxgym", str(DATA / "reflexive.json"), "-m", str(TINY_GPT2), "-o", str(tmp_path), "-q", "--force")
    assert done.returncode == 0, done.stderr
