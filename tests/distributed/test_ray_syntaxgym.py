"""``pllscore syntaxgym --engine ray`` on a local Ray: the same tables as the local engine, resume by suite, and
one-line errors from the actors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.conftest import TINY_BERT, TINY_GPT2
from tests.eval.test_syntaxgym_formula import DATA

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.shared

import pllscore  # noqa: E402
from pllscore import InputError  # noqa: E402
from pllscore.settings import RaySettings  # noqa: E402
from tests.test_cli import run  # noqa: E402

SUITES = [DATA / "agreement.json", DATA / "npz_garden_path.json", DATA / "center_embed.json"]
_VALUES = ["suite", "item_number", "condition_name", "region_number", "content", "surprisal_bits", "n_tokens", "metric"]


@pytest.fixture(scope="module", autouse=True)
def local_ray(request):
    if not TINY_GPT2.is_dir():
        pytest.skip("shared models not found")
    return request.getfixturevalue("ray_cluster")  # the run's local Ray (tests/ray_session.py)


# the actors are kept between calls (keep_workers): started once per run, a model loaded when a call wants another
KEPT_1, KEPT_2 = RaySettings(workers=1, keep_workers=True), RaySettings(workers=2, keep_workers=True)


def _same(got, expected):
    """Equal tables up to float32 noise (the actors run on one thread each)."""
    pd.testing.assert_frame_equal(got[_VALUES].reset_index(drop=True), expected[_VALUES].reset_index(drop=True),
                                  check_exact=False, atol=1e-4, rtol=0)  # fmt: skip


def test_causal_suites_on_ray_are_the_local_tables_and_resume_by_suite(tmp_path, shared_gpt2):
    options = {"convention": "lm-eval", "final_eos": True}
    local = pllscore.syntaxgym(SUITES, shared_gpt2, **options)
    out = tmp_path / "out"
    first = pllscore.syntaxgym(SUITES[:2], TINY_GPT2, engine="ray", ray=KEPT_2, output=out, **options)
    assert first.skipped == ()
    got = pllscore.syntaxgym(SUITES, TINY_GPT2, engine="ray", ray=KEPT_2, output=out, **options)
    assert got.skipped == ("agreement", "npz_garden_path")
    _same(got.regions, local.regions)
    pd.testing.assert_frame_equal(got.predictions, local.predictions)
    pd.testing.assert_frame_equal(got.summary, local.summary)
    (record, _) = json.loads((out / "meta.json").read_text())["runs"]
    assert record["model"]["fingerprint"].startswith("sha256:") and record["settings"]["final_eos"] is True
    assert got.regions["model_id"].unique().tolist() == local.regions["model_id"].unique().tolist()


def test_masked_metrics_on_ray_from_the_command_line(tmp_path, shared_bert):
    if not TINY_BERT.is_dir():
        pytest.skip("shared models not found")
    out = tmp_path / "out"
    done = run("syntaxgym", *map(str, SUITES[1:]), "-m", str(TINY_BERT), "--metric", "word-l2r", "--metric",
               "original", "--engine", "ray", "--workers", "1", "-o", str(out), "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    local = pllscore.syntaxgym(SUITES[1:], shared_bert, metrics=["word-l2r", "original"])
    _same(pd.read_csv(out / "regions.csv", keep_default_na=False, na_values={"surprisal_bits": [""]}), local.regions)


def test_errors_in_the_actors_are_one_line(tmp_path, shared_gpt2):
    with pytest.raises(InputError, match="give its name or path, not a scorer"):
        pllscore.syntaxgym(SUITES[0], shared_gpt2, engine="ray")
    with pytest.raises(InputError, match="--final-eos adds a causal or encoder-decoder LM's end-of-sentence surprisal"):
        pllscore.syntaxgym(SUITES[0], TINY_BERT, engine="ray", final_eos=True, ray=KEPT_1)
    done = run("syntaxgym", str(SUITES[0]), "-m", str(tmp_path / "no-model"), "--engine", "ray", "-q")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: model folder") and last.endswith("does not exist; check the path"), last
