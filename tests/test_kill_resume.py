"""SIGKILL a running ``pllscore score`` at random moments, resume each time: the final output equals an
uninterrupted run's (bytes for text formats, rows for Parquet), and no killed run leaves a partial output.

Each run is a separate process that runs the CLI's ``main`` (``pllscore score ... --resume``) and is
killed with SIGKILL. The processes are forked from a ``forkserver`` that has run the CLI's start-up once
(tests/warm_cli.py: torch, transformers and pllscore imported), so that a kill costs the model load and the
scoring, not a fresh interpreter.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import re
import signal
import time

import pandas as pd
import pytest

import pllscore.io.writers as writers
from pllscore.jobs.local import score_file
from tests.conftest import TINY_BERT

pytestmark = pytest.mark.shared

FORMATS = ["tsv", "csv", "jsonl", "parquet"]
N_TEXTS, CHUNK, KILLS = 200, 8, 5
TEXTS = [f"Dogs {i} saw {['cats', 'mice', 'owls'][i % 3]}." for i in range(N_TEXTS)]


def _cli(argv: list[str], chunk: int) -> None:
    """The ``pllscore`` console script, in a child process; chunks are made small (the CLI has no option)."""
    import sys

    import pllscore.jobs.local

    real = pllscore.jobs.local.score_file

    def small_chunks(*args, run, **kwargs):
        return real(*args, run=run.replace(chunk_size=chunk), **kwargs)

    pllscore.jobs.local.score_file = small_chunks  # the command looks it up when it runs
    sys.argv = ["pllscore", *argv]
    from pllscore.cli import main

    main()


@pytest.fixture(scope="module")
def forkserver():
    ctx = multiprocessing.get_context("forkserver")
    # tests.warm_cli runs the CLI's start-up: without it each forked command imported transformers' modeling
    # code (5 s of the 7 s a whole run takes here), which the CLI imports before its model loads
    ctx.set_forkserver_preload(["tests.warm_cli", "pyarrow.parquet", "pllscore.jobs.local", __name__])
    return ctx


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("kill") / "in.txt"
    path.write_text("\n".join(TEXTS) + "\n")
    return path


@pytest.fixture(scope="module")
def wholes(shared_bert, corpus):
    """The uninterrupted output in every format (scored once, written four times)."""
    real, cache = shared_bert.score, {}

    def score(texts, **kwargs):
        key = tuple(getattr(texts, "texts", texts))  # texts, or their Encodings
        if key not in cache:
            cache[key] = real(texts, **kwargs)
        return cache[key]

    shared_bert.score = score
    try:
        out = {}
        for fmt in FORMATS:
            out[fmt] = corpus.parent / f"whole.{fmt}"
            score_file(corpus, out[fmt], model=shared_bert, metrics="original", chunk_size=CHUNK, progress=False)
    finally:
        del shared_bert.score
    return out


def _same(got, want, fmt):
    if fmt == "parquet":
        pd.testing.assert_frame_equal(pd.read_parquet(got), pd.read_parquet(want))
    else:
        assert got.read_bytes() == want.read_bytes()


def _committed(out, fmt):
    parts = writers.parts_path(out)
    return len(list(parts.glob(f"part-*.{fmt}"))) if parts.exists() else 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_sigkill_at_random_moments_then_resume(forkserver, corpus, wholes, tmp_path, fmt):
    rng = random.Random(FORMATS.index(fmt))
    out = tmp_path / f"o.{fmt}"
    argv = ["score", str(corpus), "-m", str(TINY_BERT), "--metric", "original", "--device", "cpu", "-o", str(out),
            "-q", "--resume"]  # fmt: skip
    n_parts = -(-N_TEXTS // CHUNK)
    landed = []
    for _ in range(KILLS):
        before = _committed(out, fmt)
        target = rng.randint(before, n_parts)  # kill once this many chunks are committed, and a moment later
        child = forkserver.Process(target=_cli, args=(argv, CHUNK))
        child.start()
        deadline = time.monotonic() + 120
        while child.is_alive() and _committed(out, fmt) < target and not out.exists():
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.05))
        if child.is_alive():
            try:
                os.kill(child.pid, signal.SIGKILL)
            except ProcessLookupError:  # it finished between the check and the kill (the forkserver reaps it)
                pass
        child.join()
        landed.append((before, _committed(out, fmt), child.exitcode))
        if out.exists():  # the output appears only when whole
            _same(out, wholes[fmt], fmt)
    killed = [k for k in landed if k[2] == -signal.SIGKILL]
    assert len(killed) >= 3, landed
    assert any(0 < after < n_parts for _, after, _ in killed), landed  # at least one kill in the middle

    child = forkserver.Process(target=_cli, args=(argv, CHUNK))
    child.start()
    child.join(300)
    assert child.exitcode == 0, landed
    _same(out, wholes[fmt], fmt)
    assert json.loads(writers.meta_path(out).read_text())["status"] == "complete"
    assert not writers.parts_path(out).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name, out.name + ".meta.json"]


def _cli_to(log: str, argv: list[str], chunk: int) -> None:
    """:func:`_cli` with stderr (file descriptor 2) going to ``log``."""
    import sys

    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 2)
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    _cli(argv, chunk)


def test_sigterm_is_handled_like_ctrl_c_then_resume(forkserver, corpus, wholes, tmp_path):
    """A batch scheduler's SIGTERM: one line on stderr, exit code 143, a meta that counts every committed part,
    and --resume finishes into the bytes of an uninterrupted run."""
    out, log = tmp_path / "o.tsv", tmp_path / "stderr.txt"
    argv = ["score", str(corpus), "-m", str(TINY_BERT), "--metric", "original", "--device", "cpu", "-o", str(out)]
    child = forkserver.Process(target=_cli_to, args=(str(log), argv, CHUNK))
    child.start()
    deadline = time.monotonic() + 120
    while child.is_alive() and _committed(out, "tsv") < 3:
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.002)
    assert child.is_alive(), "the run finished before it could be stopped"
    os.kill(child.pid, signal.SIGTERM)
    child.join(60)
    assert child.exitcode == 128 + signal.SIGTERM
    parts = _committed(out, "tsv")
    assert 3 <= parts < -(-N_TEXTS // CHUNK) and not out.exists()
    lines = [line for line in log.read_text().splitlines() if line.startswith("error:")]
    assert len(lines) == 1, log.read_text()
    # a stop after the chunk's batches, before its part is written, keeps them too
    assert re.fullmatch(
        rf"error: interrupted by SIGTERM after {parts * CHUNK} of {N_TEXTS} texts( and part of the next {CHUNK})?; "
        "they are kept, rerun with --resume to continue",
        lines[0],
    ), lines
    meta = json.loads(writers.meta_path(out).read_text())
    assert (meta["status"], meta["rows_done"]) == ("interrupted", parts * CHUNK)

    child = forkserver.Process(target=_cli_to, args=(str(log), [*argv, "--resume", "-q"], CHUNK))
    child.start()
    child.join(300)
    assert child.exitcode == 0, log.read_text()
    _same(out, wholes["tsv"], "tsv")
    assert json.loads(writers.meta_path(out).read_text())["status"] == "complete"
