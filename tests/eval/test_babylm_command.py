"""``pllscore babylm`` end to end on the shared sample and models: the official tree and files (and what the
pipeline's ``collate_preds.py`` makes of them), several checkpoints in one process, ``--resume`` after an
interruption, both conventions, the command line against the API, and bad input in one line with nothing
written."""

from __future__ import annotations

import json
import math
import shutil
from argparse import Namespace
from pathlib import Path

import pytest

import pllscore
from pllscore.errors import InputError, ModelError
from pllscore.eval.babylm import run as run_module
from pllscore.jobs.local import Interrupted
from tests.conftest import TINY_BERT, TINY_GPT2
from tests.eval.test_babylm_layout import FAST, SAMPLE
from tests.test_cli import run as cli

pytestmark = pytest.mark.shared

OFFICIAL_PIPELINE = Path("/work/babylm-official")
QUICK = "blimp,wug_adj"  # two tasks of a few items: what the tests about running (not numbers) run


@pytest.fixture(scope="module", autouse=True)
def _shared() -> None:
    if not (FAST.is_dir() and TINY_GPT2.is_dir() and TINY_BERT.is_dir()):
        pytest.skip("the shared sample and models must sit beside the repository")


def _files(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*")) if p.is_file()}


def _close(a: object, b: object, where: str) -> None:
    """JSON values equal, numbers to the float noise of a different batching (1e-5)."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), where
        assert (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-5), (where, a, b)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), where
        for k in a:
            _close(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]")
    else:
        assert a == b, (where, a, b)


def assert_official_tree(ours: Path, official: Path, skip: tuple[str, ...] = ()) -> None:
    """The same files; reports' text equal; predictions equal (probabilities and fits to 1e-5)."""
    mine = _files(ours)
    theirs = {k: v for k, v in _files(official).items() if not k.startswith(skip)}
    assert sorted(mine) == sorted(theirs)
    for name, path in theirs.items():
        if name.endswith(".txt"):
            assert mine[name].read_text() == path.read_text(), name
        elif name.endswith(".jsonl"):
            a = [json.loads(x) for x in mine[name].read_text().splitlines()]
            _close(a, [json.loads(x) for x in path.read_text().splitlines()], name)
        else:
            _close(json.loads(mine[name].read_text()), json.loads(path.read_text()), name)


@pytest.fixture(scope="module")
def causal(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pllscore.eval.babylm.BabylmRun]:
    """The whole sample through tiny-gpt2 (causal), once for the module."""
    out = tmp_path_factory.mktemp("causal")
    return out, pllscore.babylm(TINY_GPT2, FAST, out, backend="causal", device="cpu")


def test_causal_writes_the_official_tree(causal) -> None:  # type: ignore[no-untyped-def]
    out, result = causal
    assert result.output == out / "tiny-gpt2" and len(result.ran) == 8 and result.notes == ()
    official = SAMPLE / "official" / "causal" / "tiny-gpt2" / "main" / "zero_shot"
    assert_official_tree(out / "tiny-gpt2" / "main" / "zero_shot", official)
    summary = result.summary.set_index(["task", "grouping"])["main"]
    assert summary["blimp_fast", "overall"] == pytest.approx(66.6667, abs=1e-3)  # the report's 66.67
    assert (official / "causal/blimp/blimp_fast/best_temperature_report.txt").read_text().rstrip().endswith("66.67")
    provenance = json.loads((out / "tiny-gpt2" / "provenance.json").read_text())
    assert provenance["runs"][0]["finished"] and provenance["runs"][0]["settings"]["backend"] == "causal"


@pytest.mark.parametrize("backend", ["mlm", "mntp"])
def test_masked_backends_write_the_official_tree(backend: str, tmp_path: Path) -> None:
    """A task of each file format through tiny-bert-cased (every task's files are the task modules' own tests')."""
    tasks = "blimp,ewok,wug_past"
    pllscore.babylm(TINY_BERT, FAST, tmp_path, backend=backend, tasks=tasks, device="cpu")
    official = SAMPLE / "official" / backend / "tiny-bert-cased" / "main" / "zero_shot"
    skip = tuple(f"{backend}/{t}" for t in ("reading", "comps", "entity_tracking", "wug_adj", "blimp/supplement"))
    assert_official_tree(tmp_path / "tiny-bert-cased" / "main" / "zero_shot", official, skip=skip)


def _collate(results: Path, backend: str, revision: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The fast-track metrics the official collate_preds.py computes from a results tree (the sample's sizes
    are not the real data's: its size check is left out)."""
    monkeypatch.syspath_prepend(str(OFFICIAL_PIPELINE))
    from evaluation_pipeline import collate_preds  # type: ignore[import-not-found]

    monkeypatch.setattr(collate_preds, "_check_size", lambda *a, **k: True)
    load = collate_preds._load_results

    def regular_only(path: Path) -> dict:
        """The fast track's entity tracking is its regular split; the sample's also holds move_contents, for which
        collate_preds finds no targets (it reads regular.jsonl only) and divides by zero."""
        got = load(path)
        return {k: v for k, v in got.items() if k.startswith("regular")} if "entity_tracking" in str(path) else got

    monkeypatch.setattr(collate_preds, "_load_results", regular_only)
    args = Namespace(results_dir=results, model_path_or_name=Path(TINY_GPT2), backend=backend, fast_eval_dir=FAST,
                     revision_name=revision, track="strict", fast=True)  # fmt: skip
    assert collate_preds._check_validity_of_dir(args, revision, fast=True)
    return collate_preds.get_revision_fast_eval_metrics(args, revision)


def test_collate_preds_collects_the_run_as_it_is(causal, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    out, _ = causal
    model = out / "tiny-gpt2" / "main" / "zero_shot" / "causal"
    # the files collate_preds.py opens for the fast track (its get_revision_fast_eval_metrics)
    for path in ("blimp/blimp_fast", "blimp/supplement_fast", "ewok/ewok_fast", "entity_tracking/entity_tracking_fast",
                 "wug_adj/wug_adj_nominalization", "wug_past/wug_past_tense", "reading"):  # fmt: skip
        assert (model / path / "predictions.json").is_file()
    if not (OFFICIAL_PIPELINE / "evaluation_pipeline" / "collate_preds.py").is_file():
        return  # the paths above are what it reads; its code is not beside this checkout
    ours = _collate(out, "causal", "main", monkeypatch)
    theirs = _collate(SAMPLE / "official" / "causal", "causal", "main", monkeypatch)
    _close(ours, theirs, "collated")
    assert set(ours) == {"blimp", "blimp_supplement", "ewok", "entity_tracking", "wug_adj", "wug_past", "reading"}


@pytest.fixture(scope="module")
def checkpoints_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """chck_1M: tiny-gpt2 itself; chck_2M: the same weights with another tokenizer setting (model_max_length);
    chck_10M: tiny-gpt2's weights moved by noise."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root = tmp_path_factory.mktemp("ckpts") / "tiny-run"
    root.mkdir()
    (root / "chck_1M").symlink_to(TINY_GPT2, target_is_directory=True)
    (root / "chck_2M").mkdir()
    for f in TINY_GPT2.iterdir():
        if f.name != "tokenizer_config.json":
            (root / "chck_2M" / f.name).symlink_to(f)
    config = json.loads((TINY_GPT2 / "tokenizer_config.json").read_text())
    (root / "chck_2M" / "tokenizer_config.json").write_text(json.dumps({**config, "model_max_length": 77}))
    model = AutoModelForCausalLM.from_pretrained(TINY_GPT2)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    model.save_pretrained(root / "chck_10M")
    AutoTokenizer.from_pretrained(TINY_GPT2).save_pretrained(root / "chck_10M")
    return root


def _tree(root: Path) -> dict[str, bytes]:
    return {k: p.read_bytes() for k, p in _files(root).items() if not k.startswith((".pllscore", "provenance"))}


def test_several_checkpoints_in_one_process(causal, checkpoints_folder: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Each sub-folder is a revision, each loaded once; the data is prepared again only for the checkpoint whose
    tokenizer differs; chck_1M (tiny-gpt2 itself) gives the files of tiny-gpt2's own run."""
    prepared, loaded = [], []
    real_prepare, real_load = run_module.prepare_task, run_module._load
    monkeypatch.setattr(run_module, "prepare_task", lambda t, *a: prepared.append(t.folder) or real_prepare(t, *a))
    monkeypatch.setattr(run_module, "_load", lambda ck, *a: loaded.append(ck.revision) or real_load(ck, *a))
    result = pllscore.babylm(checkpoints_folder, FAST, tmp_path, backend="causal", tasks=QUICK, device="cpu")
    assert loaded == ["chck_1M", "chck_2M", "chck_10M"]
    assert prepared == ["blimp_fast", "wug_adj_nominalization"] * 2  # once for tiny-gpt2's tokenizer, once for 2M's
    run_dir, main = tmp_path / "tiny-run", causal[0] / "tiny-gpt2" / "main"
    for rev in ("chck_1M", "chck_2M"):
        for name, data in _tree(run_dir / rev).items():
            assert data == (main / name).read_bytes(), name
    assert _tree(run_dir / "chck_10M") != _tree(run_dir / "chck_1M")
    assert list(result.summary.columns) == ["backend", "task", "grouping", "chck_1M", "chck_2M", "chck_10M"]
    assert (run_dir / "summary.csv").is_file()


def test_resume_after_an_interruption_equals_an_uninterrupted_run(
    checkpoints_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    revisions = ["chck_1M", "chck_10M"]
    whole = tmp_path / "whole"
    pllscore.babylm(checkpoints_folder, FAST, whole, backend="causal", tasks=QUICK, revisions=revisions, device="cpu")
    calls = []
    real = run_module.run_task

    def stopped_at_the_third(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(run_module, "run_task", stopped_at_the_third)
    stopped = tmp_path / "stopped"
    with pytest.raises(Interrupted, match="interrupted after 2 of 4 tasks.*--resume"):
        pllscore.babylm(checkpoints_folder, FAST, stopped, backend="causal", tasks=QUICK, revisions=revisions)
    root = stopped / "tiny-run"
    assert sorted(_tree(root)) == sorted(k for k in _tree(whole / "tiny-run") if k.startswith("chck_1M/"))
    assert not any(".new-" in str(p) for p in root.rglob("*"))
    monkeypatch.setattr(run_module, "run_task", real)
    with pytest.raises(InputError, match="already holds finished chck_1M/blimp_fast .* add --resume"):
        pllscore.babylm(checkpoints_folder, FAST, stopped, backend="causal", tasks=QUICK, revisions=revisions)
    again = pllscore.babylm(checkpoints_folder, FAST, stopped, backend="causal", tasks=QUICK, revisions=revisions,
                            resume=True)  # fmt: skip
    assert again.resumed == ("chck_1M/blimp_fast", "chck_1M/wug_adj_nominalization")
    assert again.ran == ("chck_10M/blimp_fast", "chck_10M/wug_adj_nominalization")
    assert _tree(root) == _tree(whole / "tiny-run")
    runs = json.loads((root / "provenance.json").read_text())["runs"]
    assert [r["finished"] for r in runs] == [False, True]


def test_both_conventions_side_by_side(tmp_path: Path) -> None:
    result = pllscore.babylm(TINY_GPT2, FAST, tmp_path, backend="causal", tasks="blimp", convention="both")
    assert list(result.summary.columns) == ["backend", "task", "grouping", "main", "main pllscore"]
    run = tmp_path / "tiny-gpt2" / "main"
    assert (run / "zero_shot/causal/blimp/blimp_fast/predictions.json").is_file()
    assert (run / "pllscore/causal/blimp/blimp_fast/predictions.json").is_file()
    assert result.lines()[0].split() == ["task", "grouping", "main", "main", "pllscore"]


def test_the_command_line_gives_the_apis_files_and_table(causal, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("babylm", str(TINY_GPT2), "-b", "causal", "-d", str(FAST), "-o", str(tmp_path), "--tasks", QUICK,
               "--device", "cpu", "--progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "babylm tiny-gpt2" in done.stderr and "2/2" in done.stderr  # the bar over revisions x tasks
    assert (
        done.stderr.rstrip().splitlines()[-1]
        == f"results written to {tmp_path / 'tiny-gpt2'}/ (summary.csv, provenance.json)"
    )
    api = pllscore.babylm(TINY_GPT2, FAST, tmp_path / "api", backend="causal", tasks=QUICK, device="cpu")
    assert done.stdout.splitlines() == api.lines()
    assert _tree(tmp_path / "tiny-gpt2") == {
        k: v for k, v in _tree(tmp_path / "api" / "tiny-gpt2").items() if k != "summary.csv"
    } | {"summary.csv": (tmp_path / "tiny-gpt2" / "summary.csv").read_bytes()}
    for name in _tree(tmp_path / "tiny-gpt2"):
        if name != "summary.csv":
            assert (causal[0] / "tiny-gpt2" / name).read_bytes() == (tmp_path / "tiny-gpt2" / name).read_bytes()
    again = cli("babylm", str(TINY_GPT2), "-b", "causal", "-d", str(FAST), "-o", str(tmp_path), "--tasks", QUICK)
    assert again.returncode == 1 and again.stderr.count("\n") == 1 and "--resume" in again.stderr


def _data(tmp_path: Path, *folders: str) -> Path:
    data = tmp_path / "fast_eval"
    for f in folders:
        shutil.copytree(FAST / f, data / f)
    return data


def _one_line_nothing_written(error: pytest.ExceptionInfo, out: Path) -> str:
    message = str(error.value)
    assert "\n" not in message
    assert not out.exists() or not any(out.rglob("*")), sorted(out.rglob("*"))
    return message


def test_a_malformed_jsonl_line_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    data = _data(tmp_path, "blimp_fast", "wug_adj_nominalization")
    bad = data / "blimp_fast" / "passive_2.jsonl"
    lines = bad.read_text().splitlines()
    bad.write_text("\n".join([*lines[:2], '{"sentence_good": "A cat', *lines[3:]]) + "\n")
    out = tmp_path / "out"
    with pytest.raises(InputError) as e:
        pllscore.babylm(TINY_GPT2, data, out, backend="causal")
    message = _one_line_nothing_written(e, out)
    assert "passive_2.jsonl" in message and "3" in message


def test_a_task_file_without_its_fields_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    data = _data(tmp_path, "wug_adj_nominalization", "ewok_fast")
    bad = next((data / "ewok_fast").glob("*.jsonl"))
    lines = bad.read_text().splitlines()
    first = json.loads(lines[0])
    del first["Target2"]
    bad.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    out = tmp_path / "out"
    with pytest.raises(InputError) as e:
        pllscore.babylm(TINY_GPT2, data, out, backend="causal")
    message = _one_line_nothing_written(e, out)
    assert bad.name in message and "Target2" in message


def test_a_missing_reading_column_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    import pandas as pd

    data = _data(tmp_path, "wug_adj_nominalization", "reading")
    csv = data / "reading" / "reading_data.csv"
    pd.read_csv(csv, dtype={"item": str}).drop(columns=["Subtlex_log10"]).to_csv(csv, index=False)
    out = tmp_path / "out"
    with pytest.raises(InputError) as e:
        pllscore.babylm(TINY_GPT2, data, out, backend="causal")
    message = _one_line_nothing_written(e, out)
    assert "reading_data.csv" in message and "Subtlex_log10" in message


MISFITS = [
    (TINY_GPT2, "mlm", "use --backend causal"),
    (TINY_BERT, "causal", "use --backend mlm or mntp"),
    (TINY_GPT2, "enc_dec_mask", "use --backend causal"),
]


@pytest.mark.parametrize("model,backend,fits", MISFITS)
def test_a_backend_that_does_not_fit_the_model_is_one_line(
    model: Path, backend: str, fits: str, tmp_path: Path
) -> None:
    with pytest.raises(ModelError) as e:
        pllscore.babylm(model, FAST, tmp_path / "out", backend=backend)
    assert _one_line_nothing_written(e, tmp_path / "out").endswith(fits)


def test_empty_folders_and_missing_revisions_are_one_line(checkpoints_folder: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    out = tmp_path / "out"
    with pytest.raises(InputError, match="holds no BabyLM task folder") as e:
        pllscore.babylm(TINY_GPT2, tmp_path / "empty", out, backend="causal")
    _one_line_nothing_written(e, out)
    with pytest.raises(InputError, match="is empty") as e:
        pllscore.babylm(tmp_path / "empty", FAST, out, backend="causal")
    with pytest.raises(ModelError, match="has no checkpoint sub-folder 'chck_3M'") as e:
        pllscore.babylm(checkpoints_folder, FAST, out, backend="causal", revisions=["chck_1M", "chck_3M"])
    _one_line_nothing_written(e, out)
    with pytest.raises(ModelError, match="tiny-gpt2' has no checkpoint sub-folder 'chck_1M'"):
        pllscore.babylm(TINY_GPT2, FAST, out, backend="causal", revisions="chck_1M")  # never taken for main


def test_the_tokenizer_key_tells_tokenizers_apart(checkpoints_folder: Path) -> None:
    from transformers import AutoTokenizer

    from pllscore.eval.babylm.tasks import tokenizer_key

    keys = [tokenizer_key(AutoTokenizer.from_pretrained(checkpoints_folder / c)) for c in ("chck_1M", "chck_10M")]
    assert keys[0] == keys[1]
    assert tokenizer_key(AutoTokenizer.from_pretrained(checkpoints_folder / "chck_2M")) != keys[0]
    assert tokenizer_key(AutoTokenizer.from_pretrained(TINY_BERT)) != keys[0]


def test_unknown_folders_and_skipped_tasks_are_told(tmp_path: Path) -> None:
    data = _data(tmp_path, "wug_adj_nominalization")
    (data / "extra").mkdir()
    notes: list[str] = []
    result = pllscore.babylm(TINY_GPT2, data, tmp_path / "out", backend="causal", on_note=notes.append)
    assert result.ran == ("main/wug_adj_nominalization",) and list(result.notes) == notes
    assert len([n for n in notes if n.startswith("skipped")]) == 7 and notes[-1].endswith(
        "extra: not a fast_eval task folder; left alone"
    )


def test_the_ray_engine_writes_the_same_files(checkpoints_folder: Path, tmp_path: Path, ray_cluster) -> None:  # type: ignore[no-untyped-def]
    from pllscore.settings import RaySettings

    revisions = ["chck_1M", "chck_10M"]
    local = pllscore.babylm(checkpoints_folder, FAST, tmp_path / "local", backend="causal", tasks=QUICK,
                            revisions=revisions, device="cpu")  # fmt: skip
    on_ray = pllscore.babylm(checkpoints_folder, FAST, tmp_path / "ray", backend="causal", tasks=QUICK,
                             revisions=revisions, engine="ray", ray=RaySettings(workers=2), device="cpu")  # fmt: skip
    assert sorted(on_ray.ran) == sorted(local.ran)
    assert _tree(tmp_path / "ray" / "tiny-run") == _tree(tmp_path / "local" / "tiny-run")


def test_a_ray_actors_job_pickles_and_gives_the_local_files(
    checkpoints_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What an actor runs (:func:`on_actor` on the scorer it loaded, the job sent through pickle) writes the files of
    the local engine; a checkpoint whose tokenizer is not the one the driver prepared with is prepared again."""
    import pickle

    from pllscore.eval.babylm import on_ray
    from pllscore.eval.babylm.checkpoints import checkpoints
    from pllscore.eval.babylm.layout import find_tasks, select
    from pllscore.eval.babylm.on_ray import Job, on_actor
    from pllscore.eval.babylm.records import Unit
    from pllscore.eval.babylm.tasks import RunOptions, prepare_task, tokenizer_key

    local = pllscore.babylm(checkpoints_folder, FAST, tmp_path / "local", backend="causal", tasks=QUICK,
                            revisions=["chck_10M"], device="cpu")  # fmt: skip
    ck = checkpoints(checkpoints_folder, ["chck_10M"])[0]
    tasks = select(find_tasks(FAST)[0], [QUICK])
    scorer = pllscore.load(ck.source, device="cpu", kind="causal")
    prepared = {("babylm", t.folder): prepare_task(t, scorer.tokenizer, "causal", "babylm") for t in tasks}
    units = tuple(Unit(ck, "babylm", t) for t in tasks)
    options = RunOptions("causal", (1.0,))
    again: list[str] = []
    monkeypatch.setattr(on_ray, "prepare_task", lambda t, *a: again.append(t.folder) or prepare_task(t, *a))
    for key in (tokenizer_key(scorer.tokenizer), "another tokenizer's"):
        job = pickle.loads(pickle.dumps(Job(units, prepared, key, options)))
        for unit, result in zip(units, on_actor(scorer, job)):
            out = tmp_path / key[:8] / unit.task.folder
            pickle.loads(pickle.dumps(result)).write(out)  # as the driver gets it back
            official = local.output / "chck_10M" / "zero_shot" / "causal" / unit.task.task / unit.task.folder
            assert _tree(out) == _tree(official)
    assert again == [t.folder for t in tasks]  # only for the job prepared with another tokenizer


def test_a_temperature_range_runs_as_the_official_one(tmp_path: Path) -> None:
    """--min/--max-temperature/--temperature-interval reach the task as the official range (float32 arange)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from pllscore.engine.babylm_scoring import temperature_range
    from pllscore.eval.babylm.zero_shot import prepare_zero_shot

    result = pllscore.babylm(TINY_GPT2, FAST, tmp_path, backend="causal", tasks="wug_adj", min_temperature=0.5,
                             max_temperature=2.0, temperature_interval=0.5)  # fmt: skip
    record = json.loads(next((tmp_path / "tiny-gpt2" / ".pllscore").rglob("*.json")).read_text())
    assert record["settings"]["temperatures"] == [0.5, 1.0, 1.5, 2.0] == temperature_range(0.5, 2.0, 0.5)
    model, tokenizer = AutoModelForCausalLM.from_pretrained(TINY_GPT2).eval(), AutoTokenizer.from_pretrained(TINY_GPT2)
    direct = prepare_zero_shot("wug_adj", FAST / "wug_adj_nominalization", tokenizer, "causal")
    direct.run(model, temperatures=[0.5, 1.0, 1.5, 2.0]).write(tmp_path / "direct")
    ours = result.output / "main" / "zero_shot" / "causal" / "wug_adj" / "wug_adj_nominalization"
    assert _tree(ours) == _tree(tmp_path / "direct")
    assert (tmp_path / "direct" / "best_temperature_report.txt").read_text().startswith("TEMPERATURE: ")
