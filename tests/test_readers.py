"""Reading inputs: what a row is for each format, and that reading in blocks (the Ray engine) is
reading whole (the local engine) cut into pieces: the same rows, cells, row numbers and errors."""

from __future__ import annotations

import pandas as pd
import pytest

from pllscore import InputError
from pllscore.io import decoding
from pllscore.io.readers import read_blocks, read_input

ODD_TXT = (
    "\ufeffFirst line.\r\n"  # BOM dropped, CRLF
    "Line\u2028separator, next\x85line, form\x0cfeed and\ta tab.  \n"  # all kept inside the line
    "   \n"  # whitespace only
    "\n"  # empty
    "Two carriage returns.\r\r\n"
    "No final newline."
)
ODD_CSV = (
    "\ufeffid,sentence,note\r\n"
    "1,NA,\r\n"
    "2,null,NA\r\n"
    "3,007,2024-01-01\r\n"
    '4,True,""\r\n'
    '5,"a, b and ""quotes""","multi\nline"\r\n'
    '6,"",x\r\n'
    "7,  ,y\r\n"
)
ODD_TSV = (  # no quoting in TSV: every quote is part of its cell
    "\ufeffid\tsentence\tnote\r\n"
    "1\tNA\t\r\n"
    '2\t"Hello," she said.\tNA\r\n'
    '3\t"Hi,\t""\r\n'
    "\r\n"  # a blank line is no row, but is counted in the line numbers
    "4\t\tx\n"
    "5\t  \ty\n"
    '6\t"a" b "c"\t\n'
)
ODD_JSONL = '{"text": "Ünïcödé\\u2028x", "id": 1}\n\n{"id": "x", "text": "b", "extra": [1, 2]}\r\n{"text": " "}\n'


@pytest.fixture
def odd(tmp_path):
    files = {
        "a.txt": ODD_TXT.encode(),
        "b.csv": ODD_CSV.encode(),
        "c.tsv": ODD_TSV.encode(),
        "d.jsonl": ODD_JSONL.encode(),
        "mac.csv": b"id,sentence\r1,one\r2,\r3,three\r,",  # lone CR line ends (old Mac): read whole
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    pd.DataFrame({"sentence": ["a", "b", None, "c", " "], "n": [1, None, 3, 4, 5]}).to_parquet(tmp_path / "e.parquet")
    return tmp_path


def _table_state(t):
    return t.frame, t.column, t.rows, t.lines, t.skipped


def test_what_a_row_is(odd):
    t = read_input(odd / "a.txt", skip_empty=True)
    assert t.texts == [
        "First line.",
        "Line\u2028separator, next\x85line, form\x0cfeed and\ta tab.  ",
        "Two carriage returns.",
        "No final newline.",
    ]
    assert (t.rows, t.lines, t.skipped) == ([0, 1, 4, 5], [1, 2, 5, 6], [2, 3])
    t = read_input(odd / "b.csv", skip_empty=True)
    assert list(t.frame.columns) == ["id", "sentence", "note"]  # the BOM is not part of the first name
    assert t.texts == ["NA", "null", "007", "True", 'a, b and "quotes"']
    assert t.frame["note"].tolist() == ["", "NA", "2024-01-01", "", "multi\nline"]
    assert t.frame["id"].tolist() == ["1", "2", "3", "4", "5"] and t.skipped == [5, 6]
    t = read_input(odd / "c.tsv", skip_empty=True)
    assert t.texts == ["NA", '"Hello," she said.', '"Hi,', '"a" b "c"'] and t.frame["note"][2] == '""'
    assert (t.rows, t.lines, t.skipped, t.skipped_lines) == ([0, 1, 2, 5], [2, 3, 4, 8], [3, 4], [6, 7])
    t = read_input(odd / "d.jsonl", skip_empty=True)
    assert list(t.frame.columns) == ["text", "id", "extra"] and t.texts == ["Ünïcödé\u2028x", "b"]
    assert (t.rows, t.lines, t.skipped) == ([0, 1], [1, 3], [2])


@pytest.mark.parametrize("name", ["a.txt", "b.csv", "c.tsv", "d.jsonl", "e.parquet", "mac.csv"])
@pytest.mark.parametrize("skip_empty", [True, False])
@pytest.mark.parametrize("block_rows", [1, 2, 3, 100])
def test_blocks_are_the_whole_read_cut_into_pieces(odd, monkeypatch, name, skip_empty, block_rows):
    monkeypatch.setattr(decoding, "_READ", 5)  # decode in tiny pieces: no piece boundary may show
    try:
        whole = _table_state(read_input(odd / name, skip_empty=skip_empty))
    except InputError as e:
        with pytest.raises(InputError) as blocked:
            list(read_blocks(odd / name, skip_empty=skip_empty, block_rows=block_rows))
        assert str(blocked.value) == str(e)  # every empty text listed, not only the first block's
        return
    blocks = list(read_blocks(odd / name, skip_empty=skip_empty, block_rows=block_rows))
    assert [len(b.rows) + len(b.skipped) for b in blocks[:-1]] == [block_rows] * (len(blocks) - 1)
    joined = pd.concat([b.frame for b in blocks], ignore_index=True)
    frame, column, rows, lines, skipped = whole
    pd.testing.assert_frame_equal(joined, frame)
    assert {b.column for b in blocks} == {column}
    assert sum((b.rows for b in blocks), []) == rows and sum((b.lines for b in blocks), []) == lines
    assert sum((b.skipped for b in blocks), []) == skipped


def test_invalid_utf8_after_a_bom_names_the_right_line_byte_and_column(tmp_path):
    (tmp_path / "x.txt").write_bytes(b"\xef\xbb\xbfFirst.\nCaf\xe9 au lait.\n")
    with pytest.raises(InputError, match=r"line 2 of .*x.txt is not valid UTF-8 \(byte 0xe9 at column 4\)"):
        read_input(tmp_path / "x.txt")


def test_the_first_error_of_the_file_wins_whatever_the_blocks(tmp_path):
    # a whole-file read decodes everything before it checks a text: a bad byte on line 6 is
    # reported, not the empty line 2, even when line 2 is in an earlier block
    (tmp_path / "x.txt").write_bytes(b"One.\n\nThree.\nFour.\nFive.\nSi\xffx.\n")
    for block_rows in (None, 1, 2):
        with pytest.raises(InputError, match="line 6 of .* is not valid UTF-8"):
            list(read_blocks(tmp_path / "x.txt", block_rows=block_rows))
    # and a ragged row (a parse error) is reported rather than a missing column
    (tmp_path / "y.csv").write_text("sentence\nOne.\nTwo.\nThree.\n4,5\n")
    for block_rows in (None, 1):
        with pytest.raises(InputError, match=r"line 5 of .*y.csv has 2 cells but its header \(line 1\) has 1"):
            list(read_blocks(tmp_path / "y.csv", column="nope", block_rows=block_rows))


def test_block_rows_must_be_positive(odd):
    with pytest.raises(InputError, match="block_rows must be positive"):
        read_blocks(odd / "a.txt", block_rows=0)
