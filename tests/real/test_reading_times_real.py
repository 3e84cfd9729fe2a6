"""``pllscore reading-times`` on a real model: Gemma-3-270m (GGUF, Q4_K_M) on the whole Natural Stories corpus,
through the command line.

A real LM's surprisal predicts reading times: ΔLL per word > 0 (more than two standard errors) and a positive
coefficient (ms per bit). The first story's word surprisals equal ``pllscore score`` of its text (within 1e-3
bits). The figures and the time are printed in the real-models summary for BENCHMARKS.md.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pllscore.eval.reading_times.run import surprisal_column
from tests.real.conftest import TIMINGS, real_file
from tests.test_cli import run

NATURAL_STORIES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "naturalstories"
LABEL = "gemma_3_270m_q4_k_m_gguf"


@pytest.fixture(scope="module")
def gemma_rt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if not NATURAL_STORIES.is_dir():
        pytest.skip(f"{NATURAL_STORIES} not found: the shared data must sit beside the repository")
    path = real_file("gemma3")
    out = tmp_path_factory.mktemp("rt-gemma")
    t0 = time.perf_counter()
    done = run("reading-times", str(NATURAL_STORIES), "-m", str(path), "-o", str(out / "rt"), "-q", "--plot")
    TIMINGS.setdefault("gemma3", {})["reading_times_s"] = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr
    print(done.stdout)
    return path, out


def test_surprisal_predicts_natural_stories_reading_times(gemma_rt: tuple[Path, Path]) -> None:
    _, out = gemma_rt
    fits = pd.read_csv(out / "rt" / "fits.csv")
    (row,) = fits.itertuples()
    assert row.model == LABEL and row.measure == "meanItemRT" and row.n > 8000
    TIMINGS["gemma3"].update(delta_ll=row.delta_ll, delta_ll_se=row.delta_ll_se, coef=row.coef, coef_se=row.coef_se)
    assert row.delta_ll > 2 * row.delta_ll_se > 0
    assert row.coef > 0
    assert (out / "rt" / "delta_ll.png").stat().st_size > 1000


def test_first_story_surprisal_is_the_score_command(gemma_rt: tuple[Path, Path]) -> None:
    path, out = gemma_rt
    words = pd.read_csv(out / "rt" / "words.csv", keep_default_na=False, dtype={"text_key": str, "word": str})
    first = words[words["text_key"] == "1"]
    (out / "story1.txt").write_text(" ".join(first["word"]) + "\n", encoding="utf-8")
    done = run("score", str(out / "story1.txt"), "-m", str(path), "--words", "whitespace", "--long", "window",
               "--level", "word", "--base", "2", "--surprisal", "-o", str(out / "story1.csv"), "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    scored = pd.read_csv(out / "story1.csv", keep_default_na=False)
    assert list(scored["word"].astype(str)) == list(first["word"])
    want = scored["causal_surprisal_bits"].to_numpy(float)
    np.testing.assert_allclose(first[surprisal_column(LABEL)].to_numpy(float), want, atol=1e-3, rtol=0)
