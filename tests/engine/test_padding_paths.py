"""A model that runs without padding stays exact on every path: windows, bfloat16, compile, prefix trees, Ray.

ConvBERT (on :data:`pllscore.engine.padding.UNPADDED`) and the padding-dependent custom model of
``test_architectures_probe.py`` (caught by the probe at load) run in equal-length batches. Each path
that builds its own batches (windows over texts longer than the model allows, bfloat16 autocast,
compiled layers, prefix trees, the Ray engine's blocks) must keep that: a mixed batch equals each
text alone (1e-5), and the independent loop (:mod:`tests.oracle`, one unpadded pass per copy,
window or text) where one exists (1e-4 per token, as in the architecture matrix). Each check also
shows that padding would have been off, so it can fail.
"""

from __future__ import annotations

import copy
import shutil
import time
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch

from pllscore import CausalScorer, MaskedScorer
from pllscore.engine import prefix_tree
from tests import oracle
from tests import tokenizers_fixtures as tf
from tests.engine.test_architectures import (
    ATOL,
    METRICS,
    SMALL,
    TOTALS,
    _masked,
    _one_thread,  # noqa: F401  (its autouse fixture, here too)
    built,
)
from tests.engine.test_architectures_probe import LeakyForCausalLM, LeakyForMaskedLM, _leaky

# one text within the tiny limit, two over it (9, 33 and 65 wordpiece tokens)
TEXTS = [
    "The cat sat on the mat.",
    "She went to the store yesterday, and the old cat sat on the warm mat by the door!",
    "A dog ran after the red ball in the park while the children laughed and the birds sang in the trees.",
]
LIMIT = 12  # ConvBERT's max_position_embeddings, and the leaky models' model_max_length


def _convbert() -> tuple[Any, Any]:
    """ConvBERT as in the matrix, but accepting only LIMIT tokens; its padding embedding random."""
    build, _ = _masked(
        "ConvBertConfig",
        "ConvBertForMaskedLM",
        "wp",
        embedding_size=16,
        conv_kernel_size=5,
        max_position_embeddings=LIMIT,
        **SMALL,
    )
    torch.manual_seed(0)
    model, tok = build()
    with torch.no_grad():
        row = model.get_input_embeddings().weight[tok.pad_token_id]
        row.copy_(torch.randn_like(row))
    return model.eval(), tok


def _leaky_masked() -> tuple[Any, Any]:
    tok = tf.wordpiece()
    tok.model_max_length = LIMIT
    return _leaky(LeakyForMaskedLM, tok, "pad"), tok


def _leaky_causal() -> tuple[Any, Any]:
    tok = tf.byte_bpe(roberta=False)
    tok.model_max_length = LIMIT
    return _leaky(LeakyForCausalLM, tok, "pad"), tok


MASKED_MODELS = {"convbert": _convbert, "leaky": _leaky_masked}


def _masked_totals(scorer: MaskedScorer, texts: list[str]) -> np.ndarray:
    """Totals, (text, metric)."""
    scores = scorer.score(texts, metric="all")
    return np.array([[scores.for_metric(m)[i].total for m in METRICS] for i in range(len(texts))])


def _masked_batch_equals_alone(scorer: MaskedScorer) -> Any:
    """Asserts a mixed batch equals each text alone; the batch's scores; and how far padding would be off."""
    assert scorer.padding == scorer.engine.padding == "equal"
    batch = scorer.score(TEXTS, metric="all")
    for i, text in enumerate(TEXTS):
        alone = scorer.score([text], metric="all")
        for m in METRICS:
            assert abs(batch.for_metric(m)[i].total - alone.for_metric(m)[0].total) <= TOTALS, (m, text)
    scorer.engine.padding = "pad"
    try:
        padded = _masked_totals(scorer, TEXTS)
    finally:
        scorer.engine.padding = "equal"
    got = np.array([[batch.for_metric(m)[i].total for m in METRICS] for i in range(len(TEXTS))])
    return batch, float(np.abs(got - padded).max())


@pytest.mark.parametrize("name", sorted(MASKED_MODELS))
def test_masked_windows_are_exact_without_padding(name):
    model, tok = MASKED_MODELS[name]()
    scorer = MaskedScorer(model, tok, long="window")
    assert scorer.max_length == LIMIT
    lengths = [len(tok(t)["input_ids"]) for t in TEXTS]
    assert min(lengths) <= LIMIT < max(lengths) and sum(n > LIMIT for n in lengths) >= 2, lengths
    batch, padded_off = _masked_batch_equals_alone(scorer)
    for i, text in enumerate(TEXTS):
        for m in METRICS:
            got = batch.for_metric(m)[i]
            assert got.n_scored == lengths[i] - 2
            want = oracle.masked_window_logprobs(model, tok, text, m, LIMIT)
            np.testing.assert_allclose(got.logprobs, want, atol=ATOL, rtol=0, err_msg=f"{name} {m} {text!r}")
    assert padded_off > TOTALS, padded_off  # padded windows would have been off


@torch.inference_mode()
def _causal_window_oracle(model: Any, tok: Any, text: str, limit: int, stride: int) -> list[float]:
    """Token p predicted in the window of ``limit`` tokens that ends after it, as tests/engine/test_windows.py."""
    ids = [tok.eos_token_id, *tok(text)["input_ids"]]
    end = min(limit, len(ids))
    windows = [(0, end, 1)]
    while end < len(ids):
        new_end = min(end + stride, len(ids))
        windows.append((new_end - limit, new_end, end))
        end = new_end
    out = []
    for b, e, f in windows:
        logits = model(input_ids=torch.tensor([ids[b:e]])).logits[0].double()
        out += [torch.log_softmax(logits[p - b - 1], -1)[ids[p]].item() for p in range(f, e)]
    return out


@pytest.mark.parametrize("share", [False, True], ids=["plain", "trees"])
def test_causal_windows_are_exact_without_padding(share, monkeypatch):
    monkeypatch.setattr(prefix_tree, "MIN_SAVING", -1.0)
    model, tok = _leaky_causal()
    scorer = CausalScorer(model, tok, long="window", share_prefixes=share)
    assert scorer.padding == "equal" and scorer.max_length == LIMIT
    assert sum(len(tok(t)["input_ids"]) + 1 > LIMIT for t in TEXTS) >= 2
    batch = scorer.score(TEXTS)
    for i, text in enumerate(TEXTS):
        assert abs(batch[i].total - scorer.score([text])[0].total) <= TOTALS, text
        want = _causal_window_oracle(model, tok, text, LIMIT, scorer.stride)
        np.testing.assert_allclose(batch[i].logprobs, want, atol=ATOL, rtol=0, err_msg=text)


@pytest.mark.parametrize("name", sorted(MASKED_MODELS))
def test_masked_bfloat16_batch_equals_alone(name):
    """Under bfloat16 autocast the equal-length batches give each text bit for bit what it gets alone
    (measured: 0.0), so the float32 tolerance holds; padded, the batch is off by far more."""
    model, tok = MASKED_MODELS[name]()
    scorer = MaskedScorer(model, tok, long="window", dtype="bfloat16")
    assert scorer.dtype == torch.bfloat16
    _, padded_off = _masked_batch_equals_alone(scorer)
    assert padded_off > 1e-4, padded_off


def test_causal_bfloat16_batch_equals_alone():
    model, tok = _leaky_causal()
    scorer = CausalScorer(model, tok, long="window", dtype="bfloat16")
    assert scorer.padding == "equal"
    batch = [r.total for r in scorer.score(TEXTS)]
    alone = [scorer.score([t])[0].total for t in TEXTS]
    np.testing.assert_allclose(batch, alone, atol=TOTALS, rtol=0)
    scorer.engine.padding = "pad"
    padded = [r.total for r in scorer.score(TEXTS)]
    assert max(abs(a - b) for a, b in zip(batch, padded)) > 1e-3


@pytest.mark.skipif(not (shutil.which("c++") or shutil.which("g++")), reason="no C++ compiler")
def test_compiled_convbert_batch_equals_alone():
    """compile=True on ConvBERT (the leaky model has no stack of layers to compile): one case, ~11 s of
    compiling on one CPU thread; skipped beyond 40 s (a cold inductor cache on a slow machine)."""
    model, tok = _convbert()
    plain = MaskedScorer(model, tok, long="window")
    texts = TEXTS[:2]
    want = [r.total for r in plain.score(texts, metric="original")]
    start = time.perf_counter()
    scorer = MaskedScorer(copy.deepcopy(model), tok, long="window", compile=True)
    assert scorer.compiled and scorer.padding == "equal"
    batch = [r.total for r in scorer.score(texts, metric="original")]
    took = time.perf_counter() - start
    alone = [scorer.score([t], metric="original")[0].total for t in texts]
    np.testing.assert_allclose(batch, alone, atol=TOTALS, rtol=0)
    np.testing.assert_allclose(batch, want, atol=TOTALS, rtol=0)
    if took > 40:
        pytest.skip(f"passed, but compiling took {took:.0f} s")


@pytest.mark.parametrize("arch", ["bloom", "mamba"])
def test_padded_causal_without_trees_ignores_share_prefixes(arch, monkeypatch):
    """BLOOM (ALiBi) and Mamba run padded but not as prefix trees: share_prefixes=True is the plain pass."""
    monkeypatch.setattr(prefix_tree, "MIN_SAVING", -1.0)
    ran = []
    monkeypatch.setattr(
        "pllscore.engine.causal.run_trees", lambda *a, **k: ran.append(1) or prefix_tree.run_trees(*a, **k)
    )
    model, tok = built(arch)
    texts = ["The cat sat.", "The cat ran.", "The dog sat.", *TEXTS[:2]]
    plain = CausalScorer(model, tok, share_prefixes=False).score(texts)
    shared = CausalScorer(model, tok, share_prefixes=True)
    assert shared.padding == "pad"
    for a, b in zip(plain, shared.score(texts)):
        assert a.logprobs.tolist() == b.logprobs.tolist(), (arch, a.text)
    assert not ran


def test_unpadded_causal_never_runs_trees(monkeypatch):
    """Even with its architecture on the tree list, a model that runs without padding runs no prefix trees
    (a tree row pads its branches), and scores as the independent loop."""
    monkeypatch.setattr(prefix_tree, "MIN_SAVING", -1.0)
    monkeypatch.setattr(prefix_tree, "TREE_TYPES", prefix_tree.TREE_TYPES | {"leaky-test"})
    ran = []
    monkeypatch.setattr(
        "pllscore.engine.causal.run_trees", lambda *a, **k: ran.append(1) or prefix_tree.run_trees(*a, **k)
    )
    model, tok = _leaky_causal()
    texts = ["The cat sat.", "The cat ran.", "The dog sat.", "The cat"]
    scorer = CausalScorer(model, tok, share_prefixes=True)
    assert scorer.padding == "equal"
    for r in scorer.score(texts):
        np.testing.assert_allclose(r.logprobs, oracle.causal_logprobs(model, tok, r.text), atol=ATOL, rtol=0)
    assert not ran


def test_ray_equals_local_for_convbert(tmp_path, ray_cluster):
    """The Ray engine's actors load the model and decide its batching as the local engine does."""
    from pllscore.jobs.local import score_file
    from tests.ray_session import score_dataset  # keeps its actors between calls

    model, tok = _convbert()
    folder = tmp_path / "convbert"
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    inputs = tmp_path / "in"
    inputs.mkdir()
    rows = pd.DataFrame({"id": [f"s{i}" for i in range(len(TEXTS) + 2)], "sentence": [*TEXTS, "A dog.", "Hi!"]})
    rows.to_csv(inputs / "a.csv", index=False)
    opts = dict(model=str(folder), metrics="all", id_column="id", long="window", device="cpu")
    score_file(inputs / "a.csv", tmp_path / "local.parquet", progress=False, **opts)
    local = pd.read_parquet(tmp_path / "local.parquet")
    summary = score_dataset(inputs, tmp_path / "out", block_rows=2, workers=2, **opts)  # on the run's local Ray
    assert summary.rows == len(rows) and summary.retried_blocks == 0
    got = pd.read_parquet(tmp_path / "out")
    assert list(got.columns) == list(local.columns) and got["text_id"].tolist() == local["text_id"].tolist()
    scores = [c for c in local.columns if local[c].dtype.kind == "f"]
    assert len(scores) >= len(METRICS), scores
    for c in scores:
        np.testing.assert_allclose(got[c].to_numpy(), local[c].to_numpy(), atol=TOTALS, rtol=0, err_msg=c)
    # and the local rows are each text alone, to the same tolerance
    alone = MaskedScorer(model, tok, long="window")
    for m in METRICS:
        want = [alone.score([t], metric=m)[0].total for t in rows["sentence"]]
        column = f"{m.replace('-', '_')}_logprob"  # the one schema's name of the metric's total
        np.testing.assert_allclose(local[column].to_numpy(), want, atol=TOTALS, rtol=0, err_msg=m)
