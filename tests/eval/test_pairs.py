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
