"""Errors about a row of an input table name the file and the line a user opens (the header is line 1; blank
lines and line breaks inside quoted CSV cells counted), in every reader: n-best tables, minimal pairs, word
tables. A table given in memory (a DataFrame) or a Parquet file, which has no lines, names the 0-based row."""

from __future__ import annotations

import pandas as pd
import pytest

from pllscore import InputError
from pllscore.eval.reading_times.table import read_word_table
from pllscore.io.readers import read_input
from pllscore.rescoring.nbest import read_nbest

#: a blank line 3 and a quoted cell over lines 4-5: the bad row starts on line 6
NBEST_CSV = 'utt_id,hyp,score\nu1,a,1\n\nu1,"two\nlines",2\nu1,c,x\n'


def test_nbest_errors_name_the_line(tmp_path):
    (tmp_path / "nbest.csv").write_text(NBEST_CSV)
    with pytest.raises(InputError, match=r"^line 6 of .*nbest.csv \(utterance 'u1'\): the first-pass score 'x'"):
        read_nbest(tmp_path / "nbest.csv")
    (tmp_path / "nbest.tsv").write_text('utt_id\thyp\tscore\nu1\t"a\t1\n\n\tb\t2\n')
    with pytest.raises(InputError, match=r"^line 4 of .*nbest.tsv has no utterance id in column 'utt_id'"):
        read_nbest(tmp_path / "nbest.tsv")
    frame = pd.read_csv(tmp_path / "nbest.csv")
    with pytest.raises(InputError, match=r"^row 2 of the n-best table \(utterance 'u1'\)"):
        read_nbest(frame)  # in memory: the 0-based row, as before
    frame.to_parquet(tmp_path / "nbest.parquet")
    with pytest.raises(InputError, match=r"^row 2 of .*nbest.parquet \(utterance 'u1'\)"):
        read_nbest(tmp_path / "nbest.parquet")


def test_pairs_errors_name_the_lines(tmp_path):
    from pllscore.eval.runs import run_pairs

    (tmp_path / "pairs.tsv").write_text("good\tbad\nA cat.\tA cats.\n\n \tDogs bark.\nBirds fly.\t\n")
    with pytest.raises(InputError, match=r"column 'good' of .*pairs.tsv has empty texts \(lines 4\)"):
        run_pairs(tmp_path / "pairs.tsv", ["no-model-is-loaded"], good="good", bad="bad")


def test_word_table_errors_name_the_line(tmp_path):
    (tmp_path / "words.csv").write_text('sid,pos,w,rt\na,1,The,300\n\na,2,"cat,\nsat",310\na,3,,320\n')
    options = {"text_column": "sid", "position_column": "pos", "word_column": "w", "measures": ["rt"]}
    with pytest.raises(InputError, match=r"^word 'cat,\\nsat' at line 4 of .*words.csv has whitespace inside"):
        read_word_table(tmp_path / "words.csv", **options)
    (tmp_path / "words.tsv").write_text("sid\tpos\tw\trt\na\t1\tThe\t300\n\na\t2\tcat\tslow\n")
    with pytest.raises(InputError, match=r"^measure 'rt' is not a number at line 4 of .*words.tsv: 'slow'"):
        read_word_table(tmp_path / "words.tsv", **options)
    (tmp_path / "pos.tsv").write_text("sid\tpos\tw\trt\na\t1\tThe\t300\na\ttwo\tcat\t310\n")
    with pytest.raises(InputError, match=r"^position 'two' at line 3 of .*pos.tsv \(column 'pos'\) is not a number"):
        read_word_table(tmp_path / "pos.tsv", **options)


def test_texts_given_as_a_list_are_named_as_texts():
    assert read_input(["A.", "B."]).where(1) == "text 1 of the texts given"
