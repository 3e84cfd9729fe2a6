"""``pllscore babylm``'s pure logic: the evaluation folder's tasks, the results tree's paths, the checkpoints, the
settings (temperatures as the official ``torch.arange``), the summary table, the atomic commit of a task's files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pllscore.errors import InputError, ModelError
from pllscore.eval.babylm import checkpoints as ck_module
from pllscore.eval.babylm.checkpoints import Checkpoint, checkpoints, read_revisions
from pllscore.eval.babylm.layout import find_tasks, model_name, select, task_output
from pllscore.eval.babylm.records import commit_task
from pllscore.eval.babylm.summary import summary_lines, summary_table
from pllscore.settings.babylm import BabylmSettings
from tests.conftest import SHARED

SAMPLE = SHARED.parent / "data" / "babylm_sample"
FAST = SAMPLE / "fast_eval"
FAST_FOLDERS = ["blimp_fast", "supplement_fast", "ewok_fast", "entity_tracking_fast", "wug_adj_nominalization",
                "wug_past_tense", "comps", "reading"]  # fmt: skip


def _need_sample() -> None:
    if not FAST.is_dir():
        pytest.skip(f"{FAST} not found: the shared data must sit beside the repository")


def _folder(root: Path, *names: str) -> Path:
    for name in names:
        if name == "reading":
            (root / "reading").mkdir(parents=True)
            (root / "reading" / "reading_data.csv").write_text("item,word\n")
        else:
            (root / name).mkdir(parents=True)
            (root / name / "x.jsonl").write_text("{}\n")
    return root


def test_the_sample_holds_every_fast_task_in_the_pipelines_order() -> None:
    _need_sample()
    tasks, notes = find_tasks(FAST)
    assert [t.folder for t in tasks] == FAST_FOLDERS
    assert notes == []
    assert [t.task for t in tasks] == ["blimp", "blimp", "ewok", "entity_tracking", "wug_adj", "wug_past", "comps",
                                       "reading"]  # fmt: skip
    assert tasks[-1].path == FAST / "reading" / "reading_data.csv" and tasks[-1].dataset is None


def test_missing_tasks_are_skipped_in_one_line_each_and_unknown_folders_named(tmp_path: Path) -> None:
    root = _folder(tmp_path / "fast_eval", "blimp_fast", "reading", "my_notes")
    tasks, notes = find_tasks(root)
    assert [t.folder for t in tasks] == ["blimp_fast", "reading"]
    skipped = [n for n in notes if n.startswith("skipped ")]
    assert [n.split(":")[0] for n in skipped] == [
        "skipped supplement", "skipped ewok", "skipped entity_tracking", "skipped wug_adj", "skipped wug_past",
        "skipped comps",
    ]  # fmt: skip
    assert all("\n" not in n for n in notes)
    assert notes[-1] == f"{root / 'my_notes'}: not a fast_eval task folder; left alone"


def test_a_full_eval_folder_is_read_as_the_full_suite(tmp_path: Path) -> None:
    root = _folder(tmp_path / "full_eval", "blimp_filtered", "supplement_filtered", "entity_tracking", "comps")
    tasks, notes = find_tasks(root)
    assert [(t.folder, t.task, t.dataset) for t in tasks] == [
        ("blimp_filtered", "blimp", "blimp_filtered"), ("supplement_filtered", "blimp", "supplement_filtered"),
        ("entity_tracking", "entity_tracking", "entity_tracking"), ("comps", "comps", "comps"),
    ]  # fmt: skip
    assert any("skipped ewok" in n for n in notes) and not any("not a" in n for n in notes)


def test_an_empty_or_missing_data_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="holds no BabyLM task folder"):
        find_tasks(tmp_path)
    with pytest.raises(InputError, match="is not a folder"):
        find_tasks(tmp_path / "nowhere")


def test_tasks_are_selected_by_short_or_folder_name(tmp_path: Path) -> None:
    tasks, _ = find_tasks(_folder(tmp_path / "d", "blimp_fast", "supplement_fast", "ewok_fast", "reading"))
    assert [t.folder for t in select(tasks, ["reading,supplement"])] == ["supplement_fast", "reading"]
    assert [t.folder for t in select(tasks, ["ewok_fast", "blimp"])] == ["blimp_fast", "ewok_fast"]
    assert select(tasks, None) == tasks
    with pytest.raises(InputError, match="comps is missing from the data folder; choose from blimp, supplement"):
        select(tasks, ["comps"])
    with pytest.raises(InputError, match="blimpp is not a BabyLM task"):
        select(tasks, ["blimpp"])


def test_task_outputs_are_the_official_trees_folders() -> None:
    """Every task's folder under RESULTS is one the official pipeline wrote for the sample."""
    _need_sample()
    tasks, _ = find_tasks(FAST)
    for backend, model in (("causal", "tiny-gpt2"), ("mlm", "tiny-bert-cased"), ("mntp", "tiny-bert-cased")):
        results = SAMPLE / "official" / backend
        for t in tasks:
            out = task_output(results, model_name(SHARED / model), "main", "babylm", backend, t)
            assert (out / ("report.txt" if t.reading else "best_temperature_report.txt")).is_file(), out
        assert task_output("R", "m", "chck_1M", "pllscore", backend, tasks[0]) == Path(
            f"R/m/chck_1M/pllscore/{backend}/blimp/blimp_fast"
        )


def test_model_name_is_the_stem_collate_preds_takes() -> None:
    assert model_name("/models/tiny-gpt2/") == "tiny-gpt2"
    assert model_name("HuggingFaceTB/SmolLM2-135M") == "SmolLM2-135M"
    assert model_name("org/gpt-1.5") == Path("org/gpt-1.5").stem == "gpt-1"


def _model(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    return folder


def test_a_folder_of_checkpoints_runs_its_sub_folders_in_natural_order(tmp_path: Path) -> None:
    for name in ("chck_10M", "chck_2M", "chck_1M"):
        _model(tmp_path / "m" / name)
    (tmp_path / "m" / "logs").mkdir()  # no model in it: not a checkpoint
    got = checkpoints(tmp_path / "m")
    assert [c.revision for c in got] == ["chck_1M", "chck_2M", "chck_10M"]
    assert got[0] == Checkpoint("chck_1M", str(tmp_path / "m" / "chck_1M"), None)  # never a Hub revision=
    (tmp_path / "revs.txt").write_text("# the two\nchck_10M\n\nchck_2M  # small\n")
    assert read_revisions(tmp_path / "revs.txt") == ["chck_10M", "chck_2M"]
    assert [c.revision for c in checkpoints(tmp_path / "m", ["chck_1M"], tmp_path / "revs.txt")] == [
        "chck_1M", "chck_10M", "chck_2M",
    ]  # fmt: skip


def test_a_revision_a_local_model_lacks_is_one_line_never_main(tmp_path: Path) -> None:
    model = _model(tmp_path / "tiny")
    assert checkpoints(model) == [Checkpoint("main", str(model))]
    with pytest.raises(ModelError, match=r"--revision chck_1M: the local model .* has no checkpoint sub-folder"):
        checkpoints(model, ["chck_1M"])
    _model(tmp_path / "many" / "chck_1M")
    with pytest.raises(ModelError, match=r"has no checkpoint sub-folder 'chck_9M' \(its checkpoints: chck_1M\)"):
        checkpoints(tmp_path / "many", ["chck_9M"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="is empty"):
        checkpoints(tmp_path / "empty")
    with pytest.raises(InputError, match="plain name"):
        checkpoints(model, ["../x"])


def test_hub_revisions_are_checked_against_the_hubs_branches_or_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ck_module, "_hub_refs", lambda name: {"main", "chck_1M"})
    assert checkpoints("org/model", ["chck_1M"]) == [Checkpoint("chck_1M", "org/model", "chck_1M")]
    with pytest.raises(ModelError, match=r"has no branch or tag 'chck_2M' \(it has chck_1M, main\)"):
        checkpoints("org/model", ["chck_2M"])
    monkeypatch.setattr(ck_module, "_hub_refs", lambda name: None)  # offline
    with pytest.raises(ModelError, match="not in the local Hugging Face cache"):
        checkpoints("org/model-nobody-has", ["chck_2M"])
    assert checkpoints("org/model") == [Checkpoint("main", "org/model", None)]


def test_settings_refuse_bad_values_in_one_line() -> None:
    with pytest.raises(InputError, match="no --backend given; choose causal, mlm, mntp, enc_dec_mask"):
        BabylmSettings()
    with pytest.raises(InputError, match="unknown backend 'gpt'"):
        BabylmSettings(backend="gpt")
    with pytest.raises(InputError, match="unknown convention 'paper'"):
        BabylmSettings(backend="mlm", convention="paper")
    with pytest.raises(InputError, match="--max-temperature 0.5 is below --min-temperature 1"):
        BabylmSettings(backend="mlm", max_temperature=0.5)
    assert BabylmSettings(backend="mlm", convention="both").conventions() == ("babylm", "pllscore")


def _record(backend: str, convention: str, revision: str, folder: str, rows: list) -> dict:
    return {"backend": backend, "convention": convention, "revision": revision, "folder": folder, "summary": rows}


def test_the_summary_puts_revisions_in_natural_order_and_conventions_side_by_side() -> None:
    records = [
        _record("causal", "babylm", "chck_10M", "reading", [["reading/eye_tracking", 0.5]]),
        _record("causal", "pllscore", "chck_2M", "blimp_fast", [["blimp_fast/overall", 60.0]]),
        _record("causal", "babylm", "chck_2M", "blimp_fast", [["blimp_fast/overall", 70.0], ["blimp_fast/uid/a", 1]]),
        _record("causal", "babylm", "chck_10M", "blimp_fast", [["blimp_fast/overall", 80.0]]),
        _record("mlm", "babylm", "chck_2M", "blimp_fast", [["blimp_fast/overall", 10.0]]),
    ]
    table = summary_table(records, backends=["causal"])
    assert list(table.columns) == ["backend", "task", "grouping", "chck_2M", "chck_2M pllscore", "chck_10M"]
    assert table[["task", "grouping"]].values.tolist() == [
        ["blimp_fast", "overall"], ["blimp_fast", "uid/a"], ["reading", "eye_tracking"],
    ]  # fmt: skip
    assert table["chck_2M"].tolist()[:2] == [70.0, 1.0] and table["chck_2M pllscore"].tolist()[0] == 60.0
    assert math.isnan(table["chck_10M"].tolist()[1])
    lines = summary_lines(table)
    assert lines[0].split() == ["task", "grouping", "chck_2M", "chck_2M", "pllscore", "chck_10M"]
    assert lines[1].split() == ["blimp_fast", "overall", "70.00", "60.00", "80.00"]
    assert set(summary_table(records)["backend"]) == {"causal", "mlm"}


def test_a_task_written_halfway_leaves_nothing_and_keeps_the_earlier_files(tmp_path: Path) -> None:
    out = tmp_path / "m" / "main" / "zero_shot" / "causal" / "blimp" / "blimp_fast"

    def good(folder: Path) -> None:
        (folder / "predictions.json").write_text(json.dumps({"a": 1}))

    def broken(folder: Path) -> None:
        (folder / "predictions.json").write_text("{")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        commit_task(out, broken)
    assert not out.exists() and list(out.parent.iterdir()) == []
    commit_task(out, good)
    with pytest.raises(KeyboardInterrupt):
        commit_task(out, broken)
    assert [p.name for p in out.parent.iterdir()] == ["blimp_fast"]
    assert json.loads((out / "predictions.json").read_text()) == {"a": 1}
