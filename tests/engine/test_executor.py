"""Batch execution: every item once, batch i + 1 launched before batch i is finished, and CUDA out-of-memory
halves the budget without losing work or doing any twice."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pllscore import ModelError
from pllscore.engine import executor
from pllscore.engine.executor import into, run_batches, to_device, to_host


class _Bar:
    """Stands in for tqdm: logs each update."""

    def __init__(self, log: list, total: int, **_: object) -> None:
        self.log, self.total = log, total

    def __enter__(self) -> _Bar:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def update(self, n: int) -> None:
        self.log.append(("update", n))

    def close(self) -> None:
        pass


@pytest.fixture
def log(monkeypatch) -> list:
    """The calls of a run in order: ("launch", items), ("finish", items), ("update", n)."""
    calls: list = []
    monkeypatch.setattr(executor, "progress_bar", lambda total, **kw: _Bar(calls, total, **kw))
    return calls


def _recording(log: list, fail=lambda step, items: False):
    """A launch that logs its calls and its finish's; ``fail(step, items)`` (step "launch" or "finish") says
    when to raise CUDA out-of-memory instead."""

    def launch(items: np.ndarray):
        if fail("launch", items):
            raise torch.cuda.OutOfMemoryError("fake")
        log.append(("launch", tuple(items.tolist())))

        def finish() -> None:
            if fail("finish", items):
                raise torch.cuda.OutOfMemoryError("fake")
            log.append(("finish", tuple(items.tolist())))

        return finish

    return launch


def _of(log: list, kind: str) -> list:
    return [x for k, x in log if k == kind]


def _assert_bar_moves_on_finish(log: list, counts: np.ndarray) -> None:
    """The bar moves right after each finish, by its items' counts, to the total."""
    for i, (kind, items) in enumerate(log):
        if kind == "finish":
            assert log[i + 1] == ("update", int(counts[list(items)].sum()))
    assert sum(_of(log, "update")) == counts.sum()


def test_each_batch_is_finished_once_after_the_next_is_launched(log):
    counts = np.arange(1, 11)
    run_batches(np.full(10, 3), 6, _recording(log), counts=counts)  # five batches of two
    launched = _of(log, "launch")
    assert len(launched) == 5
    assert log[:2] == [("launch", launched[0]), ("launch", launched[1])]
    for i in range(4):  # launch(i + 1) before finish(i)
        assert log.index(("launch", launched[i + 1])) < log.index(("finish", launched[i]))
    assert _of(log, "finish") == launched  # every batch, the last included, finished once, in order
    assert log[-2][0] == "finish"
    _assert_bar_moves_on_finish(log, counts)


def test_a_single_batch_is_launched_then_finished(log):
    run_batches(np.array([2, 2]), 10, _recording(log))
    assert [k for k, _ in log] == ["launch", "finish", "update"]


@pytest.mark.parametrize(("step", "done_before"), [("launch", 1), ("finish", 2)])
def test_oom_while_launching_or_finishing_redoes_only_what_is_not_finished(log, step, done_before):
    calls = {"launch": 0, "finish": 0}

    def fail(at: str, items: np.ndarray) -> bool:
        # the third call of ``step`` fails, once: launching batch 2 (batch 0 finished, batch 1 launched only),
        # or finishing batch 2 (batches 0 and 1 finished, batch 3 launched only)
        calls[at] += 1
        return at == step and calls[at] == 3

    counts = np.arange(1, 13)
    run_batches(np.full(12, 4), 8, _recording(log, fail), counts=counts)  # batches of two items
    finished = [i for items in _of(log, "finish") for i in items]
    assert sorted(finished) == list(range(12))  # every item finished exactly once
    sizes = [len(items) for items in _of(log, "finish")]
    assert sizes == [2] * done_before + [1] * (12 - 2 * done_before)  # then the budget halved: 8 -> 4 tokens
    _assert_bar_moves_on_finish(log, counts)  # nothing counted twice


def test_oom_halves_budget_and_finishes_every_item_once():
    lengths = np.array([5, 9, 3, 9, 7, 2, 8, 8, 1, 6] * 4)
    seen: list[int] = []
    sizes: list[int] = []

    def launch(batch):
        padded = len(batch) * int(lengths[batch].max())
        if padded > 20:  # "GPU memory" holds 20 padded tokens
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (fake)")
        sizes.append(padded)
        return lambda: seen.extend(batch.tolist())

    run_batches(lengths, 200, launch, progress=False)
    assert sorted(seen) == list(range(len(lengths)))
    assert max(sizes) <= 20


def test_oom_on_a_single_item_is_a_clear_error():
    def launch(batch):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory (fake)")

    with pytest.raises(ModelError, match="out of GPU memory even for a single input of 9 tokens"):
        run_batches(np.array([9, 3]), 9, launch, progress=False)


def test_into_files_each_result_at_its_item_when_finished():
    out: list = [None] * 4
    launch = into(out, lambda batch: lambda: [f"item {i}" for i in batch])
    finish = launch(np.array([3, 1]))
    assert out == [None] * 4  # nothing before the finish
    finish()
    assert out == [None, "item 1", None, "item 3"]


def test_copies_on_a_cpu_are_the_plain_ones():
    values = {"logprob": torch.tensor([-1.5, -0.25]), "rank": torch.tensor([3, 1])}
    got = to_host(values)()
    assert got["logprob"].dtype == got["rank"].dtype == np.float64
    np.testing.assert_array_equal(got["rank"], [3.0, 1.0])
    assert np.array_equal(got["logprob"], values["logprob"].double().numpy())
    ids = np.array([[1, 2], [3, 4]])
    assert torch.equal(to_device(ids, torch.device("cpu")), torch.from_numpy(ids))
