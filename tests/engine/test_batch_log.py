"""Kept batches (engine/batch_log.py) and what bars say (engine/progress.py), on a fake launch: an interrupted run of
batches keeps what its finished batches filed; run again under the record, it files them and launches exactly the
batches it had not finished, with the same items; a record of another packing is not used."""

from __future__ import annotations

import numpy as np
import pytest

from pllscore.engine.batch_log import BatchLog, keeping
from pllscore.engine.executor import run_batches
from pllscore.engine.progress import bar, described, model_stage, reporting, stage

LENGTHS = np.array([5, 3, 8, 2, 7, 4, 6, 1, 3, 5])


def _run(saved: bytes | None, *, stop: int | None = None, budget: int = 10, as_dict: bool = False):
    """One run of batches under a :class:`BatchLog` made from ``saved``, stopped by Ctrl-C at launch ``stop``; the
    record it dumps, the batches it launched and what was filed."""
    out: list | dict = {"v": np.full(len(LENGTHS), np.nan)} if as_dict else [None] * len(LENGTHS)
    launched: list[tuple[int, ...]] = []

    def launch(items: np.ndarray):
        if stop is not None and len(launched) == stop:
            raise KeyboardInterrupt
        launched.append(tuple(items.tolist()))

        def finish() -> None:
            for i in items:
                if as_dict:
                    out["v"][i] = 10.0 * i + len(items)
                else:
                    out[i] = np.array([10.0 * i, len(items)])

        return finish

    log = BatchLog(saved)
    with keeping(log):
        try:
            run_batches(LENGTHS, budget, launch, progress=False, keep=out)
        except KeyboardInterrupt:
            return log.dump(), launched, out
    return None, launched, out


@pytest.mark.parametrize("as_dict", [False, True])
def test_a_resumed_run_launches_only_the_batches_not_finished(as_dict):
    _, whole, want = _run(None, as_dict=as_dict)
    assert len(whole) >= 5
    saved, first, _ = _run(None, stop=4, as_dict=as_dict)
    assert first == whole[:4] and saved is not None
    # batch 4's launch was cut: batches 0-2 were finished (3 was launched, not finished)
    _, again, got = _run(saved, as_dict=as_dict)
    assert again == whole[3:]
    if as_dict:
        np.testing.assert_array_equal(got["v"], want["v"])
    else:
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_a_record_of_another_packing_is_not_used():
    saved, _, _ = _run(None, stop=3)
    _, whole, _ = _run(None, budget=12)
    _, again, _ = _run(saved, budget=12)
    assert again == whole


def test_nothing_is_kept_before_a_batch_is_finished_and_a_broken_record_is_ignored():
    saved, _, _ = _run(None, stop=1)
    assert saved is None
    _, whole, _ = _run(None)
    assert _run(b"not a record")[1] == whole


def test_bars_say_the_stage_and_tell_a_reporter():
    assert described("masked copies") == "masked copies"
    with stage(model_stage(2, 2, "tiny-gpt2")):
        assert described("masked copies") == "model 2 of 2 (tiny-gpt2): masked copies"
    assert model_stage(1, 1, "m") is None and model_stage(1, 1, "m", "words") == "words"
    assert model_stage(1, 2, "m", "words") == "model 1 of 2 (m), words"
    told: list[tuple[int, int]] = []
    with reporting(lambda done, total: told.append((done, total))):
        shown = bar(10, initial=2, desc="texts", unit="text", progress=None)
        shown.update(3)
        shown.close()
        assert bar(5, initial=0, desc="texts", unit="text", progress=False).disable  # a run that shows nothing
    assert told == [(2, 10), (5, 10)]
