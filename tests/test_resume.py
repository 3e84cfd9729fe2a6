"""Interrupted runs keep their work, and --resume gives the same output as an uninterrupted run."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from pllscore.scorefile import Interrupted, score_file
from tests.conftest import TINY_BERT

pytestmark = pytest.mark.shared

TEXTS = [f"The traveler lost souvenir number {i} near the {w}." for i, w in enumerate(["mat", "store", "vehicle"] * 6)]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(TEXTS) + "\n")
    return path


def _interrupt_after(scorer, monkeypatch, calls: int):
    real = scorer.score
    seen = {"n": 0}

    def score(*args, **kwargs):
        seen["n"] += 1
        if seen["n"] > calls:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(scorer, "score", score)


@pytest.mark.parametrize("fmt", ["tsv", "csv", "jsonl", "parquet"])
@pytest.mark.parametrize("level", ["sentence", "token"])
def test_ctrl_c_then_resume_equals_uninterrupted(shared_bert, corpus, tmp_path, monkeypatch, fmt, level):
    opts = dict(model=shared_bert, metrics=["original", "word-l2r"], level=level, chunk_size=4, progress=False)
    whole = tmp_path / f"whole.{fmt}"
    score_file(corpus, whole, **opts)

    part = tmp_path / f"part.{fmt}"
    with monkeypatch.context() as mp:
        _interrupt_after(shared_bert, mp, calls=2)
        with pytest.raises(Interrupted, match="interrupted after 8 of 18 texts.*--resume"):
            score_file(corpus, part, **opts)
    meta = json.loads((tmp_path / f"part.{fmt}.meta.json").read_text())
    assert meta["status"] == "interrupted" and meta["rows_done"] == 8
    partial = _read(part, fmt)  # readable, and holds exactly the finished chunks
    assert sorted(set(partial["row"])) == list(range(8))

    summary = score_file(corpus, part, resume=True, **opts)
    assert summary.resumed_from == 8 and summary.scored == 10
    if fmt == "parquet":
        pd.testing.assert_frame_equal(pd.read_parquet(part), pd.read_parquet(whole))
    else:
        assert part.read_bytes() == whole.read_bytes()
    assert json.loads((tmp_path / f"part.{fmt}.meta.json").read_text())["status"] == "complete"


def test_kill_mid_write_then_resume_equals_uninterrupted(corpus, tmp_path):
    """A SIGKILL in the middle of writing a chunk leaves half a chunk; resume cuts it off and redoes it."""
    whole, part = tmp_path / "whole.tsv", tmp_path / "part.tsv"
    script = textwrap.dedent(f"""
        import os, signal
        import pllscore.io.writers as w
        from pllscore.scorefile import score_file
        real = w.ResumableWriter.append
        calls = []
        def append(self, frame, rows_done):
            calls.append(1)
            if len(calls) == 3:  # write half of the third chunk, then die without warning
                data = w._serialize(frame, self.fmt, self._header).encode()
                with open(self.path, "ab") as f:
                    f.write(data[: len(data) // 2])
                os.kill(os.getpid(), signal.SIGKILL)
            real(self, frame, rows_done)
        w.ResumableWriter.append = append
        score_file({str(corpus)!r}, {str(part)!r}, model={str(TINY_BERT)!r}, metrics="all", chunk_size=4,
                   progress=False)
    """)
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    meta = json.loads((tmp_path / "part.tsv.meta.json").read_text())
    assert meta["status"] == "running" and meta["rows_done"] == 8
    assert part.stat().st_size > meta["bytes"]  # the half-written chunk is there

    opts = dict(model=str(TINY_BERT), metrics="all", chunk_size=4, progress=False)
    score_file(corpus, whole, **opts)
    score_file(corpus, part, resume=True, **opts)
    assert part.read_bytes() == whole.read_bytes()


def test_resume_refuses_other_settings(shared_bert, corpus, tmp_path, monkeypatch):
    out = tmp_path / "o.tsv"
    with monkeypatch.context() as mp:
        _interrupt_after(shared_bert, mp, calls=1)
        with pytest.raises(Interrupted):
            score_file(corpus, out, model=shared_bert, chunk_size=4, progress=False)
    from pllscore import InputError

    with pytest.raises(InputError, match="made with metrics=\\['word-l2r'\\].*--force"):
        score_file(corpus, out, model=shared_bert, metrics="original", chunk_size=4, resume=True, progress=False)
    done = score_file(corpus, out, model=shared_bert, metrics="original", chunk_size=4, force=True, progress=False)
    assert done.resumed_from == 0 and done.scored == len(TEXTS)


def test_interrupted_cli_exits_130(corpus, tmp_path, monkeypatch):
    import pllscore.scorefile as sf
    from tests.test_cli import run

    def stop(*args, **kwargs):
        raise sf.Interrupted("interrupted after 0 of 18 texts; the output holds them, rerun with --resume to continue")

    monkeypatch.setattr("pllscore.scorefile.score_file", stop)
    done = run("score", str(corpus), "-m", str(TINY_BERT), "-o", str(tmp_path / "o.tsv"))
    assert done.returncode == 130 and "--resume" in done.stderr


def _read(path, fmt):
    if fmt == "parquet":
        return pd.read_parquet(path)
    if fmt == "jsonl":
        return pd.read_json(path, lines=True)
    return pd.read_csv(path, sep="," if fmt == "csv" else "\t")
