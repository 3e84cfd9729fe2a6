"""``pllscore reading-times`` runs that stop and start again, with the shared tiny causal model in two folders
of one name (``runA/ckpt``, ``runB/ckpt``: hard links to its files): an interrupted run keeps the finished
models' surprisals and the same call continues after them, giving what an uninterrupted run gives; ``--force``
replaces an earlier run whole (no figure of it survives); other folders are refused in one line."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

import pllscore
from pllscore.eval.reading_times import models as rt_models
from pllscore.jobs.local import Interrupted
from tests.conftest import TINY_GPT2
from tests.test_cli import run

pytestmark = pytest.mark.shared

NATURAL_STORIES = "../shared/data/naturalstories/processed_wordinfo.tsv"
COLUMNS = dict(text_column="item", position_column="zone", word_column="word", measures="meanItemRT")
CLI_COLUMNS = ["--text-column", "item", "--position-column", "zone", "--word-column", "word", "--measure", "meanItemRT"]


@pytest.fixture
def small(tmp_path):
    if not TINY_GPT2.is_dir():
        pytest.skip("the shared models must sit beside the repository")
    ns = pd.read_csv(NATURAL_STORIES, sep="\t", keep_default_na=False)
    ns[(ns["zone"] <= 14) & (ns["item"] <= 5)].to_csv(tmp_path / "ns.csv", index=False)
    models = []
    for run_name in ("runA", "runB"):
        folder = tmp_path / run_name / "ckpt"
        folder.mkdir(parents=True)
        for f in TINY_GPT2.iterdir():
            os.link(f, folder / f.name)
        models.append(folder)
    return tmp_path, models


def test_an_interrupted_run_keeps_its_finished_models_and_the_same_call_continues(small, monkeypatch):
    tmp, models = small
    out = tmp / "out"
    real_score, real_load = rt_models.word_surprisals, rt_models.load
    scored: list[str] = []

    def stopped_at_the_second(scorer, *args, **kwargs):
        scored.append(scorer.name)
        if len(scored) == 2:
            raise KeyboardInterrupt
        return real_score(scorer, *args, **kwargs)

    monkeypatch.setattr(rt_models, "word_surprisals", stopped_at_the_second)
    with pytest.raises(Interrupted, match=r"at model 2 of 2; the surprisals of the 1 finished are kept in"):
        pllscore.reading_times(tmp / "ns.csv", models, output=out, **COLUMNS)
    assert os.listdir(out) == ["surprisals"] and os.listdir(out / "surprisals") == ["runA_ckpt.json"]

    loaded: list[object] = []
    monkeypatch.setattr(rt_models, "word_surprisals", real_score)
    monkeypatch.setattr(rt_models, "load", lambda m, s: loaded.append(m) or real_load(m, s))
    res = pllscore.reading_times(tmp / "ns.csv", models, output=out, **COLUMNS)  # no --force: it continues
    assert loaded == [models[1]] and res.labels == ("runA_ckpt", "runB_ckpt")
    pllscore.reading_times(tmp / "ns.csv", models, output=tmp / "whole", **COLUMNS)
    for name in ("words.csv", "fits.csv"):
        assert (out / name).read_text() == (tmp / "whole" / name).read_text()
    meta = json.loads((out / "meta.json").read_text())
    assert [m["label"] for m in meta["models"]] == ["runA_ckpt", "runB_ckpt"]
    assert meta["models"][0]["surprisals"].startswith("surprisals/runA_ckpt.json")
    assert meta["models"][1]["long"] == "window" and meta["models"][1]["kind"] == "causal"
    assert "long" not in meta["settings"]["model"] and "model" not in meta["settings"]["model"]


def test_force_replaces_the_run_whole_and_other_folders_are_refused(small):
    tmp, (a, _) = small
    out = tmp / "out"
    args = ["reading-times", str(tmp / "ns.csv"), *CLI_COLUMNS, "-m", str(a), "-o", str(out)]
    first = run(*args, "--plot")
    assert first.returncode == 0, first.stderr
    warned = [line for line in first.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "5 texts and" in warned[0] and "are few" in warned[0]
    assert (out / "rt-surprisal.png").is_file() and (out / "surprisals" / "ckpt.json").is_file()

    again = run(*args, "-q")
    assert again.returncode == 1 and again.stderr.count("\n") == 1 and "pass --force" in again.stderr
    replaced = run(*args, "-q", "--force", "--spillover", "1")
    assert replaced.returncode == 0, replaced.stderr
    assert sorted(p.name for p in out.iterdir()) == ["fits.csv", "meta.json", "surprisals", "words.csv"]
    assert json.loads((out / "meta.json").read_text())["settings"]["spillover"] == 1

    blimp = tmp / "blimp"
    blimp.mkdir()
    (blimp / "meta.json").write_text('{"kind": "blimp", "runs": []}')
    (blimp / "summary.csv").write_text("model,Overall\n")
    for extra in ([], ["--force"]):
        done = run("reading-times", str(tmp / "ns.csv"), *CLI_COLUMNS, "-m", str(a), "-o", str(blimp), "-q", *extra)
        assert done.returncode == 1 and done.stderr.count("\n") == 1 and "holds blimp results" in done.stderr
    assert sorted(p.name for p in blimp.iterdir()) == ["meta.json", "summary.csv"]

    twice = run("reading-times", str(tmp / "ns.csv"), *CLI_COLUMNS, "-m", str(a), "-m", f"{a}/", "-q")
    assert twice.returncode == 1 and "is given twice" in twice.stderr and twice.stderr.count("\n") == 1
