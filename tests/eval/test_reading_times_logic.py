"""Reading times, the pure logic (no model): the word table, the predictors, which rows are fitted, the folds.

Hand-worked tables: each expectation is written out from the definitions of the issue, not from the code.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pllscore.errors import InputError
from pllscore.eval.reading_times.predictors import (
    Frequency,
    check_range,
    design,
    folds,
    included,
    sentence_final,
    strip_punctuation,
    word_predictors,
    word_rules,
)
from pllscore.eval.reading_times.table import read_word_table

NATURAL_STORIES = "../shared/data/naturalstories"

WORDS_A = ["The", "cat", "sat.", "'It", "was", "big!'", "Then", "we", "left"]
WORDS_B = ["None", "NA", "null", "ran", "(away).", "Fine"]


def _table() -> pd.DataFrame:
    # B is numbered from 8: positions sort as numbers (8 before 10), not as text
    rows = [("A", i + 1, w) for i, w in enumerate(WORDS_A)] + [("B", 8 + i, w) for i, w in enumerate(WORDS_B)]
    frame = pd.DataFrame(rows, columns=["story", "pos", "token"])
    frame["rt"] = [float(200 + 10 * i) for i in range(len(frame))]
    frame["rt2"] = [float(300 + i) for i in range(len(frame))]
    return frame


def _write(frame: pd.DataFrame, path, fmt: str) -> None:
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "tsv":
        frame.to_csv(path, sep="\t", index=False)
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)


COLUMNS = dict(text_column="story", position_column="pos", word_column="token", measures=["rt", "rt2"])


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet"])
def test_shuffled_table_with_a_word_none_reads_as_the_sorted_one(tmp_path, fmt):
    sorted_frame = _table()
    # any order of the rows; text A still appears first, so the texts keep their order
    order = list(sorted_frame.sample(frac=1.0, random_state=3).index)
    first_a = next(i for i in order if sorted_frame.loc[i, "story"] == "A")
    shuffled = sorted_frame.loc[[first_a] + [i for i in order if i != first_a]]
    assert not shuffled["pos"].is_monotonic_increasing
    a, b = tmp_path / f"sorted.{fmt}", tmp_path / f"shuffled.{fmt}"
    _write(sorted_frame, a, fmt)
    _write(shuffled, b, fmt)
    one, two = read_word_table(a, **COLUMNS), read_word_table(b, **COLUMNS)
    pd.testing.assert_frame_equal(one.frame, two.frame)
    assert list(one.frame["word"]) == WORDS_A + WORDS_B  # None, NA and null stay words
    assert list(one.frame["rt"]) == list(sorted_frame["rt"])
    assert one.texts == ("A", "B") and one.measures == ("rt", "rt2")


def test_texts_keep_their_first_appearance_order(tmp_path):
    frame = _table()
    frame = pd.concat([frame[frame["story"] == "B"], frame[frame["story"] == "A"]])
    got = read_word_table(frame, **COLUMNS)
    assert got.texts == ("B", "A")
    assert list(got.frame["word"]) == WORDS_B + WORDS_A


def test_natural_stories_folder_is_recognised():
    ns = read_word_table(NATURAL_STORIES)
    assert ns.measures == ("meanItemRT",) and len(ns.frame) == 10256
    assert ns.texts == tuple(str(i) for i in range(1, 11))  # the stories in reading order (all_stories.tok)
    first = ns.frame[ns.frame["text"] == "1"]
    assert list(first["word"][:5]) == ["If", "you", "were", "to", "journey"]
    assert list(first["position"][:3]) == [1, 2, 3]


def test_punctuation_length_and_sentence_ends():
    assert [strip_punctuation(w) for w in ["'Admiral", "moors.", "big!'", "(away).", "don't", "--"]] == [
        "Admiral", "moors", "big", "away", "don't", "",
    ]  # fmt: skip
    assert [sentence_final(w) for w in ["sat.", "big!'", "why?\"", "(away).", "Mr", "end.)", "left"]] == [
        True, True, True, True, False, True, False,
    ]  # fmt: skip


def test_which_words_are_fitted_by_hand():
    table = read_word_table(_table(), **COLUMNS)
    words = table.words()
    #        The    cat    sat.   'It    was    big!'  Then   we     left
    want_a = [False, False, False, False, True, False, False, True, False]
    # B: null is third and not at a sentence edge; ran precedes (away). which ends it; Fine is the last word
    want_b = [False, False, True, True, False, False]
    assert list(word_rules(words, 2)) == want_a + want_b
    # spillover 3: the first three words of a text are never fitted
    assert list(word_rules(words, 3)) == want_a[:3] + [False] + want_a[4:] + [False, False, False, True, False, False]
    rt = table.frame["rt"].to_numpy().copy()
    rt[4] = 99.0  # "was" below the range
    got = included(rt, word_rules(words, 2), (100.0, 3000.0))
    assert list(got) == [False] * 4 + [False] + want_a[5:] + want_b
    assert list(included(rt, word_rules(words, 2), None)) == want_a + want_b


def test_predictors_and_lags_within_texts():
    table = read_word_table(_table(), **COLUMNS)
    words = word_predictors(table.words(), Frequency())
    assert list(words["length"]) == [3, 3, 3, 2, 3, 3, 4, 2, 4, 4, 2, 4, 3, 4, 4]
    import wordfreq

    assert words["zipf"].iloc[3] == wordfreq.zipf_frequency("it", "en")  # 'It -> it
    assert words["zipf"].iloc[9] == wordfreq.zipf_frequency("none", "en")
    lagged = design(words, ["length"], 2)
    assert list(lagged.columns) == ["length", "length_1", "length_2"]
    first_b = len(WORDS_A)
    assert math.isnan(lagged["length_1"].iloc[first_b]) and math.isnan(lagged["length_2"].iloc[first_b + 1])
    assert lagged["length_1"].iloc[first_b + 1] == 4 and lagged["length_2"].iloc[2] == 3


def test_frequency_table_source(tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text("word,count\nthe,900\ncat,100\n")
    freq = Frequency(str(path))
    assert freq.zipf(["The", "cat", "dog"]) == [math.log10(0.9e9), math.log10(0.1e9), 0.0]


def test_folds_round_robin_or_leave_one_text_out():
    assert folds(["a", "b", "c"]) == {"a": 0, "b": 1, "c": 2}
    texts = [f"t{i}" for i in range(23)]
    got = folds(texts)
    assert [got[t] for t in texts] == [i % 10 for i in range(23)]
    with pytest.raises(InputError, match="at least two texts"):
        folds(["only"])


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda f: f.drop(columns=["rt2"]), "column 'rt2' not in"),
        (lambda f: f.assign(rt=["fast"] + list(f["rt"][1:])), "measure 'rt' is not a number at row 0 of the table"),
        (lambda f: f.assign(token=[""] + list(f["token"][1:])), "empty word"),
        (lambda f: f.assign(pos=[2] + list(f["pos"][1:])), "has position 2 twice"),
        (lambda f: f.assign(pos=["x"] + list(f["pos"][1:])), "position 'x' at row 0 of the table"),
        (lambda f: f.assign(token=["two words"] + list(f["token"][1:])), "whitespace inside"),
    ],
)
def test_bad_tables_are_refused_in_one_line(change, message):
    with pytest.raises(InputError, match=message) as e:
        read_word_table(change(_table()), **COLUMNS)
    assert "\n" not in str(e.value)


def test_missing_measures_are_not_fitted_and_ranges_parse():
    frame = _table().assign(rt=[""] + [300.0] * 14)
    got = read_word_table(frame, **COLUMNS)
    assert np.isnan(got.frame["rt"].iloc[0])
    assert check_range("100,3000") == (100.0, 3000.0) and check_range("none") is None
    with pytest.raises(InputError, match="LO,HI"):
        check_range("fast")


def test_each_sorted_row_knows_its_input_row():
    """``rows`` maps the sorted table back onto the input: the table as given is the frame in that order."""
    frame = _table()
    shuffled = frame.sample(frac=1.0, random_state=5).reset_index(drop=True)
    got = read_word_table(shuffled, **COLUMNS)
    assert sorted(got.rows) == list(range(len(shuffled)))
    back = got.frame.iloc[np.argsort(got.rows)].reset_index(drop=True)
    assert list(back["word"]) == list(shuffled["token"]) and list(back["rt"]) == list(shuffled["rt"])
    assert list(back["position"]) == list(shuffled["pos"])


def test_per_reader_rows(tmp_path):
    frame = _table()
    two = pd.concat([frame.assign(reader="r1"), frame.assign(reader="r2", rt=frame["rt"] + 1)])
    got = read_word_table(two.sample(frac=1.0, random_state=0), subject_column="reader", **COLUMNS)
    assert list(got.frame["subject"][:2]) in (["r1", "r2"], ["r2", "r1"]) and len(got.frame) == 2 * len(frame)
    assert list(got.words()["word"]) == WORDS_A + WORDS_B
    clash = two.copy()
    clash.iloc[len(frame), clash.columns.get_loc("token")] = "Other"
    with pytest.raises(InputError, match="different words at position 1"):
        read_word_table(clash, subject_column="reader", **COLUMNS)


# --- positions with gaps, per-reader rows without their reader, a word pandas read as missing ----------------------


def test_a_gap_in_the_positions_is_refused_naming_the_text_and_positions():
    frame = _table()
    gappy = frame[~((frame["story"] == "A") & frame["pos"].isin([4, 6, 7]))]
    with pytest.raises(InputError) as e:
        read_word_table(gappy, **COLUMNS)
    msg = str(e.value)
    assert "text 'A'" in msg and "position 4, 6-7" in msg and "allow_gaps=True" in msg and "\n" not in msg
    from pllscore.cli.messages import cli_message

    assert "pass --allow-gaps if words" in cli_message(e.value)  # the flag on the command line
    got = read_word_table(gappy, allow_gaps=True, **COLUMNS)
    assert list(got.frame[got.frame["text"] == "A"]["position"]) == [1, 2, 3, 5, 8, 9]


def test_a_fractional_position_is_refused_even_with_gaps_allowed():
    frame = _table().astype({"pos": float})
    frame.loc[3, "pos"] = 3.5
    for allow in (False, True):
        with pytest.raises(InputError, match=r"position 3\.5 at row 3 .* not a whole number"):
            read_word_table(frame, allow_gaps=allow, **COLUMNS)


def test_a_lag_across_a_gap_is_missing_not_the_previous_present_word():
    # A: positions 1 2 3 _ 5 6 (4 left out); lag k of a word is the word at its position - k
    words = pd.DataFrame({"text": ["A"] * 5 + ["B"] * 2, "position": [1, 2, 3, 5, 6, 1, 2]})
    words["x"] = [10.0, 20.0, 30.0, 50.0, 60.0, 1.0, 2.0]
    got = design(words, ["x"], 2)
    nan = math.nan
    want_1 = [nan, 10.0, 20.0, nan, 50.0, nan, 1.0]
    want_2 = [nan, nan, 10.0, 30.0, nan, nan, nan]
    np.testing.assert_array_equal(got["x_1"].to_numpy(), want_1)
    np.testing.assert_array_equal(got["x_2"].to_numpy(), want_2)
    # without gaps, lag k is the word k rows back in its text
    plain = pd.DataFrame({"text": ["A"] * 4, "position": [7, 8, 9, 10], "x": [1.0, 2.0, 3.0, 4.0]})
    assert list(design(plain, ["x"], 1)["x_1"].fillna(-1)) == [-1, 1.0, 2.0, 3.0]


def test_per_reader_rows_without_the_reader_column_say_so():
    frame = _table()
    two = pd.concat([frame.assign(who="r1"), frame.assign(who="r2", rt=frame["rt"] + 1)])
    with pytest.raises(InputError) as e:
        read_word_table(two, **COLUMNS)
    msg = str(e.value)
    assert "per-reader rows?" in msg and "--subject-column" in msg and "'who'" in msg and "twice" not in msg


def test_a_word_pandas_read_as_missing_is_named_as_such():
    frame = _table().astype({"token": object})
    frame.loc[9, "token"] = None  # what pd.read_csv makes of the word None with its defaults
    with pytest.raises(InputError) as e:
        read_word_table(frame, **COLUMNS)
    msg = str(e.value)
    assert "row 9 of the table" in msg and "missing value" in msg and "keep_default_na=False" in msg and "\n" not in msg


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_a_word_na_in_a_file_is_the_word(tmp_path, fmt):
    frame = _table()
    path = tmp_path / f"t.{fmt}"
    _write(frame, path, fmt)
    got = read_word_table(path, **COLUMNS)
    assert list(got.frame["word"][len(WORDS_A) :][:3]) == ["None", "NA", "null"]
