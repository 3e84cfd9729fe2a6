"""Outputs are append-only with one commit point per chunk: a crash at any step, then --resume,
gives the output of an uninterrupted run (bytes for text formats, rows for Parquet)."""

from __future__ import annotations

import json
import os
import shutil

import pandas as pd
import pyarrow.parquet as pq
import pytest

import pllscore.io.parts as part_files
import pllscore.io.writers as writers
from pllscore.jobs.local import Interrupted, score_file

pytestmark = pytest.mark.shared

FORMATS = ["tsv", "csv", "jsonl", "parquet"]
TEXTS = [f"The traveler lost souvenir number {i} near the {w}." for i, w in enumerate(["mat", "store", "vehicle"] * 6)]


class Crash(BaseException):
    """Stands for a kill: no ``except Exception`` (and no ``contextlib.suppress(OSError)``) catches it."""


@pytest.fixture(scope="module")
def scorer(request):
    """The shared BERT with its scores memoised per chunk, so that the many reruns below cost only their I/O."""
    bert = request.getfixturevalue("shared_bert")
    real, cache = bert.score, {}

    def score(texts, **kwargs):
        options = repr(texts) if hasattr(texts, "encoded") else ""  # Encodings: their repr names their options
        key = (tuple(getattr(texts, "texts", texts)), options, json.dumps(kwargs, sort_keys=True, default=str))
        if key not in cache:
            cache[key] = real(texts, **kwargs)
        return cache[key]

    bert.score = score
    yield bert
    del bert.score


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(TEXTS) + "\n")
    return path


OPTS = dict(metrics=["original", "word-l2r"], chunk_size=4, progress=False)  # 18 texts: 5 chunks


def _whole(scorer, corpus, tmp_path, fmt):
    out = tmp_path / f"whole.{fmt}"
    score_file(corpus, out, model=scorer, **OPTS)
    return out


def _same(got, want, fmt):
    if fmt == "parquet":
        pd.testing.assert_frame_equal(pd.read_parquet(got), pd.read_parquet(want))
        meta = json.loads(pq.read_schema(got).metadata[b"pllscore"])
        assert meta["metrics"] == OPTS["metrics"] and meta["chunk_size"] == 4
    else:
        assert got.read_bytes() == want.read_bytes()


def _clean(out):
    """A finished output leaves nothing but itself and its sidecar."""
    assert json.loads(writers.meta_path(out).read_text())["status"] == "complete"
    assert not writers.parts_path(out).exists()
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(out.name)) == [
        out.name,
        out.name + ".meta.json",
    ]


def _fail_at(k, exc):
    """A wrapper factory: the k-th call (counting from 1) raises ``exc`` instead of running."""
    seen = {"n": 0}

    def wrap(real):
        def f(*args, **kwargs):
            seen["n"] += 1
            if seen["n"] == k:
                raise exc()
            return real(*args, **kwargs)

        return f

    return wrap, seen


def _replace_dies(k, exc):
    """``os.replace`` whose k-th call dies before renaming and leaves the temporary file, as a kill would
    (it is kept as ``*.keep`` past the clean-up a raised exception runs; :func:`_as_killed` puts it back)."""
    seen = {"n": 0}
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        seen["n"] += 1
        if seen["n"] == k:
            os.link(src, f"{os.fspath(src)}.keep")
            raise exc()
        return real(src, dst, *args, **kwargs)

    return replace, seen


def _as_killed(folder):
    for kept in folder.rglob("*.keep"):
        kept.rename(str(kept)[: -len(".keep")])


def _half_rmtree(k, exc):
    """``shutil.rmtree`` whose k-th call removes about half of the folder's files, then dies."""
    seen = {"n": 0}
    real = shutil.rmtree

    def rmtree(path, *args, **kwargs):
        seen["n"] += 1
        if seen["n"] == k:
            files = sorted(os.listdir(path))
            for name in files[::2]:
                os.unlink(os.path.join(path, name))
            raise exc()
        return real(path, *args, **kwargs)

    return rmtree, seen


# every step of a run that can be cut: the commit renames, the fsyncs (of files and folders), the
# sidecar writes, the assembly as a whole, the copying/reading of each part inside it, the clean-up
STEPS = ["replace", "fsync", "meta", "assemble", "assemble-part", "rmtree"]


def _patch(mp, step, fmt, k, exc):
    if step == "replace":
        replace, seen = _replace_dies(k, exc)
        mp.setattr(writers.os, "replace", replace)
    elif step == "fsync":
        wrap, seen = _fail_at(k, exc)
        mp.setattr(writers.os, "fsync", wrap(os.fsync))
    elif step == "meta":
        wrap, seen = _fail_at(k, exc)
        mp.setattr(writers, "write_json", wrap(writers.write_json))
    elif step == "assemble":
        wrap, seen = _fail_at(k, exc)
        mp.setattr(writers.ResumableWriter, "_assemble", wrap(writers.ResumableWriter._assemble))
    elif step == "assemble-part":
        wrap, seen = _fail_at(k, exc)
        if fmt == "parquet":
            mp.setattr(pq, "read_table", wrap(pq.read_table))
        else:
            mp.setattr(writers.shutil, "copyfileobj", wrap(shutil.copyfileobj))
    else:
        rmtree, seen = _half_rmtree(k, exc)
        mp.setattr(writers.shutil, "rmtree", rmtree)
    return seen


def _count_calls(scorer, corpus, tmp_path, monkeypatch, fmt, step):
    """How often ``step`` happens in an uninterrupted run (so that each one can be made to fail)."""
    with monkeypatch.context() as mp:
        seen = _patch(mp, step, fmt, 0, Crash)
        score_file(corpus, tmp_path / f"count.{fmt}", model=scorer, force=True, **OPTS)
    return seen["n"]


@pytest.mark.parametrize("exc", [Crash, KeyboardInterrupt], ids=["crash", "ctrl-c"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_failure_at_every_step_then_resume_equals_uninterrupted(scorer, corpus, tmp_path, monkeypatch, fmt, exc):
    whole = _whole(scorer, corpus, tmp_path, fmt)
    tried = 0
    for step in STEPS:
        calls = _count_calls(scorer, corpus, tmp_path, monkeypatch, fmt, step)
        assert calls >= 1, step
        for k in range(1, calls + 1):
            out = tmp_path / f"{step}-{k}.{fmt}"
            with monkeypatch.context() as mp:
                _patch(mp, step, fmt, k, exc)
                with pytest.raises((Crash, KeyboardInterrupt, Interrupted)):
                    score_file(corpus, out, model=scorer, **OPTS)
            _as_killed(tmp_path)
            # the output appears only when whole
            if out.exists():
                _same(out, whole, fmt)
            score_file(corpus, out, model=scorer, resume=True, **OPTS)
            _same(out, whole, fmt)
            _clean(out)
            tried += 1
    assert tried >= 20


@pytest.mark.parametrize("fmt", FORMATS)
def test_failures_at_every_step_of_every_resume(scorer, corpus, tmp_path, monkeypatch, fmt):
    """Crash, resume and crash again at the next step, until a resume gets through: still the same output."""
    whole = _whole(scorer, corpus, tmp_path, fmt)
    out = tmp_path / f"again.{fmt}"
    k, done = 1, False
    while not done:
        with monkeypatch.context() as mp:
            _patch(mp, "replace", fmt, k, Crash)
            try:
                score_file(corpus, out, model=scorer, resume=True, **OPTS)
                done = True
            except Crash:
                _as_killed(tmp_path)
        k += 1
    _same(out, whole, fmt)
    _clean(out)
    assert k > 5


@pytest.mark.parametrize("fmt", FORMATS)
def test_chunks_never_rewrite_earlier_chunks(scorer, corpus, tmp_path, monkeypatch, fmt):
    """Each chunk commits only its own part (no reading back, no rewriting, no sidecar write); the output is
    joined once at the end, so a run writes its data twice in all instead of once per chunk."""
    out = tmp_path / f"o.{fmt}"
    commits: list[tuple[str, int]] = []
    real_commit = part_files.commit_file

    def commit(tmp, path, write):
        real_commit(tmp, path, write)
        commits.append((path.name, path.stat().st_size))

    def no_read(*args, **kwargs):
        raise AssertionError("an output was read back")

    with monkeypatch.context() as mp:
        mp.setattr(part_files, "commit_file", commit)
        mp.setattr(pd, "read_parquet", no_read)
        mp.setattr(pd, "read_csv", no_read)
        score_file(corpus, out, model=scorer, **OPTS)
    names = [name for name, _ in commits]
    parts = [f"part-{k:06d}.{fmt}" for k in range(5)]
    meta = out.name + ".meta.json"
    assert names == [meta, *parts, out.name, meta]  # the sidecar at the start and at the end only
    sizes = dict(commits[1:6])
    middle = [sizes[p] for p in parts[1:4]]
    assert max(middle) <= 1.2 * min(middle)  # a part does not grow with the number of chunks before it
    if fmt != "parquet":
        assert sum(sizes.values()) == out.stat().st_size  # the output is the parts' bytes, joined once


def test_output_appears_only_when_whole(scorer, corpus, tmp_path, monkeypatch):
    out = tmp_path / "o.tsv"
    with monkeypatch.context() as mp:
        seen = {"n": 0}
        real = scorer.score

        def score(*args, **kwargs):
            seen["n"] += 1
            if seen["n"] > 2:
                raise KeyboardInterrupt
            return real(*args, **kwargs)

        mp.setattr(scorer, "score", score)
        with pytest.raises(Interrupted, match="interrupted after 8 of 18 texts"):
            score_file(corpus, out, model=scorer, **OPTS)
    assert not out.exists()
    assert sorted(p.name for p in writers.parts_path(out).iterdir()) == ["part-000000.tsv", "part-000001.tsv"]
    meta = json.loads(writers.meta_path(out).read_text())
    assert meta["status"] == "interrupted" and meta["rows_done"] == 8
    from pllscore import InputError

    with pytest.raises(InputError, match=r"already exists, unfinished \(o.tsv.parts/\); pass --resume"):
        score_file(corpus, out, model=scorer, **OPTS)
    done = score_file(corpus, out, model=scorer, force=True, **OPTS)
    assert done.resumed_from == 0
    _clean(out)


def test_resume_of_a_complete_output_changes_nothing(scorer, corpus, tmp_path):
    out = _whole(scorer, corpus, tmp_path, "tsv")
    before = out.read_bytes()
    again = score_file(corpus, out, model=scorer, resume=True, **OPTS)
    assert again.resumed_from == 18 and again.scored == 0
    assert out.read_bytes() == before
    _clean(out)


def test_empty_input(scorer, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    for fmt in FORMATS:
        out = tmp_path / f"e.{fmt}"
        score_file(empty, out, model=scorer, **OPTS)
        if fmt == "parquet":
            assert len(pd.read_parquet(out)) == 0 and b"pllscore" in pq.read_schema(out).metadata
        elif fmt == "jsonl":
            assert out.read_bytes() == b""  # JSON Lines has no header: no text, no line
        else:  # the header alone: the file reads as a table with the run's columns and no row
            table = pd.read_csv(out, sep="\t" if fmt == "tsv" else ",")
            assert len(table) == 0 and table.columns[0] == "text_id"
        _clean(out)
