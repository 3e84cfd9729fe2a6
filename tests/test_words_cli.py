"""`pllscore score --words / --words-column / --word-sep / --mask-by`, score_file(words=...), `explain --words`."""

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

TEXTS = ["The hooligan, sadly, wrecked the vehicle.", "She didn't go to the store!"]
WORDS = [["The hooligan,", "sadly,", "wrecked", "the vehicle."], ["She", "didn't", "go", "to", "the", "store!"]]


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "in.csv"
    pd.DataFrame({"id": ["a", "b"], "text": TEXTS, "words": [json.dumps(w) for w in WORDS]}).to_csv(path, index=False)
    return path


def test_cli_whitespace_words_at_word_level_equal_the_library(shared_gpt2, tmp_path):
    out = tmp_path / "w.tsv"
    done = run("score", "-t", TEXTS[0], "-t", TEXTS[1], "-m", str(TINY_GPT2), "--words", "whitespace",
               "--level", "word", "-o", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = pd.read_csv(out, sep="\t")
    assert list(got["word"]) == TEXTS[0].split() + TEXTS[1].split()
    want = shared_gpt2.score(TEXTS, words="whitespace")
    np.testing.assert_allclose(got["causal_logprob"], np.concatenate([r.word_scores for r in want]), rtol=1e-6)
    assert json.loads((tmp_path / "w.tsv.meta.json").read_text())["words"] == "whitespace"


def test_words_column_and_mask_by_words(shared_bert, table, tmp_path):
    out = tmp_path / "w.tsv"
    done = run("score", str(table), "-m", str(TINY_BERT), "--words-column", "words", "--mask-by", "words",
               "--metric", "whole-word", "--level", "word", "--id-column", "id", "-o", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = pd.read_csv(out, sep="\t")
    assert list(got["word"]) == WORDS[0] + WORDS[1]
    want = shared_bert.score(TEXTS, words=WORDS, mask_by="words", metric="whole-word")
    np.testing.assert_allclose(got["whole_word_logprob"], np.concatenate([r.word_scores for r in want]), rtol=1e-6)
    plain = shared_bert.score(TEXTS, words=WORDS, metric="whole-word")  # masks by the tokenizer's words
    assert not np.allclose(got["whole_word_logprob"], np.concatenate([r.word_scores for r in plain]))
    meta = json.loads((tmp_path / "w.tsv.meta.json").read_text())
    assert (meta["words_column"], meta["word_sep"], meta["mask_by"]) == ("words", " ", "words")


def test_words_column_with_another_separator_and_list_cells(shared_gpt2, tmp_path):
    path = tmp_path / "in.jsonl"
    rows = [{"text": "the-cat-sat", "seg": ["the", "cat", "sat"]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "w.tsv"
    score_file(path, out, model=shared_gpt2, words_column="seg", word_sep="-", level="word", progress=False)
    got = pd.read_csv(out, sep="\t")
    assert list(got["word"]) == ["the", "cat", "sat"] and list(got["start"]) == [0, 4, 8]


def test_resume_refuses_other_words(shared_bert, table, tmp_path):
    out = tmp_path / "o.tsv"
    score_file(table, out, model=shared_bert, words="whitespace", level="word", progress=False)
    with pytest.raises(InputError, match="words"):
        score_file(table, out, model=shared_bert, level="word", resume=True, progress=False)
    with pytest.raises(InputError, match="words"):
        score_file(table, out, model=shared_bert, words_column="words", level="word", resume=True, progress=False)
    with pytest.raises(InputError, match="mask_by"):
        score_file(table, out, model=shared_bert, words="whitespace", mask_by="words", level="word", resume=True,
                   progress=False)  # fmt: skip
    done = score_file(table, out, model=shared_bert, words="whitespace", level="word", resume=True, progress=False)
    assert done.scored == 0


@pytest.mark.parametrize(
    ("cells", "options", "message"),
    [
        (['["The hooligan,", "sadly,"'], {}, r"words column 'words' at line 2 of .*in.csv is not valid JSON"),
        (['{"a": 1}'], {}, "at line 2 of .*is not a list of strings"),
        (['["The", "hooligan, sadly, wrecked the car."]'], {}, r"line 2 of .*in.csv: the words in column 'words' "
                                                               r"joined by ' ' differ from it at character 33"),
        ([json.dumps(WORDS[0])], {"words_column": "nope"}, "words column 'nope' not in"),
        ([json.dumps(WORDS[0])], {"words": "whitespace"}, "either --words whitespace or --words-column words"),
        ([json.dumps(WORDS[0])], {"mask_by": "word"}, "unknown mask_by 'word'"),
        ([json.dumps(WORDS[0])], {"words_column": None, "words": "spaces"}, "unknown words 'spaces'"),
    ],
)  # fmt: skip
def test_words_errors_are_one_line_naming_the_row(shared_bert, tmp_path, cells, options, message):
    path = tmp_path / "in.csv"
    pd.DataFrame({"text": TEXTS[:1], "words": cells}).to_csv(path, index=False)
    kwargs = {"words_column": "words", **options}
    with pytest.raises(InputError, match=message) as e:
        score_file(path, None, model=shared_bert, progress=False, **kwargs)
    assert "\n" not in str(e.value)


def test_cli_bad_words_cell_is_a_one_line_error(table, tmp_path):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"text": TEXTS, "words": [json.dumps(WORDS[0]), "[oops"]}).to_csv(path, index=False)
    done = run("score", str(path), "-m", str(TINY_BERT), "--words-column", "words")
    assert done.returncode != 0 and "words column 'words' at line 3 of" in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_explain_groups_by_whitespace_words():
    done = run("explain", TEXTS[0], "-m", str(TINY_BERT), "-c", str(TINY_GPT2), "--words", "whitespace",
               "--mask-by", "words", "--metric", "whole-word")  # fmt: skip
    assert done.returncode == 0, done.stderr
    words = [line.split()[0] for line in done.stdout.splitlines()[3:] if line and not line.startswith(" ")]
    assert words[:-1] == TEXTS[0].split() and words[-1] == "sentence"
