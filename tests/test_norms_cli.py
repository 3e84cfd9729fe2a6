"""``--norm`` on the command line: score, blimp, pairs and diagnose, on ../shared/models."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from pllscore.results.unigram import count_corpus
from tests.conftest import TINY_BERT, TINY_GPT2
from tests.test_cli import run

pytestmark = pytest.mark.shared

BERT, GPT2 = str(TINY_BERT), str(TINY_GPT2)
TEXTS = ["The traveler lost the souvenir.", "The hooligan wrecked the vehicle.", "She didn't go to the store!"]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("The cat sat on the mat.\nThe traveler went to the store.\nShe lost the keys yesterday.\n")
    return path


def test_score_norm_mean_and_slor_from_a_corpus(tmp_path, corpus):
    import pllscore

    out = tmp_path / "out.tsv"
    args = ["score", *[a for t in TEXTS for a in ("--text", t)], "--model", GPT2, "--norm", "mean", "--norm", "slor"]
    done = run(*args, "--unigram-corpus", str(corpus), "-o", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(out, sep="\t")
    assert list(frame.columns) == [
        "text_id",
        "text",
        "n_tokens",
        "n_words",
        "causal_logprob",
        "causal_logprob_mean",
        "causal_logprob_slor",
    ]
    clm = pllscore.load(GPT2)
    counts = count_corpus(corpus, clm.tokenizer)
    total, types = sum(counts.values()), len(counts)
    for i, r in enumerate(clm.score(TEXTS)):
        u = sum(math.log((counts.get(p, 0) + 1) / (total + types + 1)) for p in r.pieces)  # add-one, by hand
        assert frame["causal_logprob_slor"][i] == pytest.approx((r.total - u) / r.n_scored, abs=1e-6)
        assert frame["causal_logprob_mean"][i] == pytest.approx(r.total / r.n_tokens, abs=1e-6)
    meta = json.loads((tmp_path / "out.tsv.meta.json").read_text())
    assert meta["norm"] == ["slor"] and meta["unigram"]["level"] == "token"


def test_score_norm_per_metric_columns_and_wordfreq(tmp_path):
    out = tmp_path / "out.csv"
    metrics = ["--metric", "original", "--metric", "word-l2r"]
    norms = ["--norm", "per-char", "--norm", "norm-lp", "--unigram", "wordfreq"]
    done = run("score", "--text", TEXTS[0], "--model", BERT, *metrics, *norms, "-o", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(out)
    for m in ("original_logprob", "word_l2r_logprob"):
        assert frame[f"{m}_per_char"][0] == pytest.approx(frame[m][0] / len(TEXTS[0]))
        assert frame[f"{m}_norm_lp"][0] < 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--norm", "slor"], "needs unigram log-probabilities"),
        (["--norm", "median"], "unknown --norm 'median'"),
        (["--norm", "per-char", "--level", "token"], "sentence score"),
    ],
)
def test_score_norm_mistakes(args, message):
    done = run("score", "--text", TEXTS[0], "--model", GPT2, *args)
    assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr


def test_blimp_one_accuracy_column_per_norm(tmp_path, corpus):
    from tests.conftest import SHARED

    data = SHARED.parent / "data" / "blimp"
    out = tmp_path / "blimp"
    args = ["blimp", "--model", GPT2, "--data", str(data), "--paradigm", "anaphor_number_agreement",
            "--paradigm", "adjunct_island", "--limit", "10", "-o", str(out)]  # fmt: skip
    done = run(*args, "--norm", "sum", "--norm", "mean", "--norm", "slor", "--unigram-corpus", str(corpus))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0].split()[:5] == ["model", "metric", "Overall", "Overall_mean", "Overall_slor"]
    summary = pd.read_csv(out / "summary.csv")
    paradigms = pd.read_csv(out / "paradigms.csv")
    assert {"accuracy", "accuracy_mean", "accuracy_slor"} <= set(paradigms.columns)
    assert summary["Overall_slor"][0] == pytest.approx(round(100 * paradigms["accuracy_slor"].mean(), 1))
    pairs = pd.read_parquet(out / "pairs.parquet")
    assert ((pairs["good_logprob_mean"] > pairs["bad_logprob_mean"]) == pairs["correct_mean"]).all()
    again = run(*args)  # the folder was made with other norms: refused, not mixed
    assert again.returncode == 1 and "norms" in again.stderr


def test_pairs_norm_mean(tmp_path):
    (tmp_path / "p.csv").write_text("good,bad\nThe cats sleep.,The cats sleeps.\nShe saw herself.,She saw himself.\n")
    done = run("pairs", str(tmp_path / "p.csv"), "--good", "good", "--bad", "bad", "--model", GPT2,
               "--norm", "mean", "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0].split() == ["model", "metric", "Overall", "Overall_mean"]


def test_diagnose_norm_rows(tmp_path):
    (tmp_path / "s.txt").write_text("\n".join(TEXTS + ["The cat sat on the mat.", "A dog ran."]) + "\n")
    done = run("diagnose", "--model", BERT, "--causal-model", GPT2, "--data", str(tmp_path / "s.txt"),
               "--metric", "word-l2r", "--norm", "mean", "--norm", "slor", "--unigram", "wordfreq",
               "-o", str(tmp_path / "d"), "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = pd.read_csv(tmp_path / "d" / "summary.csv")
    rows = summary[summary["analysis"].str.startswith("length")]
    assert rows["analysis"].tolist() == ["length", "length:mean", "length:slor"] * 2
    assert json.loads((tmp_path / "d" / "meta.json").read_text())["norms"] == ["sum", "mean", "slor"]
