"""Interrupted runs keep their work, and --resume gives the same output as an uninterrupted run."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from pllscore.jobs.local import Interrupted, score_file
from tests.conftest import TINY_BERT, TINY_GPT2

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
    assert not part.exists()  # the output appears only when whole; the finished chunks are parts
    partial = _read_parts(tmp_path / f"part.{fmt}.parts", fmt)  # readable, exactly the finished chunks
    assert sorted(set(partial["text_id"])) == list(range(8))

    summary = score_file(corpus, part, resume=True, **opts)
    assert summary.resumed_from == 8 and summary.scored == 10
    if fmt == "parquet":
        pd.testing.assert_frame_equal(pd.read_parquet(part), pd.read_parquet(whole))
    else:
        assert part.read_bytes() == whole.read_bytes()
    assert json.loads((tmp_path / f"part.{fmt}.meta.json").read_text())["status"] == "complete"


def test_kill_mid_write_then_resume_equals_uninterrupted(corpus, tmp_path):
    """A SIGKILL in the middle of writing a chunk leaves half a part file under a temporary name; resume
    drops it and redoes the chunk."""
    whole, part = tmp_path / "whole.tsv", tmp_path / "part.tsv"
    script = textwrap.dedent(f"""
        import os, signal
        import pllscore.io.writers as w
        from pllscore.io.parts import serialize
        from pllscore.jobs.local import score_file
        real = w.write_part
        calls = []
        def write_part(path, frame, fmt, **kwargs):
            calls.append(1)
            if len(calls) == 3:  # write half of the third chunk, then die without warning
                data = serialize(frame, fmt, False).encode()
                with open(path.with_name("." + path.name + ".123.tmp"), "wb") as f:
                    f.write(data[: len(data) // 2])
                os.kill(os.getpid(), signal.SIGKILL)
            real(path, frame, fmt, **kwargs)
        w.write_part = write_part
        score_file({str(corpus)!r}, {str(part)!r}, model={str(TINY_BERT)!r}, metrics="all", chunk_size=4,
                   progress=False)
    """)
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    meta = json.loads((tmp_path / "part.tsv.meta.json").read_text())
    assert meta["status"] == "running" and not part.exists()
    parts = sorted(p.name for p in (tmp_path / "part.tsv.parts").iterdir())
    assert parts == [".part-000002.tsv.123.tmp", "part-000000.tsv", "part-000001.tsv"]  # half a chunk, uncommitted

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
    import pllscore.jobs.local as sf
    from tests.test_cli import run

    def stop(*args, **kwargs):
        raise sf.Interrupted("interrupted after 0 of 18 texts; the output holds them, rerun with --resume to continue")

    monkeypatch.setattr("pllscore.jobs.local.score_file", stop)
    done = run("score", str(corpus), "-m", str(TINY_BERT), "-o", str(tmp_path / "o.tsv"))
    assert done.returncode == 130 and "--resume" in done.stderr


def _read_parts(folder, fmt):
    """The rows of an unfinished output's committed parts (text parts after the first have no header)."""
    if fmt == "parquet":
        return pd.read_parquet(folder)
    data = b"".join(p.read_bytes() for p in sorted(folder.glob(f"part-*.{fmt}"))).decode()
    if fmt == "jsonl":
        return pd.read_json(io.StringIO(data), lines=True)
    return pd.read_csv(io.StringIO(data), sep="," if fmt == "csv" else "\t")


# --- a resume must never mix numbers or rows of two different runs ---------------------------------


@pytest.fixture(scope="module")
def table_corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("table") / "in.csv"
    pd.DataFrame({"id": [f"s{i}" for i in range(10)], "sentence": TEXTS[:10], "alt": TEXTS[8:]}).to_csv(
        path, index=False
    )
    return path


def _stopped_then_resumed(tmp_path, corpus, first, second, mutate=None, name="o.tsv"):
    """Run ``first`` until one chunk is done, stop it (Ctrl-C), change things, resume with ``second`` (into
    ``name``): the one-line error, or None when the resume went through."""
    import pllscore.jobs.table as tj
    from pllscore import InputError

    out = tmp_path / name
    real, seen = tj.output_rows, {"n": 0}

    def output_rows(*args, **kwargs):
        seen["n"] += 1
        if seen["n"] > 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    tj.output_rows = output_rows
    try:
        with pytest.raises(Interrupted):
            score_file(corpus, out, progress=False, **{"chunk_size": 4, **first})
    finally:
        tj.output_rows = real
    if mutate is not None:
        mutate()
    try:
        score_file(corpus, out, progress=False, resume=True, **{"chunk_size": 4, **second})
    except InputError as e:
        assert "\n" not in str(e)
        return str(e)
    return None


def _says(message, key):
    assert message is not None, f"a change of {key} was not noticed"
    assert re.search(
        rf"^cannot resume '.*o\.(tsv|txt)': it was made with {key}=(.+), this run has {key}=(.+); "
        r"rerun with the same input, model and options, or use --force to start over$",
        message,
    ), message
    old, new = re.search(rf"made with {key}=(.+), this run has {key}=(.+?);", message).groups()
    assert old != new and len(old) <= 80 and len(new) <= 80
    return old, new


SETTINGS = [
    ("metrics", {"metrics": "original"}, {"metrics": "word-l2r"}),
    ("level", {}, {"level": "token"}),
    ("format", {}, {"format": "csv"}),
    ("column", {}, {"column": "alt"}),
    ("id_column", {}, {"id_column": "id"}),
    ("base", {}, {"base": 2}),
    ("surprisal", {}, {"surprisal": True}),
    ("skip_empty", {}, {"skip_empty": True}),
    ("chunk_size", {}, {"chunk_size": 5}),
    ("long", {}, {"long": "window"}),
]


@pytest.mark.parametrize(("key", "first", "second"), SETTINGS, ids=[s[0] for s in SETTINGS])
def test_resume_refuses_a_changed_setting(shared_bert, table_corpus, tmp_path, key, first, second):
    # a format other than the extension's is refused before any resume (o.tsv as csv); a .txt takes any text format
    message = _stopped_then_resumed(
        tmp_path, table_corpus, {"model": shared_bert, **first}, {"model": shared_bert, **second},
        name="o.txt" if key == "format" else "o.tsv",
    )  # fmt: skip
    _says(message, key)


def test_resume_refuses_another_dtype(shared_bert, table_corpus, tmp_path):
    import pllscore

    bf16 = pllscore.load(TINY_BERT, device="cpu", dtype="bfloat16")
    message = _stopped_then_resumed(tmp_path, table_corpus, {"model": shared_bert}, {"model": bf16})
    assert _says(message, "dtype") == ("'float32'", "'bfloat16'")


@pytest.mark.parametrize(("key", "options"), [("bos", {"bos": False}), ("stride", {"stride": 8})])
def test_resume_refuses_another_causal_setting(shared_gpt2, table_corpus, tmp_path, key, options):
    import pllscore

    other = pllscore.load(TINY_GPT2, device="cpu", **options)
    message = _stopped_then_resumed(tmp_path, table_corpus, {"model": shared_gpt2}, {"model": other})
    old, new = _says(message, key)
    assert (old, new) == (("True", "False") if key == "bos" else (str(shared_gpt2.stride), "8"))


def test_resume_refuses_another_revision_or_version(shared_bert, table_corpus, tmp_path, monkeypatch):
    import copy

    import pllscore
    import pllscore._version

    pinned = copy.copy(shared_bert)
    pinned.revision = "0123456789abcdef0123456789abcdef01234567"
    (tmp_path / "a").mkdir()
    message = _stopped_then_resumed(tmp_path / "a", table_corpus, {"model": shared_bert}, {"model": pinned})
    assert _says(message, "revision") == ("None", "0123456789ab")  # hashes are cut to 12 digits

    (tmp_path / "b").mkdir()
    version = pllscore.__version__
    message = _stopped_then_resumed(
        tmp_path / "b", table_corpus, {"model": shared_bert}, {"model": shared_bert},
        mutate=lambda: monkeypatch.setattr(pllscore._version, "__version__", "99.0"),
    )  # fmt: skip
    assert _says(message, "pllscore") == (repr(version), "'99.0'")


def test_resume_refuses_changed_input_content(shared_bert, tmp_path):
    corpus = tmp_path / "in.txt"
    corpus.write_text("\n".join(TEXTS) + "\n")
    # same number of lines, one word changed: only the content tells
    changed = "\n".join([*TEXTS[:-1], TEXTS[-1].replace("vehicle", "bicycle")]) + "\n"
    message = _stopped_then_resumed(
        tmp_path, corpus, {"model": shared_bert}, {"model": shared_bert}, mutate=lambda: corpus.write_text(changed)
    )
    old, new = _says(message, "input_sha256")
    assert re.fullmatch(r"[0-9a-f]{12}", old) and re.fullmatch(r"[0-9a-f]{12}", new)


def test_resume_refuses_changed_model_weights(table_corpus, tmp_path):
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    import pllscore

    folder = tmp_path / "model"
    shutil.copytree(TINY_BERT, folder)
    for f in folder.iterdir():
        f.chmod(0o644)
    before = pllscore.load(folder, device="cpu")

    def change_weights():
        weights = load_file(folder / "model.safetensors")
        name = sorted(weights)[0]
        weights[name] = weights[name] + torch.full_like(weights[name], 1e-3)
        save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})

    message = _stopped_then_resumed(
        tmp_path, table_corpus, {"model": before}, {"model": str(folder)}, mutate=change_weights
    )
    old, new = _says(message, "model_fingerprint")
    assert re.fullmatch(r"sha256:[0-9a-f]{12}", old) and old != new


def test_resume_refuses_stdin(tmp_path):
    from pllscore import InputError

    with pytest.raises(InputError, match="stdin cannot be checked"):
        score_file("-", tmp_path / "o.tsv", model=str(TINY_BERT), resume=True, progress=False)
