"""Reading times without a model: the output folder (what a run may write into, replaced whole), the kept
surprisals, the models' labels, the hints that name the real cause and the small-data warning."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from pllscore.errors import InputError
from pllscore.eval.reading_times.cache import cache_key, cached, keep
from pllscore.eval.reading_times.models import labels, snake_label
from pllscore.eval.reading_times.output import check_output, write_output
from pllscore.eval.reading_times.predictors import Frequency, folds, word_predictors
from pllscore.eval.reading_times.run import fit_table, small_data_caution
from pllscore.eval.reading_times.table import read_word_table
from pllscore.io.parts import replacing

# --- the output folder -----------------------------------------------------------------------------------------------


def _meta(folder, kind):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").write_text(json.dumps({"kind": kind}))


def test_new_empty_and_interrupted_folders_are_written_into(tmp_path):
    assert check_output(tmp_path / "new", force=False) == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    assert check_output(tmp_path / "empty", force=False) == tmp_path / "empty"
    (tmp_path / "stopped" / "surprisals").mkdir(parents=True)  # an interrupted run: only its kept surprisals
    assert check_output(tmp_path / "stopped", force=False) == tmp_path / "stopped"
    assert check_output(None, force=False) is None


@pytest.mark.parametrize("kind", ["blimp", "diagnose", None])
def test_a_folder_of_other_results_is_refused_even_with_force(tmp_path, kind):
    out = tmp_path / "out"
    if kind is None:
        out.mkdir()
        (out / "notes.txt").write_text("mine\n")
    else:
        _meta(out, kind)
    for force in (False, True):
        with pytest.raises(InputError) as e:
            check_output(out, force=force)
        msg = str(e.value)
        assert "not a reading-times run" in msg and (kind or "other files") in msg and "\n" not in msg


def test_an_earlier_reading_times_run_needs_force(tmp_path):
    out = tmp_path / "out"
    _meta(out, "reading-times")
    with pytest.raises(InputError, match="holds a reading-times run; pass --force"):
        check_output(out, force=False)
    assert check_output(out, force=True) == out
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        check_output(tmp_path / "file", force=True)


def test_a_run_replaces_the_folder_whole_and_keeps_only_its_models_surprisals(tmp_path):
    out = tmp_path / "out"
    _meta(out, "reading-times")
    for stale in ("delta_ll.png", "rt-surprisal.png", "fits.csv"):
        (out / stale).write_text("old")
    (out / "surprisals").mkdir()
    (out / "surprisals" / "gone.json").write_text("{}")
    (out / "surprisals" / "mine.json").write_text('{"key": "k"}')
    frame = pd.DataFrame({"a": [1, 2]})
    write_output(out, {"fits.csv": frame}, {"kind": "reading-times"}, ["mine"])
    assert sorted(p.name for p in out.iterdir()) == ["fits.csv", "meta.json", "surprisals"]
    assert [p.name for p in (out / "surprisals").iterdir()] == ["mine.json"]
    assert pd.read_csv(out / "fits.csv")["a"].tolist() == [1, 2]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_a_failing_write_leaves_the_folder_as_it_was(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "fits.csv").write_text("kept\n")
    with pytest.raises(RuntimeError):
        with replacing(out) as fresh:
            (fresh / "fits.csv").write_text("new\n")
            raise RuntimeError("disk full")
    assert [p.name for p in out.iterdir()] == ["fits.csv"] and (out / "fits.csv").read_text() == "kept\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_logical_columns_are_written_as_r_pandas_and_spreadsheets_read_them(tmp_path):
    """``True``/``False`` stay text in R's read.csv; ``TRUE``/``FALSE`` are logical in R, pandas and spreadsheets
    (R itself reads them in tests/test_r.py)."""
    frame = pd.DataFrame({"rt": [1.0, 2.0], "rt_included": [True, False], "word": ["True", "no"]})
    frame["maybe"] = pd.array([None, True], dtype="boolean")
    out = tmp_path / "out"
    write_output(out, {"words.csv": frame}, {"kind": "reading-times"}, [])
    text = (out / "words.csv").read_text()
    assert text == "rt,rt_included,word,maybe\n1.0,TRUE,True,\n2.0,FALSE,no,TRUE\n"
    back = pd.read_csv(out / "words.csv", keep_default_na=False, na_values=[""], dtype={"word": str})
    assert back["rt_included"].dtype == bool and back["rt_included"].tolist() == [True, False]
    assert back["word"].tolist() == ["True", "no"]  # a text column is never rewritten


# --- the kept surprisals ---------------------------------------------------------------------------------------------


def test_kept_surprisals_come_back_exactly_and_only_under_their_key(tmp_path):
    ident = {"name": "/m/tiny", "fingerprint": "sha256:ab"}
    key = cache_key(ident, {"dtype": None, "metric": None}, ["t1", "t2"], [["a", "b"], ["c"]])
    values = [np.array([0.1 + 0.2, 1 / 3]), np.array([7e-17])]
    keep(tmp_path, "tiny", key, {"label": "tiny", "kind": "causal"}, values)
    got, record = cached(tmp_path, "tiny", key)
    assert [v.tolist() for v in got] == [v.tolist() for v in values] and record["kind"] == "causal"
    other_words = cache_key(ident, {"dtype": None, "metric": None}, ["t1", "t2"], [["a", "b"], ["d"]])
    other_model = cache_key({**ident, "fingerprint": "sha256:cd"}, {"dtype": None, "metric": None}, ["t1", "t2"],
                            [["a", "b"], ["c"]])  # fmt: skip
    other_setting = cache_key(ident, {"dtype": "bfloat16", "metric": None}, ["t1", "t2"], [["a", "b"], ["c"]])
    assert len({key, other_words, other_model, other_setting}) == 4
    assert cached(tmp_path, "tiny", other_words) is None and cached(tmp_path, "other", key) is None
    assert cached(None, "tiny", key) is None


# --- labels ----------------------------------------------------------------------------------------------------------


def test_labels_are_snake_case_and_tell_same_named_folders_apart(tmp_path):
    for d in ("runA/ckpt", "runB/ckpt", "x/tiny-gpt2.v1"):
        (tmp_path / d).mkdir(parents=True)
    got = labels([tmp_path / "runA/ckpt", tmp_path / "runB/ckpt", tmp_path / "x/tiny-gpt2.v1", "org/gpt2-medium"])
    assert got == ["runA_ckpt", "runB_ckpt", "tiny_gpt2_v1", "gpt2_medium"]
    assert labels(["EleutherAI/pythia-70m", "other/pythia-70m"]) == ["EleutherAI_pythia_70m", "other_pythia_70m"]
    assert snake_label("7b:chat") == "model_7b_chat" and snake_label("a--b") == "a_b"
    for label in got:
        assert label.isidentifier() and not {":", "-", "/", "."} & set(label)


def test_the_same_model_given_twice_is_refused(tmp_path):
    (tmp_path / "m").mkdir()
    os.symlink(tmp_path / "m", tmp_path / "link")
    for pair in ([tmp_path / "m", str(tmp_path / "m") + "/"], [tmp_path / "m", tmp_path / "link"], ["gpt2", "gpt2"]):
        with pytest.raises(InputError, match=r"is given twice \(models 1 and 2\)"):
            labels(pair)


# --- hints that name the real cause, and the small-data warning ------------------------------------------------------


def _fit_inputs(n_texts=6, n_words=12, rt=300.0):
    rng = np.random.default_rng(0)
    vocab = "the old house by a river stood quietly in morning light while children played outside".split()
    rows = [(f"t{t}", i + 1, vocab[(i * 7 + t) % len(vocab)], rt + rng.normal(0, 20))
            for t in range(n_texts) for i in range(n_words)]  # fmt: skip
    table = read_word_table(pd.DataFrame(rows, columns=["t", "p", "w", "rt"]), text_column="t",
                            position_column="p", word_column="w", measures=["rt"])  # fmt: skip
    words = word_predictors(table.words(), Frequency())
    words["m_surprisal_bits"] = rng.uniform(1, 15, len(words))
    return words, table


def test_too_long_a_spillover_blames_the_spillover_not_the_range():
    words, table = _fit_inputs()
    with pytest.raises(InputError) as e:
        fit_table(words, table, ["m"], 20, (100.0, 3000.0), folds(table.texts))
    msg = str(e.value)
    assert "lower --spillover" in msg and "first 20 words (--spillover 20)" in msg and "widen --range" not in msg
    assert "72 of 72 rows have a number, 72 of them in --range, 0 of those pass the word rules" in msg


def test_a_range_that_drops_the_rows_blames_the_range():
    words, table = _fit_inputs()
    with pytest.raises(InputError, match=r"widen --range") as e:
        fit_table(words, table, ["m"], 2, (1000.0, 3000.0), folds(table.texts))
    assert "spillover" not in str(e.value)


def test_small_data_is_cautioned_in_one_line():
    words, table = _fit_inputs(n_texts=6, n_words=12)
    _, fits = fit_table(words, table, ["m"], 1, None, folds(table.texts))
    line = small_data_caution(table, fits)
    assert line is not None and "6 texts and 54 fitted rows are few" in line and "\n" not in line
    big, big_table = _fit_inputs(n_texts=5, n_words=60)
    _, big_fits = fit_table(big, big_table, ["m"], 1, None, folds(big_table.texts))
    assert int(big_fits["n"].iloc[0]) >= 200 and small_data_caution(big_table, big_fits) is None
