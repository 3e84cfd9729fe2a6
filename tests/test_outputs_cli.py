"""`pllscore score --entropy --rank --word-prob bow` and ``score_file(outputs=..., word_prob=...)``."""

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

TEXTS = ["The cat sat on the mat.", "Dogs bark."]


def test_cli_token_entropy_and_rank_equal_the_library(shared_gpt2, tmp_path):
    out = tmp_path / "t.tsv"
    args = ["score", "-t", TEXTS[0], "-t", TEXTS[1], "-m", str(TINY_GPT2), "--level", "token"]
    done = run(*args, "--entropy", "--rank", "--base", "2", "-o", str(out))
    assert done.returncode == 0, done.stderr
    got = pd.read_csv(out, sep="\t")
    want = shared_gpt2.score(TEXTS, outputs=("entropy", "rank")).view(base=2)
    np.testing.assert_allclose(got["causal_entropy_bits"], np.concatenate([r.token_entropy for r in want]), rtol=1e-6)
    assert list(got["causal_rank"]) == [int(x) for r in want for x in r.rank]
    assert json.loads((tmp_path / "t.tsv.meta.json").read_text())["outputs"] == ["entropy", "rank"]


def test_masked_word_level_entropy_is_the_first_tokens(shared_bert, tmp_path):
    out = tmp_path / "w.tsv"
    score_file(["The hooligan wrecked it."], out, model=shared_bert, level="word", outputs=["entropy"], progress=False)
    got = pd.read_csv(out, sep="\t")
    r = shared_bert.score("The hooligan wrecked it.", outputs=("entropy",))[0]
    first = [list(r.word_index).index(w) for w in range(r.n_words)]
    np.testing.assert_allclose(got["word_l2r_entropy"], r.entropy[first], rtol=1e-6)
    assert "word_l2r_rank" not in got.columns


def test_cli_word_prob_bow(shared_gpt2, tmp_path):
    out = tmp_path / "w.tsv"
    done = run("score", "-t", TEXTS[0], "-m", str(TINY_GPT2), "--level", "word", "--word-prob", "bow", "-o", str(out))
    assert done.returncode == 0, done.stderr
    got = pd.read_csv(out, sep="\t")
    want = shared_gpt2.score(TEXTS[0], word_prob="bow")[0].word_scores
    np.testing.assert_allclose(got["causal_logprob"], want, rtol=1e-6)
    assert not np.allclose(got["causal_logprob"], shared_gpt2.score(TEXTS[0])[0].word_scores)
    assert json.loads((tmp_path / "w.tsv.meta.json").read_text())["word_prob"] == "bow"


def test_resume_refuses_other_outputs(shared_gpt2, tmp_path):
    out = tmp_path / "o.tsv"
    score_file(TEXTS, out, model=shared_gpt2, level="word", outputs=["entropy"], progress=False)
    for change in ({"outputs": ["rank"]}, {"word_prob": "bow"}, {}):
        with pytest.raises(InputError, match="cannot resume"):
            score_file(TEXTS, out, model=shared_gpt2, level="word", resume=True, progress=False, **change)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"outputs": ["entropy"]}, "--entropy is a per-token output; use --level token or word"),
        ({"word_prob": "bow", "level": "token"}, "--word-prob bow changes word scores only"),
        ({"outputs": ["perplexity"], "level": "token"}, "unknown output 'perplexity'"),
    ],
)
def test_errors(shared_gpt2, tmp_path, kwargs, message):
    with pytest.raises(InputError, match=message):
        score_file(TEXTS, tmp_path / "x.tsv", model=shared_gpt2, progress=False, **kwargs)


def test_cli_bow_with_a_masked_model_is_one_line(tmp_path):
    done = run("score", "-t", "The cat.", "-m", str(TINY_BERT), "--level", "word", "--word-prob", "bow")
    assert done.returncode != 0 and "causal LM" in done.stderr and len(done.stderr.strip().splitlines()) == 1
