"""`pllscore score` through the console entry point."""

from __future__ import annotations

import io
import subprocess
import sys

import pandas as pd
import pytest

from tests.conftest import TINY_BERT, TINY_GPT2

pytestmark = pytest.mark.shared


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run the console entry point in this process (no torch start-up per call)."""
    from pllscore.cli import main

    out, err = io.StringIO(), io.StringIO()
    mp = pytest.MonkeyPatch()
    mp.setattr(sys, "argv", ["pllscore", *args])
    mp.setattr(sys, "stdin", io.StringIO(stdin or ""))
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


def test_scores_match_the_api(shared_bert):
    done = _run("score", "The traveler lost the souvenir.", "-m", str(TINY_BERT), "--metric", "all", "-q")
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(io.StringIO(done.stdout), sep="\t")
    api = shared_bert.score("The traveler lost the souvenir.", metric="all")
    assert list(frame["metric"]) == list(api.metrics)
    assert frame["total"].tolist() == pytest.approx(api.totals.tolist(), abs=1e-9)


def test_stdin_and_token_level_bits(shared_gpt2):
    done = _run(
        "score",
        "-m",
        str(TINY_GPT2),
        "--level",
        "token",
        "--base",
        "2",
        "--surprisal",
        stdin="The cat sat.\nA dog ran.\n",
    )
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(io.StringIO(done.stdout), sep="\t")
    assert set(frame["index"]) == {0, 1} and (frame["unit"] == "bits").all() and (frame["surprisal"] > 0).all()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "x", "-m", "no-such-model-xyz"], "not found"),
        (["score", "", "-m", str(TINY_BERT)], "text 0 is empty"),
        (["score", "The cat.", "-m", str(TINY_GPT2), "--metric", "original"], "causal LM"),
        (["score", "The cat.", "-m", str(TINY_BERT), "--metric", "wordl2r"], "did you mean 'word-l2r'"),
        (["score", "The cat.", "-m", str(TINY_BERT), "--base", "ten"], "--base must be"),
        (["score", " ".join(["cat"] * 200), "-m", str(TINY_BERT)], "text 0 is 202 tokens long"),
    ],
)
def test_errors_are_one_line_with_nonzero_exit(args, message):
    done = _run(*args)
    assert done.returncode == 1
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_version_and_help_do_not_load_torch():
    code = "import sys; from pllscore.cli import app; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
    assert _run("--version").stdout.startswith("pllscore ")
