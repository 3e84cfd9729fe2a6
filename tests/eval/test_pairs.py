"""Generic minimal pairs with groups."""

from __future__ import annotations

import pandas as pd
import pytest

from pllscore import InputError
from pllscore.eval.runs import run_pairs
from tests.fakes import FakeScorer


def test_group_accuracy(tmp_path):
    frame = pd.DataFrame(
        {"g": ["a1", "a2", "b1", "b2"], "b": ["x1", "x2", "y1", "y2"], "kind": ["agr", "agr", "order", "order"]}
    )
    frame.to_csv(tmp_path / "pairs.csv", index=False)
    fake = FakeScorer({"a1": -1, "x1": -2, "a2": -3, "x2": -2, "b1": -1, "y1": -1, "b2": 0, "y2": -4})
    res = run_pairs(tmp_path / "pairs.csv", [fake], good="g", bad="b", group="kind", output=tmp_path / "out")
    row = res.summary.iloc[0]
    assert (row["Overall"], row["agr"], row["order"]) == (50.0, 50.0, 50.0)  # b1 = y1 is a tie: wrong
    assert res.pairs["correct"].tolist() == [True, False, False, True]
    assert (tmp_path / "out" / "groups.csv").exists()
    with pytest.raises(InputError, match="good column 'good' not in"):
        run_pairs(tmp_path / "pairs.csv", [fake], good="good", bad="b")


def test_a_pair_with_an_unscored_side_is_wrong_and_counted(tmp_path):
    # "a2" has no scored token (NaN total): it must not win with a total of 0
    frame = pd.DataFrame({"g": ["a1", "a2", "b1"], "b": ["x1", "x2", "y1"], "kind": ["agr", "agr", "order"]})
    frame.to_csv(tmp_path / "pairs.csv", index=False)
    fake = FakeScorer({"a1": -1, "x1": -2, "a2": float("nan"), "x2": -2, "b1": float("nan"), "y1": float("nan")})
    res = run_pairs(tmp_path / "pairs.csv", [fake], good="g", bad="b", group="kind", output=tmp_path / "out")
    assert res.pairs["correct"].tolist() == [True, False, False]
    assert dict(zip(res.accuracy["kind"], res.accuracy["n_unscored"])) == {"agr": 1, "order": 1}
    assert pd.read_csv(tmp_path / "out" / "groups.csv")["n_unscored"].tolist() == [1, 1]
    assert res.summary.iloc[0]["Overall"] == round(100 / 3, 1)
    assert res.unscored()[["model", "metric", "n_unscored", "n"]].values.tolist() == [["fake", "word-l2r", 2, 3]]
    overall = run_pairs(tmp_path / "pairs.csv", [fake], good="g", bad="b").accuracy
    assert overall[["accuracy", "n", "n_unscored"]].values.tolist() == [[1 / 3, 3, 2]]


def test_cli_reports_unscored_pairs(tmp_path, monkeypatch):
    from tests.test_cli import run

    pd.DataFrame({"g": ["a1", "a2"], "b": ["x1", "x2"]}).to_csv(tmp_path / "pairs.csv", index=False)
    fake = FakeScorer({"a1": -1, "x1": -2, "a2": float("nan"), "x2": -2}, name="clm", kind="causal")
    monkeypatch.setattr("pllscore.scoring.api.load", lambda model, **kwargs: fake)
    done = run("pairs", str(tmp_path / "pairs.csv"), "--good", "g", "--bad", "b", "-m", "clm")
    assert done.returncode == 0, done.stderr
    assert "clm causal: 1 of 2 pairs have a sentence with no scored token (NaN score) and count as wrong" in done.stderr
    assert "50.0" in done.stdout
    pd.DataFrame({"g": ["a1"], "b": ["x1"]}).to_csv(tmp_path / "ok.csv", index=False)
    done = run("pairs", str(tmp_path / "ok.csv"), "--good", "g", "--bad", "b", "-m", "clm", "-q")
    assert done.returncode == 0 and "no scored token" not in done.stderr
