"""--no-share-prefixes and --compile on the commands that load a model (tiny shared GPT-2)."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from tests.test_cli import GPT2, run

pytestmark = pytest.mark.shared

PAIRS = [("The cat sat on the mat.", "The cat sat on the mats."), ("A dog ran.", "A dogs ran.")]


def _score(*extra: str) -> pd.Series:
    texts = [t for pair in PAIRS for t in pair]
    args = [a for t in texts for a in ("--text", t)]
    done = run("score", *args, "-m", GPT2, "-q", *extra)
    assert done.returncode == 0, done.stderr
    return pd.read_csv(io.StringIO(done.stdout), sep="\t")["causal_logprob"]


def test_no_share_prefixes_gives_the_same_scores(shared_gpt2):
    np.testing.assert_allclose(_score(), _score("--no-share-prefixes"), atol=1e-4, rtol=0)


def test_no_share_prefixes_reaches_the_engine(monkeypatch, shared_gpt2):
    def refuse(*args, **kwargs):
        raise RuntimeError("prefix trees used")

    monkeypatch.setattr("pllscore.engine.causal.run_trees", refuse)
    _score("--no-share-prefixes")
    with pytest.raises(RuntimeError, match="prefix trees used"):
        _score()


def test_pairs_take_both_options(tmp_path, shared_gpt2):
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps({"good": g, "bad": b}) + "\n" for g, b in PAIRS))
    plain = run("pairs", str(path), "--good", "good", "--bad", "bad", "-m", GPT2, "-q", "--no-share-prefixes")
    shared = run("pairs", str(path), "--good", "good", "--bad", "bad", "-m", GPT2, "-q")
    assert plain.returncode == 0 and shared.returncode == 0, plain.stderr + shared.stderr
    assert plain.stdout == shared.stdout
