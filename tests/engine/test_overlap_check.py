"""The self-check of the one-batch-ahead executor (engine/overlap.py): on an accelerator the first batch of each
path is run again on the plain path and compared. Here it is forced on the CPU (``PLLSCORE_CHECK_OVERLAP``),
and a wrong overlapped result is injected where a race would put it: the pinned host copy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pllscore import CausalScorer, MaskedScorer, ModelError, Seq2SeqScorer
from pllscore.engine import executor, overlap
from pllscore.engine.executor import run_batches, to_host
from tests.conftest import SENTENCES, TINY_GPT2

SHARED = ["The cat sat.", "The cat sat on the mat.", "The cat sat on the warm mat.", "The dog sat on the mat."]


@pytest.fixture
def checks(monkeypatch) -> list:
    """The checks run: one (path, devices) per batch compared with the plain path."""
    ran: list = []
    real = overlap._compare

    def compare(ahead, plain, devices):
        ran.append((sorted(ahead[0][0]), devices))
        real(ahead, plain, devices)

    monkeypatch.setattr(overlap, "_compare", compare)
    return ran


@pytest.fixture
def forced(monkeypatch):
    monkeypatch.setenv("PLLSCORE_CHECK_OVERLAP", "1")


def _scorers(masked_models, causal_models, seq2seq_models):
    bert, gpt2, t5 = masked_models["bert-wordpiece"], causal_models["gpt2-bpe"], seq2seq_models["t5-unigram"]
    return MaskedScorer(*bert, max_tokens=64), CausalScorer(*gpt2, max_tokens=64), Seq2SeqScorer(*t5, max_tokens=64)


def _all(scorers):
    masked, causal, seq2seq = scorers
    return [
        masked.score(SENTENCES, metric="all"),
        masked.score(SENTENCES[:3], outputs=["entropy", "rank"]),
        causal.score(SENTENCES),  # padded batches
        causal.score(SHARED),  # prefix trees
        causal.score(SENTENCES[:3], outputs=["entropy", "rank"]),
        seq2seq.score(SHARED, context=["Le chat.", "Le chat.", "Un chien.", "Le chat."]),  # shared stems
    ]


def _same(a, b):
    for x, y in zip(a, b, strict=True):
        for s, t in zip(x, y, strict=True):
            assert np.array_equal(s.logprobs, t.logprobs)
            for name in ("entropy", "rank"):
                if getattr(s, name, None) is not None:
                    assert np.array_equal(getattr(s, name), getattr(t, name))


def test_the_forced_check_passes_on_every_path_with_the_same_scores(masked_models, causal_models, seq2seq_models,
                                                                     checks, forced):  # fmt: skip
    checked = _all(_scorers(masked_models, causal_models, seq2seq_models))
    assert len(checks) >= 5 and all(d == {"cpu"} for _, d in checks)  # masked, padded, trees, stems, members
    again = len(checks)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("PLLSCORE_CHECK_OVERLAP")
        plain = _all(_scorers(masked_models, causal_models, seq2seq_models))
    assert len(checks) == again  # unforced, the CPU is not checked
    _same(checked, plain)


def test_each_path_is_checked_once_per_engine(masked_models, checks, forced):
    scorer = MaskedScorer(*masked_models["bert-wordpiece"], max_tokens=64)
    scorer.score(SENTENCES, metric="all")
    assert len(checks) == 1  # the first batch of the first run only
    scorer.score(SENTENCES[:2], metric="all")
    assert len(checks) == 1
    MaskedScorer(*masked_models["bert-wordpiece"], max_tokens=64).score(SENTENCES[:2])
    assert len(checks) == 2  # another model (engine): checked again


def _corrupt_the_pinned_copy(monkeypatch):
    """What a race would do: the overlapped path's host copy is off; the plain path's is right."""
    monkeypatch.setattr(executor, "_copy_started", lambda t: t + 1e-3)


def test_a_wrong_overlapped_result_stops_the_run_in_one_line(masked_models, causal_models, monkeypatch, forced):
    scorers = (MaskedScorer(*masked_models["bert-wordpiece"]), CausalScorer(*causal_models["gpt2-bpe"]))
    right = [s.score(SENTENCES).totals for s in scorers]
    _corrupt_the_pinned_copy(monkeypatch)
    for scorer, expected in zip(scorers, right):
        scorer = _fresh(scorer)
        with pytest.raises(ModelError) as e:
            scorer.score(SENTENCES)
        message = str(e.value)
        assert message.startswith("self-check failed on cpu: a batch run one ahead of the next gave other numbers")
        assert "(by 0.001, more than 1e-05)" in message and "please report it" in message and "\n" not in message
        assert message.endswith("run with overlap=False meanwhile")
        scorer.engine.overlap = False  # the way around it: the plain path only, no check, the right numbers
        np.testing.assert_array_equal(scorer.score(SENTENCES).totals, expected)


def _fresh(scorer):
    return type(scorer)(scorer.model, scorer.tokenizer)


def test_a_difference_within_the_tolerance_passes(monkeypatch, forced, masked_models):
    monkeypatch.setattr(executor, "_copy_started", lambda t: t + 1e-7)
    MaskedScorer(*masked_models["bert-wordpiece"]).score(SENTENCES[:2])


def test_the_command_line_names_the_flag(monkeypatch, forced):
    from tests.test_cli import run

    _corrupt_the_pinned_copy(monkeypatch)
    done = run("score", "--text", "The cat sat.", "-m", str(TINY_GPT2), "--device", "cpu", "-q")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: self-check failed on cpu")
    assert lines[0].endswith("run with --no-overlap meanwhile")
    assert run("score", "--text", "The cat sat.", "-m", str(TINY_GPT2), "--no-overlap", "-q").returncode == 0


def test_no_overlap_gives_the_same_scores_one_batch_at_a_time(tmp_path, checks, forced, monkeypatch):
    import json

    import pllscore
    from tests.test_cli import run

    plain = pllscore.load(TINY_GPT2, device="cpu", overlap=False, max_tokens=32)
    ahead = pllscore.load(TINY_GPT2, device="cpu", max_tokens=32)
    assert plain.engine.overlap is False and ahead.engine.overlap is True
    order: list = []
    real = executor._one_by_one
    monkeypatch.setattr(executor, "_one_by_one", lambda *a: order.append(1) or real(*a))
    _same([plain.score(SENTENCES)], [ahead.score(SENTENCES)])
    assert order and len(checks) == 1  # the plain path ran; only the overlapped scorer was checked
    out = tmp_path / "o.csv"
    assert (
        run("score", "--text", "The cat sat.", "-m", str(TINY_GPT2), "--no-overlap", "-o", str(out), "-q").returncode
        == 0
    )
    assert json.loads((tmp_path / "o.csv.meta.json").read_text())["overlap"] is False


def test_an_accelerators_outputs_are_checked_unforced(monkeypatch, checks):
    """No GPU needed: the check runs where a batch's outputs come from a device other than the CPU."""
    monkeypatch.delenv("PLLSCORE_CHECK_OVERLAP", raising=False)
    values = torch.tensor([-1.0, -2.0])

    def launch(batch):
        pending = to_host({"logprob": values[batch]})

        def finish():
            got = pending()
            overlap.record(got, {"cuda"})  # as to_host records a CUDA batch's outputs

        return finish

    with overlap.overlapping():
        run_batches(np.ones(2, dtype=np.int64), 1, launch)
        run_batches(np.ones(2, dtype=np.int64), 1, launch)
    assert len(checks) == 1 and checks[0][1] == {"cpu", "cuda"}
    with overlap.overlapping(False):
        run_batches(np.ones(2, dtype=np.int64), 1, launch)
    assert len(checks) == 1
