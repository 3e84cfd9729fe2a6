"""One set of column names for the CLI's files and the Python frames: formula-friendly, one meaning each."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from pllscore.errors import InputError
from pllscore.jobs.local import score_file
from pllscore.results.columns import column_part, pair_columns_now, score_column_name
from pllscore.results.frames import to_frame, to_wide_frame
from tests.conftest import TINY_GPT2

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # what R, pandas' query and formulas take as written
TEXTS = ["The cat sat on the mat.", "A dog-like 2nd cat ran."]


def test_column_part_makes_formula_friendly_names():
    assert column_part("word-l2r") == "word_l2r" and column_part("per-char") == "per_char"
    assert column_part("tiny-gpt2") == "tiny_gpt2" and column_part("runA/ckpt:v1") == "runA_ckpt_v1"
    assert column_part("2layer") == "x2layer" and column_part("--") == "x"
    assert score_column_name("word-l2r", True, "bits") == "word_l2r_surprisal_bits"
    assert score_column_name("causal", False, "nats") == "causal_logprob"


@pytest.mark.parametrize("level", ["sentence", "word", "token"])
@pytest.mark.parametrize("view", [{}, {"base": 2, "surprisal": True}, {"base": 10}])
def test_every_frame_column_is_formula_friendly_and_means_one_thing(shared_bert, level, view):
    res = shared_bert.score(TEXTS, metric="all", outputs=["entropy", "rank"] if level != "sentence" else ())
    norm = {"norm": ["mean", "per-char", "slor", "norm-lp"], "unigram": "wordfreq"} if level == "sentence" else {}
    long, wide = to_frame(res, level, **view, **norm), to_wide_frame(res, level, **view, **norm)
    for frame in (long, wide):
        bad = [c for c in frame.columns if not NAME.match(c)]
        assert not bad, bad
    # the columns both shapes have hold the same values (the long one repeats them per metric)
    first = long[long["metric"] == "original"].reset_index(drop=True)
    for c in set(long.columns) & set(wide.columns):
        assert first[c].astype(str).tolist() == wide[c].astype(str).tolist(), c
    # the wide score columns are the long value column, one per metric
    value = [c for c in long.columns if c.startswith(("logprob", "surprisal"))][0]
    for metric, g in long.groupby("metric", sort=False):
        np.testing.assert_array_equal(g[value].to_numpy(), wide[f"{column_part(metric)}_{value}"].to_numpy())


def test_cli_table_and_python_frame_share_names(shared_gpt2, tmp_path):
    score_file(TEXTS, tmp_path / "w.csv", model=shared_gpt2, level="word", progress=False)
    written = pd.read_csv(tmp_path / "w.csv", keep_default_na=False)
    frame = to_frame(shared_gpt2.score(TEXTS), "word")
    assert list(written.columns) == ["text_id", "word_id", "word", "start", "end", "n_tokens", "causal_logprob"]
    assert written["word"].tolist() == frame["word"].tolist()
    assert written["text_id"].tolist() == frame["text_id"].tolist()
    np.testing.assert_allclose(written["causal_logprob"], frame["logprob"], rtol=0, atol=1e-12)


def _old_output(tmp_path, shared_gpt2):
    """An unfinished output as the old column names left it: the meta records no ``columns``."""
    out = tmp_path / "old.csv"
    score_file(TEXTS, out, model=shared_gpt2, progress=False)
    meta_file = tmp_path / "old.csv.meta.json"
    meta = json.loads(meta_file.read_text())
    assert meta["columns"] == 2
    del meta["columns"]
    meta_file.write_text(json.dumps(meta))
    return out


def test_resume_onto_an_output_with_the_old_names_is_refused_in_one_line(shared_gpt2, tmp_path):
    out = _old_output(tmp_path, shared_gpt2)
    with pytest.raises(InputError, match=r"old column names .* --force") as e:
        score_file(TEXTS, out, model=shared_gpt2, resume=True, progress=False)
    assert "\n" not in str(e.value)
    score_file(TEXTS, out, model=shared_gpt2, force=True, progress=False)  # the way out it names
    assert "causal_logprob" in pd.read_csv(out).columns


def test_resume_onto_old_names_is_refused_by_the_cli(shared_gpt2, tmp_path):
    from tests.test_cli import run

    out = _old_output(tmp_path, shared_gpt2)
    (tmp_path / "in.txt").write_text("\n".join(TEXTS) + "\n")
    done = run("score", str(tmp_path / "in.txt"), "-m", str(TINY_GPT2), "-o", str(out), "--resume", "-q")
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "old column names" in done.stderr


def test_old_pair_tables_are_read_under_the_current_names():
    old = ["good", "bad", "good_score", "bad_score", "good_per-char", "bad_norm-lp", "correct_per-char",
           "accuracy_mean", "Overall_norm-lp", "correct"]  # fmt: skip
    assert pair_columns_now(old) == {
        "good_score": "good_logprob", "bad_score": "bad_logprob", "good_per-char": "good_logprob_per_char",
        "bad_norm-lp": "bad_logprob_norm_lp", "correct_per-char": "correct_per_char",
        "Overall_norm-lp": "Overall_norm_lp", "accuracy_mean": "accuracy_mean",
    }  # fmt: skip


def test_reading_times_refuses_labels_that_share_a_column(tmp_path):
    from pllscore.eval.reading_times.run import surprisal_columns

    assert surprisal_columns(["tiny-gpt2", "run2/ckpt"]) == ["tiny_gpt2_surprisal_bits", "run2_ckpt_surprisal_bits"]
    with pytest.raises(InputError, match="would share the column 'a_b_surprisal_bits'"):
        surprisal_columns(["a-b", "a_b"])


def test_old_reading_times_words_are_read_under_the_current_names(tmp_path):
    from pllscore.analysis.plotting.reading_times import read_tables

    pd.DataFrame({"text": ["1", "1"], "position": [1, 2], "word": ["A", "cat"], "meanItemRT": [300.0, 310.0],
                  "surprisal:tiny-gpt2": [5.0, 7.0], "included:meanItemRT": [True, False]}).to_csv(
        tmp_path / "words.csv", index=False
    )  # fmt: skip
    pd.DataFrame({"model": ["tiny-gpt2"], "measure": ["meanItemRT"]}).to_csv(tmp_path / "fits.csv", index=False)
    words, _ = read_tables(tmp_path)
    assert list(words.columns) == [
        "text_key", "position", "word", "meanItemRT", "tiny_gpt2_surprisal_bits", "meanItemRT_included",
    ]  # fmt: skip
    assert words["text_key"].tolist() == ["1", "1"]
