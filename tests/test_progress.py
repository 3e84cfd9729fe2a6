"""Progress: a file run's bar moves with each batch, not each chunk; Ctrl-C in a chunk keeps its finished batches,
which ``--resume`` files instead of computing again (the output equals an uninterrupted run's bytes); the bars of
runs of several models say which model runs; a causal bar counts windows where long texts are cut into them.

Bars are drawn on stderr with ``--progress`` (or ``progress=True``), redrawn at every update
(``TQDM_MININTERVAL=0``), and read back frame by frame.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

import pllscore.engine.executor as executor
from pllscore.io.writers import ResumableWriter, parts_path
from pllscore.jobs.local import Interrupted, score_file
from tests.conftest import TINY_BERT, TINY_GPT2
from tests.test_cli import run

pytestmark = pytest.mark.shared

TEXTS = [f"The {w} saw {'the very ' * (i % 4)}old dog number {i} near us." for i, w in enumerate(["cat", "owl"] * 12)]
CHUNK = 12


@pytest.fixture(autouse=True)
def _every_update_drawn(monkeypatch):
    monkeypatch.setenv("TQDM_MININTERVAL", "0")


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(TEXTS) + "\n")
    return path


def _frames(stderr: str, desc: str) -> list[tuple[int, int]]:
    """(done, total) of every frame of the bar whose description is ``desc``."""
    found = re.findall(rf"(?:^|[\r\n]){re.escape(desc)}:\s+\d+%\|[^|]*\|\s*(\d+)/(\d+)", stderr)
    return [(int(a), int(b)) for a, b in found]


class _Batches:
    """Counts the batches every run of batches finishes; ``stop_after`` raises Ctrl-C once that many more are
    finished after ``arm()`` (the batch then being finished is filed but not counted done: a real interrupt's
    worst moment)."""

    def __init__(self, monkeypatch) -> None:
        self.n, self.stop_after, self.armed_at = 0, None, None
        real = executor._launch_ahead

        def ahead(batches, launch):
            for batch in real(batches, launch):
                if None not in (self.stop_after, self.armed_at) and self.n - self.armed_at >= self.stop_after:
                    raise KeyboardInterrupt
                self.n += 1
                yield batch

        monkeypatch.setattr(executor, "_launch_ahead", ahead)

    def arm(self) -> None:
        if self.armed_at is None:
            self.armed_at = self.n


def _arm_after_first_part(monkeypatch, batches: _Batches) -> None:
    real = ResumableWriter.append

    def append(self, frame, rows_done):
        real(self, frame, rows_done)
        batches.arm()

    monkeypatch.setattr(ResumableWriter, "append", append)


def _scorer(request, which: str):
    if which == "seq2seq":
        from pllscore import Seq2SeqScorer

        model, tok = request.getfixturevalue("seq2seq_models")["t5-unigram"]
        scorer = Seq2SeqScorer(model, tok)
        # the decoder's batches are kept; shared stems (here: every text is one) run again, their states being on
        # the device
        scorer.engine.share_stems = False
        return scorer
    return request.getfixturevalue("shared_bert" if which == "masked" else "shared_gpt2")


@pytest.mark.parametrize(("which", "fmt"), [("masked", "tsv"), ("masked", "parquet"), ("causal", "tsv"),
                                            ("causal", "jsonl"), ("seq2seq", "csv")])  # fmt: skip
def test_ctrl_c_in_a_chunk_keeps_its_batches_and_resume_equals_uninterrupted(
    request, corpus, tmp_path, monkeypatch, which, fmt
):
    scorer = _scorer(request, which)
    opts = dict(model=scorer, chunk_size=CHUNK, progress=False)
    scorer.max_tokens, budget = (64 if which == "masked" else 40), scorer.max_tokens
    try:
        whole = tmp_path / f"whole.{fmt}"
        with monkeypatch.context() as mp:
            counted = _Batches(mp)
            _arm_after_first_part(mp, counted)
            score_file(corpus, whole, **opts)
            in_second = counted.n - counted.armed_at  # the batches of the second (last) chunk
        assert in_second >= 3, in_second

        # an encoder-decoder LM's last batches are its decoder's, which are kept (its encoder's run again)
        out, stop = tmp_path / f"out.{fmt}", in_second // 2 if which != "seq2seq" else in_second - 1
        with monkeypatch.context() as mp:
            stopper = _Batches(mp)
            stopper.stop_after = stop
            _arm_after_first_part(mp, stopper)
            with pytest.raises(Interrupted) as e:
                score_file(corpus, out, **opts)
        assert str(e.value) == (
            f"interrupted after {CHUNK} of {len(TEXTS)} texts and part of the next {CHUNK}; they are kept, "
            "rerun with --resume to continue"
        )
        assert sorted(p.name for p in parts_path(out).iterdir()) == ["batches-000001.npz", f"part-000000.{fmt}"]
        assert json.loads(out.with_name(out.name + ".meta.json").read_text())["rows_done"] == CHUNK

        with monkeypatch.context() as mp:
            resumed = _Batches(mp)
            summary = score_file(corpus, out, resume=True, **opts)
        if which != "seq2seq":
            assert resumed.n == in_second - stop  # the kept batches are filed, not run again
        else:
            assert resumed.n < in_second
        assert summary.resumed_from == CHUNK
    finally:
        scorer.max_tokens = budget
    if fmt == "parquet":
        pd.testing.assert_frame_equal(pd.read_parquet(out), pd.read_parquet(whole))
    else:
        assert out.read_bytes() == whole.read_bytes()
    assert not parts_path(out).exists()


def test_kept_batches_of_another_budget_are_not_used(shared_bert, corpus, tmp_path, monkeypatch):
    """A resume with another ``max_tokens`` packs other batches: the kept ones are left, the chunk run whole."""
    out, opts = tmp_path / "out.tsv", dict(model=shared_bert, chunk_size=CHUNK, progress=False)
    budget = shared_bert.max_tokens
    try:
        shared_bert.max_tokens = 64
        with monkeypatch.context() as mp:
            stopper = _Batches(mp)
            stopper.stop_after = 2
            stopper.arm()
            with pytest.raises(Interrupted, match="after 0 of 24 texts and part of the next 12"):
                score_file(corpus, out, **opts)
        assert (parts_path(out) / "batches-000000.npz").exists()
        shared_bert.max_tokens = 96
        with monkeypatch.context() as mp:
            again = _Batches(mp)
            score_file(corpus, out, resume=True, **opts)
        with monkeypatch.context() as mp:
            whole = _Batches(mp)
            score_file(corpus, tmp_path / "whole.tsv", **opts)
    finally:
        shared_bert.max_tokens = budget
    assert again.n == whole.n
    assert out.read_bytes() == (tmp_path / "whole.tsv").read_bytes()


def test_score_bar_moves_with_each_batch_of_a_chunk(corpus, tmp_path):
    done = run("score", str(corpus), "-m", str(TINY_BERT), "--max-tokens", "64", "-o", str(tmp_path / "o.tsv"),
               "--progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    frames = _frames(done.stderr, "scoring")
    assert {total for _, total in frames} == {len(TEXTS)}  # the total known from the start
    inside = {n for n, _ in frames if 0 < n < len(TEXTS)}
    assert len(inside) >= 3, done.stderr  # one chunk of 256 holds every text: the bar moved within it


@pytest.fixture
def pairs_file(tmp_path):
    frame = pd.DataFrame({"good": ["The cat sleeps.", "Dogs bark."], "bad": ["The cat sleep.", "Dogs barks."]})
    frame.to_csv(tmp_path / "pairs.csv", index=False)
    return tmp_path / "pairs.csv"


def test_pairs_bars_name_the_model_and_the_stage(pairs_file):
    done = run("pairs", str(pairs_file), "--good", "good", "--bad", "bad", "-m", str(TINY_BERT), "-m",
               str(TINY_GPT2), "--progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _frames(done.stderr, "model 1 of 2 (tiny-bert-cased): masked copies"), done.stderr
    assert _frames(done.stderr, "model 2 of 2 (tiny-gpt2): texts"), done.stderr
    alone = run("pairs", str(pairs_file), "--good", "good", "--bad", "bad", "-m", str(TINY_GPT2), "--progress")
    assert _frames(alone.stderr, "texts") and "model 1" not in alone.stderr  # one model: nothing to tell apart


def test_diagnose_bars_name_the_model_and_what_it_scores(corpus, tmp_path):
    done = run("diagnose", "-m", str(TINY_BERT), "--causal-model", str(TINY_GPT2), "--data", str(corpus),
               "--metric", "original", "-o", str(tmp_path / "dx"), "--progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    for what in ("sentences", "words"):
        for desc in (
            f"model 1 of 2 (tiny-bert-cased), {what}: masked copies",
            f"model 2 of 2 (tiny-gpt2), {what}: texts",
        ):
            assert _frames(done.stderr, desc), (desc, done.stderr)


def test_reading_times_bars_name_the_model_and_count_windows(tmp_path):
    """Two stories of 700 words: tiny-gpt2 (128 positions) scores them in windows, which its bar counts."""
    common = "the cat sat on a mat and then it ran away very quickly from our old house".split()
    words = [common[(i * 7) % len(common)] for i in range(700)]
    rows = [(s, i + 1, w, 300.0 + (i * 7 + s) % 90) for s in (1, 2) for i, w in enumerate(words)]
    pd.DataFrame(rows, columns=["item", "zone", "word", "rt"]).to_csv(tmp_path / "rt.csv", index=False)
    done = run("reading-times", str(tmp_path / "rt.csv"), "--text-column", "item", "--position-column", "zone",
               "--word-column", "word", "--measure", "rt", "-m", str(TINY_GPT2), "-m", str(TINY_BERT),
               "--progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    windows = _frames(done.stderr, "model 1 of 2 (tiny_gpt2): windows")
    assert windows and windows[-1][1] > 2, done.stderr  # more windows than texts
    assert _frames(done.stderr, "model 2 of 2 (tiny_bert_cased): masked copies"), done.stderr


def test_causal_bar_counts_texts_when_none_is_cut(shared_gpt2, capsys):
    shared_gpt2.score(TEXTS[:3], progress=True)
    assert _frames(capsys.readouterr().err, "texts")[-1][1] == 3
