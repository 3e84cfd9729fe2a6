"""`pllscore predict` and ``predict_file``: the rows, provenance, resume, candidates files, one-line errors."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from pllscore import InputError
from pllscore.jobs.predict import predict_file, read_candidates
from tests.conftest import TINY_BERT, TINY_GPT2
from tests.test_cli import run

pytestmark = pytest.mark.shared

FRAMES = ["The chef tasted the ___ before serving it.", "She went to the ___ yesterday."]


def test_file_rows_provenance_and_resume(shared_bert, tmp_path):
    out = tmp_path / "p.tsv"
    done = predict_file(FRAMES, out, model=shared_bert, k=4, chunk_size=1)
    got = pd.read_csv(out, sep="\t", keep_default_na=False)
    assert list(got.columns[:8]) == ["text_id", "text", "rank", "word", "logprob", "prob", "n_tokens", "tokens"]
    want = shared_bert.predict(FRAMES, k=4)
    assert got["word"].tolist() == [w.word for p in want for w in p.words]
    np.testing.assert_allclose(got["logprob"], [w.logprob for p in want for w in p.words], atol=1e-5)  # batches differ
    np.testing.assert_allclose(got.groupby("text_id")["covered"].first(), [p.covered for p in want], rtol=1e-5)
    meta = json.loads((tmp_path / "p.tsv.meta.json").read_text())
    assert (meta["k"], meta["word_tokens"], meta["kind"]) == (4, 3, "masked")
    assert done.predicted == 2
    again = predict_file(FRAMES, out, model=shared_bert, k=4, chunk_size=1, resume=True)
    assert again.resumed_from == 2 and again.predicted == 0
    with pytest.raises(InputError, match="k"):
        predict_file(FRAMES, out, model=shared_bert, k=5, chunk_size=1, resume=True)


def test_candidates_file_with_text_ids(shared_gpt2, tmp_path):
    path = tmp_path / "responses.csv"
    pd.DataFrame({"text_id": [0, 0, 1], "response": ["soup", "sauce", "store"]}).to_csv(path, index=False)
    assert read_candidates(path, 2) == [["soup", "sauce"], ["store"]]
    stream = io.StringIO()
    contexts = ["The chef tasted the", "She went to the"]
    predict_file(contexts, None, model=shared_gpt2, candidates=str(path), stream=stream)
    got = pd.read_csv(io.StringIO(stream.getvalue()), sep="\t")
    want = shared_gpt2.predict(["The chef tasted the", "She went to the"], candidates=[["soup", "sauce"], ["store"]])
    np.testing.assert_allclose(got["logprob"], [w.logprob for p in want for w in sorted(p.words, key=lambda w: w.rank)])


def test_cli_token_level_in_bits(shared_bert):
    done = run(
        "predict", "-m", str(TINY_BERT), "-t", FRAMES[0], "--level", "token", "-k", "3", "--base", "2", "--progress"
    )
    assert done.returncode == 0, done.stderr
    got = pd.read_csv(io.StringIO(done.stdout), sep="\t")
    (want,) = shared_bert.predict(FRAMES[0], level="token", k=3)
    np.testing.assert_allclose(got["logprob_bits"], [w.logprob / np.log(2) for w in want.words], rtol=1e-9)
    np.testing.assert_allclose(got["entropy_bits"], want.entropy / np.log(2), rtol=1e-9)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-t", "The chef tasted the soup."], "has no slot"),
        (["-t", "The ___ tasted the ___."], "has 2 slots"),
        (["-t", "a ___", "-k", "0"], "k must be a positive integer"),
        (["-t", "a ___", "--level", "sentence"], "unknown level"),
        (["-t", "a ___", "--candidates", "nowhere.txt"], "not found"),
    ],
)
def test_cli_bad_inputs_are_one_line(args, words):
    done = run("predict", "-m", str(TINY_BERT), *args)
    assert done.returncode == 1
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_cli_causal_text_after_slot_is_one_line():
    done = run("predict", "-m", str(TINY_GPT2), "-t", "The ___ barked.")
    assert done.returncode == 1 and "has text after its slot" in done.stderr


def test_cli_warnings_are_one_line_each(tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("dog\n dog \ncat\n")
    done = run("predict", "-m", str(TINY_BERT), "-t", FRAMES[0], "--candidates", str(words), "-q")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        "warning: 1 candidates repeat a word of the same text (text 0: 'dog'); each word is scored once"
    ]
    assert pd.read_csv(io.StringIO(done.stdout), sep="\t")["word"].tolist() == ["dog", "cat"]
