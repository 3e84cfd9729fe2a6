"""What a new user stumbled on (issue 26): contradictory options refused in one line, JSON Lines written with
every digit, ``diagnose`` refusing an existing folder unless ``--force``, and ``--quiet``/``--progress`` meaning
the same on every command."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import SHARED, TINY_BERT, TINY_GPT2
from tests.test_cli import run

pytestmark = pytest.mark.shared

BERT, GPT2 = str(TINY_BERT), str(TINY_GPT2)
BLIMP = SHARED.parent / "data" / "blimp"
SUITE = Path(__file__).parent / "data" / "syntaxgym" / "agreement.json"
TEXTS = ["The traveler lost the souvenir.", "The hooligan wrecked the vehicle.", "A cat sat on the mat."]


def _one_line(done, *words: str) -> str:
    assert done.returncode == 1, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "in.txt").write_text("\n".join(TEXTS) + "\n")
    pd.DataFrame(
        {"good": TEXTS[:2], "bad": ["The traveler lost souvenir the.", "Hooligan the wrecked vehicle."]}
    ).to_csv(tmp_path / "pairs.csv", index=False)
    return tmp_path


# --- contradictions ------------------------------------------------------------------------------------------


def test_resume_with_force_is_refused(files):
    args = ["score", str(files / "in.txt"), "-m", GPT2, "-o", str(files / "o.csv")]
    _one_line(run(*args, "--resume", "--force"), "--resume", "--force", "not both")
    assert not (files / "o.csv").exists() and not (files / "o.csv.meta.json").exists()


@pytest.mark.parametrize(("name", "fmt"), [("o.csv", "parquet"), ("o.parquet", "tsv"), ("o.jsonl", "csv")])
def test_a_format_that_contradicts_the_extension_is_refused(files, name, fmt):
    _one_line(run("score", str(files / "in.txt"), "-m", GPT2, "-o", str(files / name), "--format", fmt),
              f"--format {fmt}", name)  # fmt: skip
    assert not (files / name).exists()


def test_a_format_the_extension_agrees_with_or_cannot_name_is_taken(files):
    for name, fmt in (("o.csv", "csv"), ("o.scores", "jsonl"), ("o.txt", "csv")):
        done = run("score", str(files / "in.txt"), "-m", GPT2, "-o", str(files / name), "--format", fmt, "-q")
        assert done.returncode == 0, done.stderr
    assert (files / "o.txt").read_text().startswith("text_id,text,")  # CSV, as asked: a .txt is any text table


def test_stride_without_long_window_is_refused(files):
    _one_line(run("score", "--text", "The cat sat.", "-m", GPT2, "--stride", "8"), "--stride", "--long window")
    done = run("score", "--text", "The cat sat.", "-m", GPT2, "--stride", "8", "--long", "window", "-q")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("command", ["pairs", "blimp", "syntaxgym"])
def test_metric_with_only_causal_models_is_refused(files, command):
    if command == "pairs":
        args = ["pairs", str(files / "pairs.csv"), "--good", "good", "--bad", "bad"]
    elif command == "blimp":
        args = ["blimp", "--data", str(BLIMP), "--paradigm", "anaphor_number_agreement", "--limit", "3"]
    else:
        args = ["syntaxgym", str(SUITE)]
    _one_line(run(*args, "-m", GPT2, "--metric", "whole-word", "-o", str(files / "out")), "causal", "metric")
    assert not (files / "out" / "summary.csv").exists()
    if command != "syntaxgym":  # a masked model beside it takes the metric
        done = run(*args, "-m", GPT2, "-m", BERT, "--metric", "whole-word", "-q")
        assert done.returncode == 0, done.stderr


def test_score_still_refuses_metric_with_a_causal_model():
    _one_line(run("score", "--text", "The cat sat.", "-m", GPT2, "--metric", "original"), "causal", "metric")


def test_a_span_past_the_text_is_refused(shared_bert):
    import pllscore

    text = "My word is souvenir"
    assert np.isfinite(shared_bert.score([text], spans=[(11, len(text))])[0].total)
    for span in [(11, len(text) + 1), (-1, 4), (5, 3), (30, 40)]:
        with pytest.raises(pllscore.InputError, match="outside the text") as e:
            shared_bert.score([text], spans=[span])
        assert "\n" not in str(e.value) and f"{span}" in str(e.value)


# --- JSON Lines keep every digit -----------------------------------------------------------------------------


def _bits(values) -> list[bytes]:
    return [struct.pack("<d", float(v)) for v in values]


@pytest.mark.parametrize("model", [BERT, GPT2])
def test_jsonl_output_reads_back_bit_for_bit(files, model):
    """Every float of a JSON Lines output is the float64 of the Parquet (and CSV) output, not 10 digits of it."""
    extra = ["--metric", "all"] if model == BERT else []
    outs = {}
    for fmt in ("jsonl", "parquet", "csv"):
        outs[fmt] = files / f"o.{fmt}"
        done = run("score", str(files / "in.txt"), "-m", model, *extra, "--level", "token", "-o", str(outs[fmt]), "-q")
        assert done.returncode == 0, done.stderr
    lines = outs["jsonl"].read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    parquet = pd.read_parquet(outs["parquet"])
    csv = pd.read_csv(outs["csv"], float_precision="round_trip")
    floats = [c for c in parquet.columns if parquet[c].dtype == np.float64]
    assert floats and len(rows) == len(parquet) > 3
    for c in floats:
        got = [r[c] for r in rows]
        assert _bits(got) == _bits(parquet[c]) == _bits(csv[c]), c
    # a sum of float32 log-probabilities needs more than pandas' 10 digits: the old writer lost them
    assert any(len(repr(float(v)).lstrip("-").replace(".", "").lstrip("0")) > 10 for c in floats for v in parquet[c])
    # the rest as pandas reads and writes it
    pd.testing.assert_frame_equal(pd.read_json(outs["jsonl"], lines=True, precise_float=True), parquet)


def test_jsonl_to_stdout_keeps_every_digit(files):
    done = run("score", str(files / "in.txt"), "-m", GPT2, "--format", "jsonl", "-q")
    assert done.returncode == 0, done.stderr
    want = pd.read_csv(pd.io.common.StringIO(run("score", str(files / "in.txt"), "-m", GPT2, "-q").stdout), sep="\t",
                       float_precision="round_trip")  # fmt: skip
    assert _bits(json.loads(line)["causal_logprob"] for line in done.stdout.splitlines()) == _bits(
        want["causal_logprob"]
    )


def test_jsonl_writes_missing_and_infinite_as_null_and_python_values():
    from pllscore.io.parts import serialize

    frame = pd.DataFrame({"x": [0.1 + 0.2, np.nan, np.inf], "n": pd.array([1, None, 3], dtype="Int64"),
                          "s": ["a/b", None, "é"], "f": np.float32([0.1, 1, 2])})  # fmt: skip
    lines = serialize(frame, "jsonl", True).splitlines()
    assert [json.loads(line) for line in lines] == [
        {"x": 0.30000000000000004, "n": 1, "s": "a/b", "f": float(np.float32(0.1))},
        {"x": None, "n": None, "s": None, "f": 1.0},
        {"x": None, "n": 3, "s": "é", "f": 2.0},
    ]


# --- diagnose: no silent reuse of a folder -------------------------------------------------------------------


def test_diagnose_refuses_an_existing_folder_and_force_replaces_it_whole(files):
    data = files / "s.txt"
    data.write_text("\n".join([*TEXTS, "The dog ran home.", "Birds sing at dawn."]) + "\n")
    out = files / "d"
    base = ["diagnose", "-m", BERT, "--data", str(data), "--metric", "original", "-o", str(out), "-q"]
    done = run(*base, "-c", GPT2)
    assert done.returncode == 0, done.stderr
    assert {"agreement.csv", "agreement.png"} <= {p.name for p in out.iterdir()}
    first = (out / "summary.csv").read_text()

    _one_line(run(*base), "not empty", "--force")
    assert (out / "summary.csv").read_text() == first and (out / "agreement.csv").exists()  # left as it was

    done = run(*base, "--force")  # no causal model this time: no agreement files may be left
    assert done.returncode == 0, done.stderr
    names = {p.name for p in out.iterdir()}
    assert not {"agreement.csv", "agreement.png"} & names and "summary.csv" in names
    assert "agreement" not in pd.read_csv(out / "summary.csv")["analysis"].tolist()
    assert sorted(p.name for p in files.iterdir() if p.name.startswith(".")) == []  # no temporary folder left

    other = files / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("my own file")
    _one_line(run("diagnose", "-m", BERT, "--data", str(data), "-o", str(other), "--force"), "other files")
    assert (other / "notes.txt").read_text() == "my own file"


# --- --quiet and --progress ----------------------------------------------------------------------------------


def _commands(files):
    """Each long command, with an output (file or folder) and without (None where -o is required)."""
    out = str(files / "out")
    pairs = ["pairs", str(files / "pairs.csv"), "--good", "good", "--bad", "bad", "-m", GPT2]
    blimp = ["blimp", "--data", str(BLIMP), "--paradigm", "anaphor_number_agreement", "--limit", "4", "-m", GPT2]
    diagnose = ["diagnose", "-m", BERT, "--data", str(files / "in.txt"), "--metric", "original"]
    syntaxgym = ["syntaxgym", str(SUITE), "-m", GPT2]
    score = ["score", str(files / "in.txt"), "-m", GPT2]
    return {
        "score": ([*score, "-o", out + ".csv", "--force"], score),
        "pairs": ([*pairs, "-o", out, "--force"], pairs),
        "blimp": ([*blimp, "-o", out, "--force"], blimp),
        "syntaxgym": ([*syntaxgym, "-o", out, "--force"], syntaxgym),
        "diagnose": ([*diagnose, "-o", out, "--force"], None),
    }  # fmt: skip


@pytest.mark.parametrize("command", ["score", "pairs", "blimp", "syntaxgym", "diagnose"])
def test_quiet_prints_only_errors_and_the_results_with_no_output(files, command):
    (files / "out").mkdir()
    with_output, without = _commands(files)[command]
    done = run(*with_output, "--quiet")
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("", "")
    loud = run(*with_output)
    assert loud.returncode == 0 and loud.stdout + loud.stderr != ""
    if without is not None:  # the results go to stdout: quiet keeps them, and nothing else
        done = run(*without, "--quiet")
        assert done.returncode == 0 and done.stderr == ""
        assert done.stdout == run(*without).stdout != ""


@pytest.mark.parametrize("command", ["score", "pairs", "blimp", "syntaxgym", "diagnose", "rescore"])
def test_progress_shows_the_bar_on_every_long_command(files, command):
    if command == "rescore":
        nbest = pd.DataFrame({"utt_id": ["a", "a", "b"], "hyp": TEXTS, "score": [-1.0, -2.0, -1.5]})
        nbest.to_csv(files / "nbest.csv", index=False)
        args = ["rescore", str(files / "nbest.csv"), "-m", GPT2]
    else:
        args = _commands(files)[command][0]
    quiet = run(*args)  # stderr is no terminal here: no bar unless asked
    assert quiet.returncode == 0, quiet.stderr
    assert "|" not in quiet.stderr
    done = run(*args, "--progress")
    assert done.returncode == 0, done.stderr
    # a bar was drawn (a fast run may clear it before it is redrawn at 100%: leave=False)
    assert re.search(r"\d+%\|", done.stderr), done.stderr
