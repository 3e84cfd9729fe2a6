"""`pllscore score` and `pllscore explain` through the console entry point, on ../shared/models."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pandas as pd
import pytest

from tests.conftest import TINY_BERT, TINY_GPT2

pytestmark = pytest.mark.shared

TEXTS = ["The traveler lost the souvenir.", "The hooligan wrecked the vehicle.", "She didn't go to the store!"]
BERT, GPT2 = str(TINY_BERT), str(TINY_GPT2)


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run the console entry point in this process (no torch start-up per call)."""
    from pllscore.cli import main

    out, err = io.StringIO(), io.StringIO()
    mp = pytest.MonkeyPatch()
    mp.setattr(sys, "argv", ["pllscore", *args])
    stdin_stream = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")
    mp.setattr(sys, "stdin", stdin_stream)
    mp.setattr(sys, "stdout", out)
    mp.setattr(sys, "stderr", err)
    code = 0
    try:
        main()
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        mp.undo()
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def read(path, fmt: str) -> pd.DataFrame:
    if fmt == "parquet":
        return pd.read_parquet(path)
    if fmt == "jsonl":
        return pd.read_json(path, lines=True)
    return pd.read_csv(path, sep="," if fmt == "csv" else "\t")


@pytest.fixture
def inputs(tmp_path):
    """The same three texts in every input format, with an id and an extra column."""
    frame = pd.DataFrame({"id": ["a", "b", "c"], "sentence": TEXTS, "cond": ["x", "y", "x"]})
    (tmp_path / "in.txt").write_text("\n".join(TEXTS) + "\n")
    frame.to_csv(tmp_path / "in.csv", index=False)
    frame.to_csv(tmp_path / "in.tsv", sep="\t", index=False)
    frame.to_json(tmp_path / "in.jsonl", orient="records", lines=True)
    frame.to_parquet(tmp_path / "in.parquet")
    return tmp_path


@pytest.mark.parametrize("in_fmt", ["txt", "csv", "tsv", "jsonl", "parquet"])
@pytest.mark.parametrize("out_fmt", ["csv", "tsv", "jsonl", "parquet"])
def test_every_input_and_output_format_round_trips(shared_bert, inputs, in_fmt, out_fmt):
    out = inputs / f"out.{out_fmt}"
    done = run("score", str(inputs / f"in.{in_fmt}"), "-m", BERT, "--metric", "all", "-o", str(out), "-q")
    assert done.returncode == 0, done.stderr
    frame = read(out, out_fmt)
    api = shared_bert.score(TEXTS, metric="all")
    assert frame["text_id"].tolist() == [0, 1, 2]
    for metric in api.metrics:
        column = f"{metric.replace('-', '_')}_logprob"  # word-l2r: word_l2r_logprob
        assert frame[column].tolist() == pytest.approx(api.for_metric(metric).totals.tolist(), abs=1e-9)
    if in_fmt != "txt":
        assert frame["id"].tolist() == ["a", "b", "c"] and frame["cond"].tolist() == ["x", "y", "x"]
    meta = json.loads((inputs / f"out.{out_fmt}.meta.json").read_text())
    assert meta["status"] == "complete" and meta["metrics"] == list(api.metrics) and meta["model"] == BERT
    assert {"pllscore", "torch", "transformers", "started", "revision"} <= set(meta)
    if out_fmt == "parquet":
        import pyarrow.parquet as pq

        kv = pq.read_schema(out).metadata
        assert json.loads(kv[b"pllscore"])["metrics"] == list(api.metrics)


@pytest.mark.parametrize("level", ["sentence", "word", "token"])
def test_several_metrics_equal_single_metric_runs(inputs, level):
    both = inputs / f"both-{level}.tsv"
    assert run("score", str(inputs / "in.csv"), "-m", BERT, "--metric", "original", "--metric", "whole-word",
               "--level", level, "--id-column", "id", "-o", str(both), "-q").returncode == 0  # fmt: skip
    combined = read(both, "tsv")
    for metric in ("original", "whole-word"):
        one = inputs / f"{metric}-{level}.tsv"
        assert (
            run(
                "score", str(inputs / "in.csv"), "-m", BERT, "--metric", metric, "--level", level, "-o", str(one), "-q"
            ).returncode
            == 0
        )
        single = read(one, "tsv")
        column = f"{metric.replace('-', '_')}_logprob"
        assert combined[column].tolist() == pytest.approx(single[column].tolist(), abs=1e-9)
    assert combined["id"].iloc[0] == "a"


def test_word_and_token_levels_have_spans(inputs):
    done = run("score", str(inputs / "in.txt"), "-m", BERT, "--level", "token")
    tokens = pd.read_csv(io.StringIO(done.stdout), sep="\t")
    first = tokens[tokens["text_id"] == 0]
    assert [TEXTS[0][s:e] for s, e in zip(first["start"], first["end"])][:3] == ["The", "travel", "er"]
    words = pd.read_csv(
        io.StringIO(run("score", str(inputs / "in.txt"), "-m", BERT, "--level", "word").stdout), sep="\t"
    )
    assert words[words["text_id"] == 0]["word"].tolist() == ["The", "traveler", "lost", "the", "souvenir", "."]


def test_stdin_text_option_bits_and_surprisal(shared_gpt2):
    done = run("score", "-", "-m", GPT2, "--base", "2", "--surprisal", "-q", stdin="The cat sat.\nA dog ran.\n")
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(io.StringIO(done.stdout), sep="\t")
    # the value column says what it holds: surprisal, in bits
    assert frame["text_id"].tolist() == [0, 1] and (frame["causal_surprisal_bits"] > 0).all()
    assert "causal" not in frame.columns
    import math

    want = -shared_gpt2.score(["The cat sat."])[0].total / math.log(2)
    assert frame["causal_surprisal_bits"].iloc[0] == pytest.approx(want)
    assert frame["causal_surprisal_bits_mean"].iloc[0] == pytest.approx(want / frame["n_tokens"].iloc[0])
    inline = run("score", "--text", "The cat sat.", "-m", GPT2, "--format", "jsonl", "-q")
    assert json.loads(inline.stdout.splitlines()[0])["text"] == "The cat sat."


def test_summary_reports_skipped_lines(tmp_path):
    (tmp_path / "gaps.txt").write_text("The cat sat.\n\n   \nA dog ran.\n")
    done = run("score", str(tmp_path / "gaps.txt"), "-m", BERT, "--skip-empty", "-o", str(tmp_path / "o.csv"))
    assert done.returncode == 0
    assert "skipped 2 empty" in done.stderr and "scored 2 of 4" in done.stderr  # of the input's 4 lines
    assert read(tmp_path / "o.csv", "csv")["text_id"].tolist() == [0, 3]


def test_explain_prints_grouped_table_and_draws(tmp_path):
    fig = tmp_path / "fig.svg"
    done = run("explain", TEXTS[0], TEXTS[2], "-m", BERT, "-c", GPT2, "--plot", str(fig))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2].split() == ["word", "token", "original", "word-l2r", "whole-word", "sentence-l2r", "causal"]
    assert any(line.startswith("souvenir") for line in lines) and any("= word" in line for line in lines)
    assert sum(line.startswith("sentence") for line in lines) == 2
    assert fig.read_text().lstrip().startswith("<?xml") and "<svg" in fig.read_text()


ERRORS = [
    (["score", "missing.txt", "-m", BERT], "input file 'missing.txt' not found"),
    (["score", "{in}/in.csv", "-m", BERT, "--column", "sentense"], "columns are: id, sentence, cond"),
    (["score", "{in}/in.csv", "-m", BERT, "--id-column", "ident"], "id column 'ident' not in"),
    (["score", "{in}/gaps.txt", "-m", BERT], "lines 2, 3); remove them or pass --skip-empty"),
    (["score", "{in}/latin1.txt", "-m", BERT], "line 2 of {in}/latin1.txt is not valid UTF-8"),
    (["score", "{in}/bad.jsonl", "-m", BERT], "line 2 of {in}/bad.jsonl is not valid JSON"),
    (["score", "{in}/in.txt", "-m", "no-such-model-xyz"], "not found"),
    (["score", "{in}/in.txt", "-m", GPT2, "--metric", "original"], "causal LM"),
    (["score", "{in}/in.txt", "-m", BERT, "--metric", "wordl2r"], "did you mean 'word-l2r'"),
    (["score", "{in}/long.txt", "-m", BERT], "line 2 of {in}/long.txt is 202 tokens long (special tokens included) "
                                             "but the model allows at most 128"),
    (["score", "{in}/in.txt", "-m", BERT, "-o", "{in}/exists.tsv"], "already exists; pass --resume to continue it"),
    (["score", "{in}/in.txt", "-m", BERT, "-o", "/proc/nope/out.tsv"], "cannot write output '/proc/nope/out.tsv'"),
    (["score", "{in}/in.txt", "-m", BERT, "--base", "ten"], "base must be e or a number"),
    (["score", "{in}/in.txt", "-m", BERT, "-o", "{in}/x.xlsx"], "cannot tell the output format"),
    (["score", "-m", BERT], "nothing to score"),
    (["explain", "The cat.", "-m", GPT2], "explain needs a masked LM"),
    (["explain", "The cat.", "-m", BERT, "--plot", "{in}/fig.bmp"], "use a .png, .svg or .pdf"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "message"), ERRORS, ids=[m[:30] for _, m in ERRORS])
def test_errors_are_one_line_with_nonzero_exit(inputs, args, message):
    (inputs / "gaps.txt").write_text("The cat.\n\n  \nA dog.\n")
    (inputs / "latin1.txt").write_bytes("Fine.\nCaf\xe9 au lait.\n".encode("latin-1"))
    (inputs / "bad.jsonl").write_text('{"text": "ok"}\n{"text": oops}\n')
    (inputs / "long.txt").write_text("Short.\n" + " ".join(["cat"] * 200) + "\n")
    (inputs / "exists.tsv").write_text("x\n")
    done = run(*[a.replace("{in}", str(inputs)) for a in args])
    assert done.returncode == 1
    assert message.replace("{in}", str(inputs)) in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_debug_shows_the_traceback(inputs):
    with pytest.raises(Exception, match="not found"):
        from pllscore.cli import main

        mp = pytest.MonkeyPatch()
        mp.setattr(sys, "argv", ["pllscore", "--debug", "score", "missing.txt", "-m", BERT])
        try:
            main()
        finally:
            mp.undo()


def test_help_does_not_load_torch():
    code = "import sys; from pllscore.cli import app; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
    assert run("--version").stdout.startswith("pllscore ")


def test_stride_reaches_the_causal_scorer(tmp_path, monkeypatch):
    """--stride is passed to the loaded scorer, not dropped (it once was, for named models)."""
    import pllscore.scoring.api

    seen = {}
    real = pllscore.scoring.api.load

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(pllscore.scoring.api, "load", spy)
    done = run("score", "--text", "The cat sat.", "-m", GPT2, "--long", "window", "--stride", "7", "-q")
    assert done.returncode == 0, done.stderr
    assert seen["stride"] == 7 and seen["long"] == "window"


def test_the_recorded_command_pasted_into_a_shell_runs_the_same_thing(tmp_path):
    """The meta's command is quoted as a POSIX shell reads it: an argument with spaces and both quotes survives."""
    import shlex

    text = """She said "it's fine" \\ then left."""
    out = tmp_path / "a b.csv"
    args = ["score", "--text", text, "-m", GPT2, "-o", str(out), "-q"]
    done = run(*args)
    assert done.returncode == 0, done.stderr
    command = json.loads((tmp_path / "a b.csv.meta.json").read_text())["command"]
    assert shlex.split(command) == ["pllscore", *args]
    pasted = subprocess.run(["bash", "-c", f"printf '%s\\n' {command.removeprefix('pllscore ')}"],
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert pasted.stdout.splitlines() == args
