"""Every option of the local engine on the Ray engine: contexts, user words, norms, per-token outputs, the BOW
correction, lm-eval's convention and the speed options give the local run's rows, columns and scores."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.conftest import TINY_BERT, TINY_GPT2
from tests.test_gguf import make_tiny_gguf

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.shared

from pllscore import InputError  # noqa: E402
from pllscore.jobs.local import score_file  # noqa: E402
from tests.ray_session import score_dataset  # noqa: E402  (keeps its actors between calls)

SENTENCES = ["The traveler lost the souvenir.", "She ate the sandwich quickly.", "Dogs bark at strangers.",
             "The hooligan wrecked the vehicle.", "A cat sat on the mat.", "Carnivores eat meat."]  # fmt: skip
CONTEXTS = ["Yesterday,", "", "In the park,", "At night", "", "Everyone knows:"]


@pytest.fixture(scope="module", autouse=True)
def local_ray(ray_cluster):
    return ray_cluster  # the run's local Ray (tests/ray_session.py)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("in")
    frame = pd.DataFrame({
        "id": [f"s{i}" for i in range(len(SENTENCES))], "sentence": SENTENCES, "context": CONTEXTS,
        "words": [json.dumps(s.split(" ")) for s in SENTENCES],
    })  # fmt: skip
    frame.iloc[:4].to_csv(folder / "a.csv", index=False)
    frame.iloc[4:].to_csv(folder / "b.csv", index=False)
    both = folder / "both.csv"
    frame.to_csv(both, index=False)
    counts = folder / "counts.tsv"  # token counts for slor/norm-lp: every character of the texts, once
    counts.write_text("".join(f"{c}\t{i + 1}\n" for i, c in enumerate(sorted(set("".join(SENTENCES)) - {" "}))))
    return folder, both, counts


CASES = {
    "masked-context-words-outputs": dict(
        model=str(TINY_BERT), metrics="all", level="word", id_column="id", context_column="context",
        words_column="words", mask_by="words", outputs=("entropy", "rank"),
    ),
    "masked-norms": dict(model=str(TINY_BERT), metrics=["original", "word-l2r"], norm=["mean", "per-char", "slor"]),
    "causal-lm-eval-bow": dict(
        model=str(TINY_GPT2), level="word", words="whitespace", word_prob="bow", outputs=("rank",),
        convention="lm-eval", context="Once upon a time,", share_prefixes=False,
    ),
    "causal-token-compile": dict(model=str(TINY_GPT2), level="token", outputs=("entropy",), compile=True, base=2),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_ray_equals_local_with_every_option(inputs, tmp_path, case):
    folder, both, counts = inputs
    opts = dict(CASES[case])
    if "norm" in opts:
        opts["unigram"] = str(counts)
    score_file(both, tmp_path / "local.parquet", progress=False, chunk_size=3, **opts)
    local = pd.read_parquet(tmp_path / "local.parquet")
    summary = score_dataset([folder / "a.csv", folder / "b.csv"], tmp_path / "out", block_rows=3, workers=1, **opts)
    assert summary.rows == len(SENTENCES)
    got = pd.read_parquet(tmp_path / "out")
    assert list(got.columns) == list(local.columns)
    for c in local.columns:
        if local[c].dtype.kind == "f":
            assert got[c].to_numpy() == pytest.approx(local[c].to_numpy(), abs=1e-5, nan_ok=True), c
        else:
            assert got[c].astype(str).tolist() == local[c].astype(str).tolist(), c
    meta = json.loads((tmp_path / "out" / "_meta.json").read_text())
    for key in ("context", "context_column", "words", "words_column", "mask_by", "outputs", "word_prob", "norm"):
        if opts.get(key) not in (None, "tokenizer"):
            assert key in meta, key


def test_ray_resume_refuses_changed_options(inputs, tmp_path):
    folder, _, counts = inputs
    out = tmp_path / "out"
    opts = dict(model=str(TINY_BERT), metrics="original", context_column="context", block_rows=3)
    score_dataset(folder / "a.csv", out, **opts)
    changes = [dict(context_column=None, context="Then"), dict(sep=" - "), dict(convention="lm-eval"),
               dict(words="whitespace"), dict(norm="slor", unigram=str(counts))]  # fmt: skip
    for change in changes:
        with pytest.raises(InputError, match=r"^cannot resume .* it was made with"):
            score_dataset(folder / "a.csv", out, resume=True, **{**opts, **change})
    assert score_dataset(folder / "a.csv", out, resume=True, **opts).blocks_done_before == 2


def test_ray_checks_options_before_it_starts(inputs, tmp_path):
    folder, _, _ = inputs
    cases = [
        (dict(model=str(TINY_BERT), context_column="nope"), "context column 'nope' not in"),
        (dict(model=str(TINY_BERT), words_column="nope"), "words column 'nope' not in"),
        (dict(model=str(TINY_BERT), word_prob="bow", level="word"), "causal LM's word probabilities"),
        (dict(model=str(TINY_GPT2), outputs=("entropy",)), "per-token output; use --level token or word"),
        (dict(model=str(TINY_GPT2), norm="slor"), "needs unigram log-probabilities"),
        (dict(model=str(TINY_GPT2), norm="slor", unigram=str(folder / "nope.tsv")), "nope.tsv"),
        (dict(model=str(TINY_GPT2), convention="harness"), "unknown convention"),
    ]
    for i, (opts, message) in enumerate(cases):
        with pytest.raises(InputError, match=message) as e:
            score_dataset(folder / "a.csv", tmp_path / f"o{i}", **opts)
        assert "\n" not in str(e.value)


def test_ray_error_names_file_and_line(tmp_path):
    """A too-long text found by an actor is named by its file and line, as the local engine names it."""
    path = tmp_path / "long.txt"
    path.write_text("A short line.\n" + "word " * 2000 + "\n")
    with pytest.raises(InputError) as local:
        score_file(path, tmp_path / "l.csv", model=str(TINY_BERT), progress=False)
    with pytest.raises(InputError) as on_ray:
        score_dataset(path, tmp_path / "o", model=str(TINY_BERT), workers=1)
    assert f"line 2 of {path}" in str(local.value)
    assert f"line 2 of {path}" in str(on_ray.value), str(on_ray.value)


def test_cli_passes_every_option_to_ray(inputs, tmp_path):
    from tests.test_cli import run

    folder, both, _ = inputs
    flags = ["-m", str(TINY_GPT2), "--level", "word", "--context-column", "context", "--words-column", "words",
             "--entropy", "--rank", "--word-prob", "bow", "--convention", "lm-eval", "--no-share-prefixes",
             "-q"]  # fmt: skip
    local = run("score", str(both), *flags, "-o", str(tmp_path / "local.parquet"))
    on_ray = run(
        "score", str(folder / "[ab].csv"), *flags, "--engine", "ray", "--workers", "1", "-o", str(tmp_path / "r")
    )
    assert local.returncode == 0 and on_ray.returncode == 0, local.stderr + on_ray.stderr
    want, got = pd.read_parquet(tmp_path / "local.parquet"), pd.read_parquet(tmp_path / "r")
    assert list(got.columns) == list(want.columns) and "causal_entropy" in want.columns
    pd.testing.assert_frame_equal(got, want, check_exact=False, atol=1e-5, rtol=0)


def test_a_gguf_model_on_ray_equals_local(inputs, tmp_path):
    """A GGUF file on the Ray engine: the driver reads no config.json, every actor loads the file."""
    folder, both, _ = inputs
    opts = dict(model=str(make_tiny_gguf(tmp_path)[0]), level="token")
    score_file(both, tmp_path / "local.parquet", progress=False, **opts)
    score_dataset([folder / "a.csv", folder / "b.csv"], tmp_path / "out", workers=1, **opts)
    want, got = pd.read_parquet(tmp_path / "local.parquet"), pd.read_parquet(tmp_path / "out")
    pd.testing.assert_frame_equal(got, want, check_exact=False, atol=1e-5, rtol=0)
    assert json.loads((tmp_path / "out" / "_meta.json").read_text())["model_fingerprint"].startswith("sha256:")
