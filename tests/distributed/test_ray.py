"""The Ray engine on a local Ray: same rows as the local engine, survives a killed actor, resumes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import TINY_BERT, TINY_GPT2
from tests.distributed.actor_crash import CRASH_TEXT

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.shared

from pllscore import InputError  # noqa: E402
from pllscore.jobs.local import score_file  # noqa: E402
from tests.ray_session import score_dataset  # noqa: E402  (keeps its actors between calls)

TEXTS = [f"The traveler lost souvenir number {i} near the {w}." for i, w in enumerate(["mat", "store", "vehicle"] * 7)]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def local_ray(ray_cluster):
    # the run's local Ray (tests/ray_session.py): every worker process runs actor_crash.install first
    # (see there), so the failure is injected from the test, through Ray's own worker set-up hook, not by a
    # switch in pllscore; yields the crash marker's path
    return ray_cluster


@pytest.fixture
def inputs(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    pd.DataFrame({"id": [f"s{i}" for i in range(12)], "sentence": TEXTS[:12]}).to_csv(folder / "a.csv", index=False)
    pd.DataFrame({"id": [f"t{i}" for i in range(9)], "sentence": TEXTS[12:]}).to_csv(folder / "b.csv", index=False)
    return folder


def _local(inputs, tmp_path, **opts):
    """The local engine on the same rows (both files, in sorted order)."""
    both = tmp_path / "both.csv"
    pd.concat([pd.read_csv(inputs / "a.csv", dtype=str), pd.read_csv(inputs / "b.csv", dtype=str)]).to_csv(
        both, index=False
    )
    score_file(both, tmp_path / "local.parquet", progress=False, chunk_size=5, **opts)
    return pd.read_parquet(tmp_path / "local.parquet")


def _same(got, local):
    """Same columns, rows, carried cells (as the exact strings) and scores (to 1e-5)."""
    assert list(got.columns) == list(local.columns)
    assert got["text_id"].tolist() == local["text_id"].tolist()
    for c in local.columns:
        if local[c].dtype.kind == "f":
            # the engines batch differently; the README promises batch invariance to 1e-5
            assert got[c].to_numpy() == pytest.approx(local[c].to_numpy(), abs=1e-5, nan_ok=True), c
        else:
            assert got[c].astype(str).tolist() == local[c].astype(str).tolist(), c


@pytest.mark.parametrize("level", ["sentence", "token"])
def test_ray_equals_local_row_for_row(inputs, tmp_path, level):
    opts = dict(model=str(TINY_BERT), metrics="all", level=level, id_column="id")
    local = _local(inputs, tmp_path, **opts)
    summary = score_dataset(inputs, tmp_path / "out", block_rows=5, workers=2, **opts)
    assert summary.rows == 21 and summary.blocks == 3 + 2 and summary.retried_blocks == 0
    _same(pd.read_parquet(tmp_path / "out"), local)
    assert sorted(set(local["text_id"])) == list(range(21))
    import pyarrow.parquet as pq

    meta = pq.read_schema(tmp_path / "out" / "part-000000.parquet").metadata[b"pllscore"]
    assert b'"metrics": ["original", "word-l2r", "whole-word", "sentence-l2r"]' in meta


# Files whose rows Ray Data's readers got wrong: read_text kept the BOM and split lines at U+2028,
# U+0085 and form feeds; read_csv turned NA/null into empty cells, 007 into 7, True into true and
# dates into timestamps; read_json inferred timestamps from strings. Each row is (text, carried cells).
TXT_LINES = [
    "\ufeffThe traveler lost the souvenir.\r\n",  # BOM (dropped), CRLF
    "The cat sat\u2028on the mat.\r\n",  # U+2028 stays inside the line
    "She didn't go\x85to the store.\n",  # U+0085 (NEL) too
    "\x0cCarnivores eat meat, and the marauder ran.\n",  # so does a form feed
    "A tab\there, and trailing spaces.   \n",
    "   \n",  # whitespace only: skipped, its row number kept
    "The hooligan wrecked the vehicle.",  # no final newline
]
CSV = (
    "text,id,note\n"
    "NA,001,\n"
    "null,002,NA\n"
    "007,003,null\n"
    "2024-01-01,004,007\n"
    "True,005,2024-01-01\n"
    '"",006,True\n'  # an empty text: skipped
    '"""Hello, world,"" she said.",007,"a, b"\n'
    '"A quoted\nnewline inside.",008,"two\nlines"\n'
)
TSV = 'text\ttext_id\tcode\nNA\tr1\t007\n"quoted," as written\tr2\tnull\nFALSE\tr3\t\n'
JSONL = [
    {"text": "Ünïcödé façade — naïve café.", "id": 1, "date": "2024-01-01"},
    {"id": 2, "text": "日本語のテキストです。", "date": "2024-01-02"},  # keys in another order
    {"text": "I \u2764 emoji \U0001f600 and\u2028a line separator.", "date": "not a date", "extra": "only here"},
]


def _odd_files(folder: Path) -> dict[str, int]:
    """Write the odd files; return each one's number of input rows (sorted order = Ray's row order)."""
    folder.mkdir()
    (folder / "a.txt").write_bytes("".join(TXT_LINES).encode())
    (folder / "b.csv").write_bytes(CSV.encode())
    (folder / "c.tsv").write_bytes(TSV.encode())
    (folder / "d.jsonl").write_bytes("\r\n".join(json.dumps(r, ensure_ascii=False) for r in JSONL).encode())
    return {"a.txt": len(TXT_LINES), "b.csv": 8, "c.tsv": 3, "d.jsonl": len(JSONL)}


def test_ray_reads_odd_files_as_the_local_engine_does(tmp_path):
    files = _odd_files(tmp_path / "odd")
    opts = dict(model=str(TINY_BERT), metrics="original", skip_empty=True)
    summary = score_dataset(tmp_path / "odd", tmp_path / "out", block_rows=3, workers=2, **opts)
    assert summary.rows == sum(files.values())
    meta = json.loads((tmp_path / "out" / "_meta.json").read_text())
    offset = 0
    for name, n in files.items():
        local = tmp_path / f"local-{name}.parquet"
        score_file(tmp_path / "odd" / name, local, progress=False, chunk_size=2, **opts)
        local = pd.read_parquet(local)
        local["text_id"] += offset  # Ray's row ids count over all files in sorted order
        blocks = [m["block"] for m in meta["manifest"] if m["file"].endswith(name)]
        shards = [tmp_path / "out" / f"part-{b:06d}.parquet" for b in blocks]
        got = pd.concat([pd.read_parquet(s) for s in shards if s.exists()], ignore_index=True)
        _same(got, local)
        offset += n
    texts = pd.read_parquet(tmp_path / "local-a.txt.parquet")["text"].tolist()
    assert texts[:2] == ["The traveler lost the souvenir.", "The cat sat\u2028on the mat."]
    cells = pd.read_parquet(tmp_path / "local-b.csv.parquet")
    assert cells["text"].tolist()[:5] == ["NA", "null", "007", "2024-01-01", "True"]
    assert cells["note"].tolist()[:3] == ["", "NA", "null"]


@pytest.mark.parametrize(
    "name, data, opts",
    [
        ("latin1.txt", "fine\ncaf\xe9 au lait\n".encode("latin-1"), {}),
        ("bad.jsonl", b'{"text": "fine"}\n{"text": oops}\n', {}),
        ("cols.csv", b"sentence\nfine\n", {"column": "nope"}),
        ("ids.csv", b"sentence\nfine\n", {"id_column": "nope"}),
        ("empty.csv", b'sentence\nfine\n""\nfine\n   \n', {}),
    ],
)
def test_bad_files_fail_alike_on_both_engines(tmp_path, name, data, opts):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as local:
        score_file(path, tmp_path / "local.csv", model=str(TINY_BERT), progress=False, **opts)
    with pytest.raises(InputError) as on_ray:
        score_dataset(path, tmp_path / "out", model=str(TINY_BERT), **opts)
    assert str(on_ray.value) == str(local.value)
    assert "\n" not in str(local.value) and os.fspath(path) in str(local.value)


def test_killed_actor_is_recovered(inputs, tmp_path, local_ray):
    frame = pd.read_csv(inputs / "a.csv", dtype=str)
    frame.loc[5, "sentence"] = CRASH_TEXT  # row 5: in block 1 of 4-row blocks
    frame.to_csv(inputs / "a.csv", index=False)
    opts = dict(model=str(TINY_GPT2))
    local = _local(inputs, tmp_path, **opts)
    assert not local_ray.exists()
    summary = score_dataset(inputs, tmp_path / "out", block_rows=4, workers=2, **opts)
    assert local_ray.exists()  # an actor did die on block 1
    assert summary.retried_blocks == 1  # Ray restarted it and retried the block
    assert sorted(p.name for p in (tmp_path / "out" / "_attempts").iterdir())[:3] == ["0.1", "1.1", "1.2"]
    _same(pd.read_parquet(tmp_path / "out"), local)
    assert sorted(set(local["text_id"])) == list(range(21))


def test_resume_skips_finished_blocks(inputs, tmp_path):
    out = tmp_path / "out"
    opts = dict(model=str(TINY_BERT), metrics=["original"], block_rows=4)
    first = score_dataset(inputs, out, **opts)
    assert first.blocks_done_before == 0
    stamps = {p.name: p.stat().st_mtime_ns for p in out.glob("part-*.parquet")}
    (out / "part-000002.parquet").unlink()  # as if the run had stopped before this block
    again = score_dataset(inputs, out, resume=True, **opts)
    assert again.blocks_done_before == again.blocks - 1
    for name, stamp in stamps.items():
        if name != "part-000002.parquet":
            assert (out / name).stat().st_mtime_ns == stamp  # finished shards were not rewritten
    assert (out / "part-000002.parquet").exists()
    with pytest.raises(InputError, match="not empty; pass --resume"):
        score_dataset(inputs, out, **opts)
    with pytest.raises(InputError, match="made with metrics="):
        score_dataset(inputs, out, resume=True, **{**opts, "metrics": ["whole-word"]})


def test_relative_paths_are_the_drivers(inputs, tmp_path, monkeypatch):
    """A relative model path and output folder name what they name in the caller's folder, though the run's Ray
    was started in another, which its workers run in (a cluster's nodes have folders of their own too)."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "bert").symlink_to(TINY_BERT)
    monkeypatch.chdir(tmp_path)
    summary = score_dataset("in", "out", model="models/bert", metrics=["original"], block_rows=8)
    assert summary.rows == 21 and len(pd.read_parquet(tmp_path / "out")) == 21


def test_input_errors(inputs, tmp_path):
    with pytest.raises(InputError, match="causal LM"):
        score_dataset(inputs, tmp_path / "o", model=str(TINY_GPT2), metrics="original")
    with pytest.raises(InputError, match="not found"):
        score_dataset(tmp_path / "nope", tmp_path / "o", model=str(TINY_BERT))
    with pytest.raises(InputError, match="no file matches"):
        score_dataset(str(tmp_path / "*.jsonl"), tmp_path / "o", model=str(TINY_BERT))
    (inputs / "c.txt").write_text("A plain text line.\n")  # its texts are in 'text', the csv files' in 'sentence'
    with pytest.raises(InputError, match="in column 'text', those of the files before it in 'sentence'"):
        score_dataset(inputs, tmp_path / "o2", model=str(TINY_BERT))


def test_cli_engine_ray(inputs, tmp_path):
    from tests.test_cli import run

    done = run("score", str(inputs / "*.csv"), "-m", str(TINY_BERT), "--engine", "ray", "--workers", "1",
               "--block-rows", "8", "-o", str(tmp_path / "cli"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "21 rows in 2 file(s)" in done.stderr
    assert len(pd.read_parquet(tmp_path / "cli")) == 21
