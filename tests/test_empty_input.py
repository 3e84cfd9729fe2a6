"""An input without text (an empty file, a table's header only, empty stdin, every text skipped) still gives an
output with its columns, which pandas reads as a frame of 0 rows, and says so; the summary counts the input's texts.
"""

from __future__ import annotations

import io

import pandas as pd
import pytest

import pllscore
from tests.conftest import TINY_GPT2
from tests.test_cli import run

pytestmark = pytest.mark.shared


def _columns_of_one_text(tmp_path, scorer, name, content, **options):
    """The columns a run over ``content`` plus one text gets (the reference for the empty run's header)."""
    path = tmp_path / f"one-{name}"
    path.write_text(content)
    out = io.StringIO()
    pllscore.score_file(path, None, model=scorer, stream=out, progress=False, format="csv", **options)
    return list(pd.read_csv(io.StringIO(out.getvalue())).columns)


@pytest.mark.parametrize(
    "name, content, full, options",
    [
        ("empty.txt", "", "One text.\n", {}),
        ("header.csv", "id,text\n", "id,text\n1,One text.\n", {}),
        ("header.tsv", "id\ttext\n", "id\ttext\n1\tOne text.\n", {"level": "word", "id_column": "id"}),
        ("empty.jsonl", "", '{"text": "One text."}\n', {}),
    ],
)
def test_no_text_gives_the_header_and_says_so(tmp_path, shared_gpt2, name, content, full, options):
    (tmp_path / name).write_text(content)
    for out in ("out.csv", "out.tsv"):
        summary = pllscore.score_file(tmp_path / name, tmp_path / out, model=shared_gpt2, progress=False, **options)
        frame = pd.read_csv(tmp_path / out, sep="," if out.endswith(".csv") else "\t")
        assert len(frame) == 0
        assert list(frame.columns) == _columns_of_one_text(tmp_path, shared_gpt2, name, full, **options)
        assert summary.rows == 0 and "scored 0 of 0 texts" in summary.line()
        assert summary.line().endswith("; the input held no text: the output has its columns and no row")
    pllscore.score_file(tmp_path / name, tmp_path / "out.parquet", model=shared_gpt2, progress=False, **options)
    assert list(pd.read_parquet(tmp_path / "out.parquet").columns) == list(frame.columns)
    again = pllscore.score_file(
        tmp_path / name, tmp_path / "out.csv", model=shared_gpt2, progress=False, resume=True, **options
    )
    assert again.scored == 0 and len(pd.read_csv(tmp_path / "out.csv")) == 0


def test_empty_stdin_and_empty_file_on_the_command_line(tmp_path):
    done = run("score", "-", "--model", str(TINY_GPT2), stdin="")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "text_id\ttext\tn_tokens\tn_words\tcausal_logprob\tcausal_logprob_mean\n"
    assert "the input held no text" in done.stderr
    (tmp_path / "empty.txt").write_text("")
    done = run("score", str(tmp_path / "empty.txt"), "--model", str(TINY_GPT2), "-o", str(tmp_path / "x.csv"))
    assert done.returncode == 0 and "scored 0 of 0 texts" in done.stderr and "held no text" in done.stderr
    assert list(pd.read_csv(tmp_path / "x.csv").columns) == [
        "text_id",
        "text",
        "n_tokens",
        "n_words",
        "causal_logprob",
        "causal_logprob_mean",
    ]


def test_skip_empty_counts_the_input_texts(tmp_path, shared_gpt2):
    (tmp_path / "four.txt").write_text("One.\n\nThree.\n   \n")
    summary = pllscore.score_file(
        tmp_path / "four.txt", tmp_path / "out.csv", model=shared_gpt2, progress=False, skip_empty=True
    )
    assert summary.line().startswith("scored 2 of 4 texts in ")
    assert "skipped 2 empty (lines 2, 4)" in summary.line()
    (tmp_path / "blank.txt").write_text("\n \n")
    summary = pllscore.score_file(
        tmp_path / "blank.txt", tmp_path / "blank.csv", model=shared_gpt2, progress=False, skip_empty=True
    )
    assert summary.line().startswith("scored 0 of 2 texts in ") and "held empty texts only" in summary.line()
    assert len(pd.read_csv(tmp_path / "blank.csv")) == 0
