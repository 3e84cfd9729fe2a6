"""A TSV cell is the exact string between tabs, read and written as it is (no CSV quoting), by every reader:
``score``, ``pairs``, ``rescore``, ``reading-times`` (word and frequency tables); CSV keeps its quoting.

Each reader's test writes a .tsv whose cells hold quotes (``"Hello," she said.``, an unclosed ``"Hi,``),
runs the reader, and compares the text it scored, as written out, with the file's bytes, and the score
with the model's score of the literal string (the issue's figure: -24.6295 nats with tiny-gpt2, where
the unquoted ``Hello, she said.`` gives -26.0087).
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import pllscore
from pllscore import InputError
from pllscore.io.delimited import tsv_text
from pllscore.io.readers import read_input, read_table

QUOTED, OPEN = '"Hello," she said.', '"Hi,'
QUOTED_NATS = -24.6295  # tiny-gpt2's log-probability of QUOTED, quotes included (4 decimals)


def _cells(path, column):
    """The cells of ``column`` in a TSV file, split from its bytes by hand: a cell is what lies between tabs."""
    lines = path.read_bytes().decode("utf-8").split("\n")
    header = lines[0].split("\t")
    return [line.split("\t")[header.index(column)] for line in lines[1:] if line]


def _total(scorer, text):
    return scorer.score([text])[0].total


# --- the readers alone (no model) -----------------------------------------------------------------------------------


def test_tsv_cells_are_read_as_they_are_and_csv_keeps_its_quoting(tmp_path):
    (tmp_path / "a.tsv").write_text(f'id\ttext\n1\t{QUOTED}\n2\t{OPEN}\n3\t"x" and "y"\n')
    assert read_input(tmp_path / "a.tsv").texts == [QUOTED, OPEN, '"x" and "y"']
    assert read_table(tmp_path / "a.tsv")["text"].tolist() == [QUOTED, OPEN, '"x" and "y"']
    (tmp_path / "a.csv").write_text('id,text\n1,"""Hello,"" she said."\n2,"a, b"\n')
    assert read_input(tmp_path / "a.csv").texts == [QUOTED, "a, b"]


def test_an_unclosed_quote_in_csv_names_its_line(tmp_path):
    (tmp_path / "a.csv").write_text('id,text\n1,fine\n\n2,"Hi,\n3,more\n')
    with pytest.raises(InputError, match=r"^line 4 of .*a.csv opens a quoted cell that is never closed; close it"):
        read_input(tmp_path / "a.csv")


def test_a_tab_separated_file_named_csv_is_refused(tmp_path):
    (tmp_path / "a.csv").write_text("id\ttext\n1\tThe cat sat.\n")
    with pytest.raises(InputError, match=r"a.csv looks tab-separated \(its header holds tabs and no comma\); rename"):
        read_input(tmp_path / "a.csv")
    with pytest.raises(InputError, match="looks tab-separated"):
        read_table(tmp_path / "a.csv")
    assert read_input(tmp_path / "a.csv", fmt="tsv").texts == ["The cat sat."]
    (tmp_path / "b.csv").write_text("text\n1\tThe cat sat.\n")  # one column whose text holds a tab: fine
    assert read_input(tmp_path / "b.csv").texts == ["1\tThe cat sat."]


def test_csv_lines_count_blank_lines_and_quoted_line_breaks(tmp_path):
    (tmp_path / "a.csv").write_text('id,text\n1,"two\nlines"\n\n2,x\n3,\n')
    with pytest.raises(InputError, match=r"empty or whitespace-only texts \(lines 6\)"):
        read_input(tmp_path / "a.csv")
    assert read_input(tmp_path / "a.csv", skip_empty=True).lines == [2, 5]


def test_tsv_output_writes_cells_as_they_are_and_quotes_only_what_tsv_cannot_hold():
    frame = pd.DataFrame({"text": [QUOTED, OPEN, "a\tb", "two\nlines"], "x": [1.5, 2.0, 3.0, np.nan]})
    text = tsv_text(frame, header=True)
    assert text.split("\n")[1:3] == [f"{QUOTED}\t1.5", f"{OPEN}\t2.0"]
    assert '"a\tb"\t3.0\n"two\nlines"\t\n' in text  # a tab or a line break: quoted as in CSV
    back = pd.read_csv(io.StringIO(tsv_text(frame.iloc[:2], header=True)), sep="\t", quoting=3)
    assert back["text"].tolist() == [QUOTED, OPEN]


# --- each command: the text scored, as written out, is the file's cell ----------------------------------------------


@pytest.mark.shared
def test_score_reads_and_writes_tsv_cells_as_they_are(tmp_path, shared_gpt2):
    (tmp_path / "in.tsv").write_text(f"id\ttext\n1\t{QUOTED}\n2\t{OPEN}\n")
    pllscore.score_file(tmp_path / "in.tsv", tmp_path / "out.tsv", model=shared_gpt2, progress=False)
    assert _cells(tmp_path / "out.tsv", "text") == _cells(tmp_path / "in.tsv", "text") == [QUOTED, OPEN]
    out = pd.read_csv(tmp_path / "out.tsv", sep="\t", quoting=3)
    assert out["causal_logprob"].tolist() == pytest.approx(
        [_total(shared_gpt2, QUOTED), _total(shared_gpt2, OPEN)], abs=1e-4
    )
    assert out["causal_logprob"][0] == pytest.approx(QUOTED_NATS, abs=1e-4)
    pllscore.score_file(tmp_path / "in.tsv", tmp_path / "out.csv", model=shared_gpt2, progress=False)
    assert pd.read_csv(tmp_path / "out.csv")["text"].tolist() == [QUOTED, OPEN]  # CSV output quotes as CSV does


@pytest.mark.shared
def test_pairs_reads_tsv_cells_as_they_are(tmp_path, shared_gpt2):
    from pllscore.eval.runs import run_pairs

    (tmp_path / "pairs.tsv").write_text(f"good\tbad\n{QUOTED}\t{OPEN}\n")
    run_pairs(tmp_path / "pairs.tsv", [shared_gpt2], good="good", bad="bad", output=tmp_path / "out", progress=False)
    scored = pd.read_parquet(tmp_path / "out" / "pairs.parquet")
    assert [scored["good"][0], scored["bad"][0]] == [*_cells(tmp_path / "pairs.tsv", "good"), OPEN]
    assert scored["good_logprob"][0] == pytest.approx(QUOTED_NATS, abs=1e-4)
    assert scored["bad_logprob"][0] == pytest.approx(_total(shared_gpt2, OPEN), abs=1e-4)


@pytest.mark.shared
def test_rescore_reads_and_writes_tsv_cells_as_they_are(tmp_path, shared_gpt2):
    from pllscore.rescoring.run import rescore

    (tmp_path / "nbest.tsv").write_text(f"utt_id\thyp\tscore\nu1\t{QUOTED}\t0.5\nu1\t{OPEN}\t1\n")
    rescore(tmp_path / "nbest.tsv", tmp_path / "out.tsv", model=shared_gpt2, progress=False)
    assert _cells(tmp_path / "out.tsv", "hyp") == _cells(tmp_path / "nbest.tsv", "hyp") == [QUOTED, OPEN]
    out = pd.read_csv(tmp_path / "out.tsv", sep="\t", quoting=3)
    assert out["lm_logprob"].tolist() == pytest.approx([QUOTED_NATS, _total(shared_gpt2, OPEN)], abs=1e-4)
    stream = io.StringIO()
    rescore(tmp_path / "nbest.tsv", model=shared_gpt2, progress=False, stream=stream)  # TSV on stdout
    assert pd.read_csv(io.StringIO(stream.getvalue()), sep="\t", quoting=3)["hyp"].tolist() == [QUOTED, OPEN]


@pytest.mark.shared
def test_reading_times_reads_tsv_words_as_they_are(tmp_path, shared_gpt2):
    sentences = [
        'the cat sat on the mat and it was "scary" to see',
        "a dog ran in the park and we sat on the grass",
        'we ate it , then "Hi, the cat sat down on the mat',
        "then it ran on , and the cat sat , and we ate",
    ]
    rows = [
        f"s{t}\t{i + 1}\t{w}\t{300 + 7 * ((i * 5 + t) % 11)}"
        for t, sentence in enumerate(sentences)
        for i, w in enumerate(sentence.split())
    ]
    (tmp_path / "words.tsv").write_text("sid\tpos\tw\trt\n" + "\n".join(rows) + "\n")
    (tmp_path / "counts.tsv").write_text('word\tcount\n"scary"\t5\nscary\t1\nthe\t4\n')
    pllscore.reading_times(tmp_path / "words.tsv", shared_gpt2, text_column="sid", position_column="pos",
                           word_column="w", measures="rt", output=tmp_path / "out", spillover=0,
                           frequency=str(tmp_path / "counts.tsv"))  # fmt: skip
    words = pd.read_csv(tmp_path / "out" / "words.csv", keep_default_na=False, dtype={"word": str})
    assert words["word"].tolist() == _cells(tmp_path / "words.tsv", "w")  # '"scary"' and '"Hi,' as written
    (column,) = [c for c in words.columns if c.endswith("_surprisal_bits")]
    want = shared_gpt2.score(sentences, words="whitespace", long="window")
    bits = np.concatenate([-r.word_scores / np.log(2) for r in want])
    np.testing.assert_allclose(words[column].to_numpy(float), bits, atol=1e-3, rtol=0)
    # the frequency table is read as written too: a word is looked up without its punctuation, and scary
    # has 1 of the 10 counts (Zipf = log10(1e8)); read with CSV quoting, '"scary"' would add its 5
    scary = words.loc[words["word"] == '"scary"', "zipf"].iloc[0]
    assert scary == pytest.approx(8.0, abs=1e-6)
