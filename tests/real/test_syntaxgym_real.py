"""``pllscore syntaxgym`` on a real model: Gemma-3-270m (GGUF, Q4_K_M) on the test suites of
tests/data/syntaxgym, through the command line.

Checked what holds whatever the model thinks: the tables are complete (a row per region of every
condition, a row per item and prediction), every prediction evaluated, accuracies in [0, 1], region
values finite (an empty region of a ``mean`` suite is NaN, as in SyntaxGym), and a sentence's region
surprisals add up to its surprisal from ``pllscore score`` (within 1e-3 bits), for the ``sum`` suites
and, weighting each region's mean by its tokens, the ``mean`` suite. The figures are drawn (``--plot``).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pllscore.eval.syntaxgym.suite import read_suite
from tests.real.conftest import TIMINGS, real_file
from tests.test_cli import run

DATA = Path(__file__).resolve().parents[1] / "data" / "syntaxgym"
SUITES = sorted(p for p in DATA.glob("*.json") if p.name != "published_formulas.json")
TOL_BITS = 1e-3


@pytest.fixture(scope="module")
def gemma_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The syntaxgym folder of Gemma on every suite, and ``pllscore score``'s table of the same sentences."""
    path = real_file("gemma3")
    out = tmp_path_factory.mktemp("syntaxgym-gemma")
    t0 = time.perf_counter()
    done = run("syntaxgym", *map(str, SUITES), "-m", str(path), "-o", str(out / "sg"), "-q", "--plot")
    TIMINGS.setdefault("gemma3", {})["syntaxgym_s"] = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr
    sentences = list(dict.fromkeys(s for p in SUITES for s in read_suite(p).sentences()))
    (out / "sentences.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    done = run("score", str(out / "sentences.txt"), "-m", str(path), "-o", str(out / "scores.csv"), "-q")
    assert done.returncode == 0, done.stderr
    return out / "sg", out / "scores.csv"


def test_tables_are_complete_and_every_prediction_evaluated(gemma_run: tuple[Path, Path]) -> None:
    folder, _ = gemma_run
    regions = pd.read_csv(folder / "regions.csv", keep_default_na=False, na_values={"surprisal_bits": [""]})
    predictions = pd.read_csv(folder / "predictions.csv", keep_default_na=False)
    summary = pd.read_csv(folder / "summary.csv")
    for path in SUITES:
        suite = read_suite(path)
        mine = regions[regions["suite"] == suite.name]
        expected = {(i.number, c.name, n) for i in suite.items for c in i.conditions for n in c.numbers}
        got = list(zip(mine["item_number"], mine["condition_name"], mine["region_number"]))
        assert len(got) == len(expected) and set(got) == expected, suite.name
        preds = predictions[predictions["suite"] == suite.name]
        assert len(preds) == len(suite.items) * len(suite.predictions), suite.name
        assert set(preds["result"].astype(str)) <= {"True", "False"}, suite.name
        row = summary[summary["suite"] == suite.name]
        assert len(row) == 1 and 0.0 <= float(row["accuracy"].iloc[0]) <= 1.0, suite.name
        assert int(row["items"].iloc[0]) == len(suite.items) and int(row["predictions"].iloc[0]) == len(
            suite.predictions
        )
    assert set(regions["model"]) == {"gemma-3-270m-q4_k_m.gguf"} and set(regions["metric"]) == {"causal"}
    empty = regions["n_tokens"] == 0
    assert np.isfinite(regions.loc[~empty, "surprisal_bits"]).all()
    assert (regions.loc[~empty, "surprisal_bits"] >= 0).all()
    names = ["accuracy.png", *(f"regions-{read_suite(p).name}.png" for p in SUITES)]
    assert all((folder / n).stat().st_size > 1000 for n in names)


def test_region_surprisals_add_up_to_the_sentence_surprisal_of_pllscore_score(gemma_run: tuple[Path, Path]) -> None:
    folder, scores_path = gemma_run
    regions = pd.read_csv(folder / "regions.csv", keep_default_na=False, na_values={"surprisal_bits": [""]})
    scores = pd.read_csv(scores_path, keep_default_na=False)
    bits = dict(zip(scores["text"], -scores["causal_logprob"].astype(float) / math.log(2)))
    checked = 0
    for path in SUITES:
        suite = read_suite(path)
        if suite.metric not in ("sum", "mean"):
            continue
        mine = regions[regions["suite"] == suite.name]
        for item in suite.items:
            for cond in item.conditions:
                rows = mine[(mine["item_number"] == item.number) & (mine["condition_name"] == cond.name)]
                if suite.metric == "sum":
                    total = rows["surprisal_bits"].sum()
                else:  # the mean of each non-empty region, times its tokens
                    total = (rows["surprisal_bits"].fillna(0.0) * rows["n_tokens"]).sum()
                assert total == pytest.approx(bits[cond.sentence], abs=TOL_BITS), (suite.name, item.number, cond.name)
                checked += 1
    assert checked >= 20
