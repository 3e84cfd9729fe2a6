"""`pllscore score --context TEXT | --context-column COL` and ``score_file(context=..., context_column=...)``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pllscore import InputError
from pllscore.jobs.local import score_file
from tests.conftest import TINY_BERT, TINY_GPT2
from tests.test_cli import run

pytestmark = pytest.mark.shared

TEXTS = ["sat on the mat.", "wrecked the vehicle.", "lost the souvenir."]
CONTEXTS = ["The cat", "", "The traveler "]


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "in.csv"
    pd.DataFrame({"text": TEXTS, "before": CONTEXTS}).to_csv(path, index=False)
    return path


def test_cli_context_equals_the_library(shared_gpt2, tmp_path):
    out = tmp_path / "o.tsv"
    done = run("score", "-t", TEXTS[0], "-t", TEXTS[1], "-m", str(TINY_GPT2), "--context", "The cat", "-o", str(out))
    assert done.returncode == 0, done.stderr
    got = pd.read_csv(out, sep="\t")
    want = shared_gpt2.score(TEXTS[:2], context="The cat")
    np.testing.assert_allclose(got["causal_logprob"], [r.total for r in want], rtol=1e-6)
    assert json.loads((tmp_path / "o.tsv.meta.json").read_text())["context"] == "The cat"


@pytest.mark.parametrize("model", [str(TINY_BERT), str(TINY_GPT2)])
def test_context_column_per_row(shared_bert, shared_gpt2, table, tmp_path, model):
    scorer = shared_bert if model == str(TINY_BERT) else shared_gpt2
    out = tmp_path / "o.tsv"
    score_file(table, out, model=scorer, context_column="before", progress=False)
    got = pd.read_csv(out, sep="\t", keep_default_na=False)
    want = scorer.score(TEXTS, context=CONTEXTS)
    column = "causal_logprob" if scorer.kind == "causal" else "word_l2r_logprob"
    np.testing.assert_allclose(got[column], [r.total for r in want], rtol=1e-6)
    assert got[column][1] == pytest.approx(scorer.score(TEXTS[1])[0].total, rel=1e-6)  # empty: plain scoring
    assert list(got["before"]) == CONTEXTS


def test_word_level_with_context_refers_to_the_text(shared_bert, tmp_path):
    out = tmp_path / "w.tsv"
    score_file(TEXTS[:1], out, model=shared_bert, context="The cat", level="word", progress=False)
    got = pd.read_csv(out, sep="\t")
    assert list(got["word"]) == ["sat", "on", "the", "mat", "."] and list(got["start"]) == [0, 4, 7, 11, 14]


def test_resume_refuses_another_context(shared_bert, table, tmp_path):
    out = tmp_path / "o.tsv"
    score_file(table, out, model=shared_bert, context="Yesterday", progress=False)
    with pytest.raises(InputError, match="context"):
        score_file(table, out, model=shared_bert, context="Today", resume=True, progress=False)
    with pytest.raises(InputError, match="context"):
        score_file(table, out, model=shared_bert, resume=True, progress=False)
    done = score_file(table, out, model=shared_bert, context="Yesterday", resume=True, progress=False)
    assert done.scored == 0


def test_context_options_errors(shared_bert, table, tmp_path):
    with pytest.raises(InputError, match="either --context or --context-column"):
        score_file(table, None, model=shared_bert, context="a", context_column="before", progress=False)
    with pytest.raises(InputError, match="context column 'nope' not in .*its columns are: text, before"):
        score_file(table, None, model=shared_bert, context_column="nope", progress=False)
    done = run("score", str(table), "-m", str(TINY_BERT), "--context-column", "nope")
    assert done.returncode != 0 and "context column 'nope'" in done.stderr
