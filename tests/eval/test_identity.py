"""Evaluation tables key models by identity, and never merge runs made differently."""

from __future__ import annotations

import copy
import json

import pandas as pd
import pytest
import torch

from pllscore import InputError
from pllscore.eval.runs import run_blimp, run_pairs
from tests.fakes import FakeScorer

GOOD_BAD = {"p_agr": "anaphor_agreement", "p_isl": "island_effects"}


@pytest.fixture
def data(tmp_path):
    """Two paradigms of three pairs each, BLiMP's format; and the score of every sentence."""
    folder, table = tmp_path / "blimp", {}
    folder.mkdir()
    for uid, phen in GOOD_BAD.items():
        with open(folder / f"{uid}.jsonl", "w") as f:
            for k in range(3):
                good, bad = f"The cat {uid} sat {k}.", f"The cat {uid} sit {k}."
                table[good], table[bad] = -1.0, -2.0 - k
                rec = {"sentence_good": good, "sentence_bad": bad, "UID": uid, "linguistics_term": phen, "pairID": k}
                f.write(json.dumps(rec) + "\n")
    return folder, table


@pytest.fixture
def checkpoints(tmp_path, causal_models):
    """runA/checkpoint-1000 and runB/checkpoint-1000: the same tiny GPT-2, with different weights."""
    model, tok = causal_models["gpt2-bpe"]
    paths = [tmp_path / "runA" / "checkpoint-1000", tmp_path / "runB" / "checkpoint-1000"]
    for k, path in enumerate(paths):
        m = copy.deepcopy(model)
        with torch.no_grad():
            for p in m.parameters():
                p.mul_(1.0 + 0.5 * k)
        m.save_pretrained(path)
        tok.save_pretrained(path)
    return paths


def test_two_checkpoints_with_one_folder_name_are_two_models(data, checkpoints, tmp_path):
    folder, _ = data
    out = tmp_path / "out"
    run_blimp([str(checkpoints[0])], data=folder, output=out, device="cpu", progress=False)
    res = run_blimp([str(checkpoints[1])], data=folder, output=out, device="cpu", progress=False)
    assert res.summary["model"].tolist() == ["runA/checkpoint-1000", "runB/checkpoint-1000"]
    ids = res.pairs.drop_duplicates("model_id")["model_id"].tolist()
    assert len(ids) == 2 and all(i.startswith("checkpoint-1000@") for i in ids)
    assert len(res.pairs) == 2 * 6
    # both in one call: the same two rows, and a rerun replaces its own rows
    again = run_blimp([str(c) for c in checkpoints], data=folder, output=out, device="cpu", progress=False)
    assert again.summary["model"].tolist() == ["runA/checkpoint-1000", "runB/checkpoint-1000"]
    assert len(again.pairs) == 2 * 6
    assert sorted(pd.read_csv(out / "paradigms.csv")["model_id"].unique()) == sorted(ids)
    models = json.loads((out / "meta.json").read_text())["runs"][-1]["models"]
    assert sorted(m["model_id"] for m in models) == sorted(ids)
    assert "| runB/checkpoint-1000 | causal " in (out / "summary.md").read_text()


def test_a_run_with_another_limit_is_not_merged(data, tmp_path):
    folder, table = data
    out = tmp_path / "out"
    run_blimp([FakeScorer(table, name="a")], data=folder, limit=2, output=out)
    with pytest.raises(InputError, match=r"holds results made with limit=2; this run has limit=None; use another"):
        run_blimp([FakeScorer(table, name="b")], data=folder, output=out)
    with pytest.raises(InputError, match=r"holds results made with paradigms=\[p_agr, p_isl\] \(2\); this run"):
        run_blimp([FakeScorer(table, name="b")], data=folder, paradigms=["p_agr"], limit=2, output=out)
    (folder / "p_isl.jsonl").write_text((folder / "p_isl.jsonl").read_text().replace("sit 2", "sits 2"))
    table["The cat p_isl sits 2."] = -9.0
    with pytest.raises(InputError, match=r"holds results made with data=sha256:\w{12}\.\.\. \(by content\); this"):
        run_blimp([FakeScorer(table, name="b")], data=folder, limit=2, output=out)
    assert pd.read_parquet(out / "pairs.parquet")["model"].unique().tolist() == ["a"]  # untouched
    res = run_blimp([FakeScorer(table, name="b")], data=folder, output=out, force=True)
    assert res.summary["model"].tolist() == ["b"] and len(res.pairs) == 6
    meta = json.loads((out / "meta.json").read_text())
    assert len(meta["runs"]) == 1 and meta["settings"]["limit"] is None


def test_pairs_from_another_file_are_not_merged(tmp_path):
    table = {"a": -1.0, "b": -2.0, "c": -3.0}
    pd.DataFrame({"g": ["a"], "b": ["b"]}).to_csv(tmp_path / "one.csv", index=False)
    pd.DataFrame({"g": ["a"], "b": ["c"]}).to_csv(tmp_path / "two.csv", index=False)
    out = tmp_path / "out"
    run_pairs(tmp_path / "one.csv", [FakeScorer(table, name="x")], good="g", bad="b", output=out)
    with pytest.raises(InputError, match=r"holds results made with file=sha256:"):
        run_pairs(tmp_path / "two.csv", [FakeScorer(table, name="y")], good="g", bad="b", output=out)
    (tmp_path / "copy.csv").write_bytes((tmp_path / "one.csv").read_bytes())  # same content, other name: merged
    res = run_pairs(tmp_path / "copy.csv", [FakeScorer(table, name="y")], good="g", bad="b", output=out)
    assert res.summary["model"].tolist() == ["x", "y"]


def test_a_folder_without_settings_is_refused(data, tmp_path):
    folder, table = data
    out = tmp_path / "out"
    run_blimp([FakeScorer(table, name="a")], data=folder, output=out)
    meta = json.loads((out / "meta.json").read_text())
    del meta["settings"]  # as an earlier pllscore wrote it
    (out / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="do not record how they were made"):
        run_blimp([FakeScorer(table, name="b")], data=folder, output=out)


def test_cli_refuses_another_limit_in_one_line_and_force_replaces(data, tmp_path):
    from tests.conftest import TINY_GPT2
    from tests.test_cli import run

    folder, _ = data
    out = tmp_path / "out"
    args = ("blimp", "-m", str(TINY_GPT2), "--data", str(folder), "-o", str(out), "-q", "--device", "cpu")
    assert run(*args, "--limit", "1").returncode == 0
    done = run(*args)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1
    assert "holds results made with limit=1; this run has limit=None; use another output folder or --force" in (
        done.stderr
    )
    done = run(*args, "--force")
    assert done.returncode == 0, done.stderr
    assert len(pd.read_parquet(out / "pairs.parquet")) == 6
