"""BabyLM sentence zero-shot tasks: the official files on the shared sample, and a naive reference per backend."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from pllscore.eval.babylm.zero_shot import prepare_zero_shot, temperature_range
from tests.eval.babylm_naive import naive_task_scores

SHARED = Path(__file__).resolve().parents[3] / "shared"
SAMPLE = SHARED / "data" / "babylm_sample"
MODELS = {"causal": "tiny-gpt2", "mlm": "tiny-bert-cased", "mntp": "tiny-bert-cased"}
DATASETS = {
    "blimp_fast": "blimp",
    "supplement_fast": "blimp",
    "ewok_fast": "ewok",
    "entity_tracking_fast": "entity_tracking",
    "wug_adj_nominalization": "wug_adj",
    "wug_past_tense": "wug_past",
    "comps": "comps",
}


def _load(backend: str):  # type: ignore[no-untyped-def]
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    path = SHARED / "models" / MODELS[backend]
    if not path.is_dir():
        pytest.skip(f"{path} not found: the shared models must sit beside the repository")
    os.environ["HF_HUB_OFFLINE"] = "1"
    cls = AutoModelForCausalLM if backend == "causal" else AutoModelForMaskedLM
    return cls.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


@pytest.fixture(scope="module")
def loaded():  # type: ignore[no-untyped-def]
    cache: dict[str, object] = {}

    def get(backend: str):  # type: ignore[no-untyped-def]
        name = MODELS[backend]
        if name not in cache:
            cache[name] = _load(backend)
        return cache[name]

    return get


def _without_probs(predictions: dict) -> dict:  # type: ignore[type-arg]
    return {k: [{f: x[f] for f in ("id", "pred")} for x in v["predictions"]] for k, v in predictions.items()}


@pytest.mark.parametrize("backend", ["causal", "mlm", "mntp"])
@pytest.mark.parametrize("dataset", list(DATASETS))
def test_official_files(backend: str, dataset: str, loaded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The report's text and every item prediction equal the official pipeline's files (WUG shares to 1e-5)."""
    model, tok = loaded(backend)
    task = DATASETS[dataset]
    result = prepare_zero_shot(task, SAMPLE / "fast_eval" / dataset, tok, backend).run(model, temperatures=[1.0])
    out = tmp_path / backend / task / dataset
    result.write(out)
    official = SAMPLE / "official" / backend / MODELS[backend] / "main" / "zero_shot" / backend / task / dataset
    report = (official / "best_temperature_report.txt").read_text()
    assert (out / "best_temperature_report.txt").read_text() == report
    ours = json.loads((out / "predictions.json").read_text())
    theirs = json.loads((official / "predictions.json").read_text())
    assert list(ours) == list(theirs)
    assert _without_probs(ours) == _without_probs(theirs)
    for k in theirs:
        for a, b in zip(ours[k]["predictions"], theirs[k]["predictions"]):
            assert ("prob" in a) == ("prob" in b)
            if "prob" in b:
                assert a["prob"] == pytest.approx(b["prob"], abs=1e-5)
    assert result.summary()[0] == (f"{dataset}/overall", pytest.approx(result.best.average))


@pytest.mark.parametrize("backend", ["causal", "mlm", "mntp"])
@pytest.mark.parametrize("dataset", ["ewok_fast", "wug_past_tense", "comps"])
def test_naive_reference_shared(backend: str, dataset: str, loaded) -> None:  # type: ignore[no-untyped-def]
    """Every sentence's score at three temperatures equals one forward pass per sentence or masked copy."""
    model, tok = loaded(backend)
    task, folder = DATASETS[dataset], SAMPLE / "fast_eval" / dataset
    temps = [0.5, 1.0, 1.7]
    scores = prepare_zero_shot(task, folder, tok, backend).scores(model, temperatures=temps, batch_size=7)
    naive = naive_task_scores(model, tok, backend, task, folder, temps)
    for j in range(len(temps)):
        assert len(naive[j]) == len(scores[j])
        for ours, ref in zip(scores[j], naive[j]):
            np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-4)


def test_temperature_range_is_the_official_arange() -> None:
    """min alone; else float32 arange(min, max + interval, interval), clamped at 1e-6: its length is
    ceil((max + interval - min) / interval) in doubles, so (1.0, 1.1, 0.05) runs to 1.15 as the official's does."""
    assert temperature_range(1.0) == [1.0]
    assert temperature_range(0.5) == [0.5]
    temps = temperature_range(1.0, 1.1, 0.05)
    assert temps == [float(np.float32(1.0 + i * 0.05)) for i in range(4)]
    assert temps[1] != 1.05  # float32's nearest, not the double
    assert temperature_range(0.5, 1.0, 0.25) == [0.5, 0.75, 1.0]
    assert temperature_range(0.0, 0.1, 0.05)[0] == pytest.approx(1e-6)


@pytest.mark.parametrize("backend", ["causal", "mlm", "mntp"])
def test_pllscore_convention_scores_targets_given_context1(backend: str, loaded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """EWoK under pllscore: each target given Context1 (word-l2r PLL for masked and MNTP models, BOS for a
    causal LM), as pllscore's own scorer gives it; the report at temperature 1."""
    from pllscore.scoring.causal import CausalScorer
    from pllscore.scoring.masked import MaskedScorer
    from pllscore.scoring.mntp import MntpScorer

    model, tok = loaded(backend)
    folder = SAMPLE / "fast_eval" / "ewok_fast"
    prepared = prepare_zero_shot("ewok", folder, tok, backend, convention="pllscore")
    item = prepared.items[0]
    scorer = {"causal": CausalScorer, "mlm": MaskedScorer, "mntp": MntpScorer}[backend](model, tok)
    options = {} if backend == "causal" else {"metric": "word-l2r"}
    targets = [c.strip() for c in item.completions]
    ref = scorer.score(targets, context=item.prefixes[0], progress=False, **options)
    result = prepared.run(model, temperatures=[1.0])
    np.testing.assert_allclose(prepared.scores(model)[0][0], [r.total for r in ref], rtol=1e-6)
    result.write(tmp_path)
    assert (tmp_path / "best_temperature_report.txt").read_text().startswith("TEMPERATURE: 1.00\n\n### UID ACCURACY")


def test_sums_round_as_torch_sums_each_row() -> None:
    """sum_rows sums each row over its width, by tables of one width: equal, bit for bit, to torch.sum of
    the row padded with zeros to that width alone (the official code's sums: a masked sentence's own reads, a
    causal row padded to its batch's widest), which rounds otherwise than the row unpadded."""
    import torch

    from pllscore.engine.babylm_scoring import sum_rows

    rng = np.random.default_rng(0)
    rows = [(rng.standard_normal(n) * 7 - 9).astype(np.float32) for n in rng.integers(0, 120, 300)]
    widths = [len(r) + int(k) for r, k in zip(rows, rng.choice([0, 0, 3, 40], 300))]
    sums = sum_rows(rows, widths)
    differ = 0
    for row, width, got in zip(rows, widths, sums):
        padded = torch.cat([torch.from_numpy(row), torch.zeros(width - len(row))]).sum().item()
        assert got == padded
        differ += padded != torch.from_numpy(row).sum().item()
    assert differ > 0  # the width matters
