"""The Ray engine on a local Ray: same rows as the local engine, survives a killed actor, resumes."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from tests.conftest import TINY_BERT, TINY_GPT2

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.shared

from pllscore import InputError  # noqa: E402
from pllscore.distributed.ray import _DIE_AT, score_dataset  # noqa: E402
from pllscore.scorefile import score_file  # noqa: E402

TEXTS = [f"The traveler lost souvenir number {i} near the {w}." for i, w in enumerate(["mat", "store", "vehicle"] * 7)]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    os.environ[_DIE_AT] = "1:killtest"  # workers inherit the environment of the Ray this test starts
    ray.init(num_cpus=2, log_to_driver=False, include_dashboard=False)
    yield
    ray.shutdown()
    os.environ.pop(_DIE_AT, None)


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


def _same(ray_out, local):
    got = pd.read_parquet(ray_out)
    assert list(got.columns) == list(local.columns)
    assert got["row"].tolist() == local["row"].tolist()
    assert sorted(set(local["row"])) == list(range(21))
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
    _same(tmp_path / "out", local)
    import pyarrow.parquet as pq

    meta = pq.read_schema(tmp_path / "out" / "part-000000.parquet").metadata[b"pllscore"]
    assert b'"metrics": ["original", "word-l2r", "whole-word", "sentence-l2r"]' in meta


def test_killed_actor_is_recovered(inputs, tmp_path):
    opts = dict(model=str(TINY_GPT2))
    local = _local(inputs, tmp_path, **opts)
    summary = score_dataset(inputs, tmp_path / "out-killtest", block_rows=4, workers=2, **opts)
    assert summary.retried_blocks == 1  # block 1's first actor died; Ray restarted it and retried
    assert sorted(p.name for p in (tmp_path / "out-killtest" / "_attempts").iterdir())[:3] == ["0.1", "1.1", "1.2"]
    _same(tmp_path / "out-killtest", local)


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


def test_input_errors(inputs, tmp_path):
    with pytest.raises(InputError, match="causal LM"):
        score_dataset(inputs, tmp_path / "o", model=str(TINY_GPT2), metrics="original")
    with pytest.raises(InputError, match="not found"):
        score_dataset(tmp_path / "nope", tmp_path / "o", model=str(TINY_BERT))
    with pytest.raises(InputError, match="no file matches"):
        score_dataset(str(tmp_path / "*.jsonl"), tmp_path / "o", model=str(TINY_BERT))


def test_cli_engine_ray(inputs, tmp_path):
    from tests.test_cli import run

    done = run("score", str(inputs / "*.csv"), "-m", str(TINY_BERT), "--engine", "ray", "--workers", "1",
               "--block-rows", "8", "-o", str(tmp_path / "cli"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "21 rows in 2 file(s)" in done.stderr
    assert len(pd.read_parquet(tmp_path / "cli")) == 21
