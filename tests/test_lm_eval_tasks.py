"""lm-eval's index of its built-in tasks kept in pllscore's cache (integrations/lm_eval_tasks.py): the same index
as lm-eval's own ``TaskIndex.build``, overrides and their warnings included; read back instead of built while the
files are unchanged; built again when a file changes or the entry is broken; no error when the cache cannot be
written. A small folder of tasks stands for lm-eval's own (which takes 12 s to index)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("lm_eval")

from lm_eval.tasks import _index  # noqa: E402

from pllscore.integrations import lm_eval_tasks  # noqa: E402

TASK = (
    "task: {name}\ndataset_path: json\noutput_type: multiple_choice\nvalidation_split: train\n"
    'doc_to_text: "{text}"\ndoc_to_target: 0\ndoc_to_choice: "{{{{[a, b]}}}}"\n'
)


def _lm_eval_build():
    return getattr(_index.TaskIndex.build, "__wrapped__", _index.TaskIndex.build)  # lm-eval's own


@pytest.fixture
def folders(tmp_path, monkeypatch):
    monkeypatch.setenv("PLLSCORE_CACHE", str(tmp_path / "cache"))
    builtin, extra = tmp_path / "builtin", tmp_path / "extra"
    (builtin / "sub").mkdir(parents=True)
    (builtin / "a.yaml").write_text(TASK.format(name="a", text="A"))
    (builtin / "sub" / "b.yaml").write_text(TASK.format(name="b", text="B"))
    (builtin / "group.yaml").write_text("group: g\ntask:\n  - a\n  - b\n")
    extra.mkdir()
    (extra / "b.yaml").write_text(TASK.format(name="b", text="mine"))  # overrides the built-in b
    (extra / "c.yaml").write_text(TASK.format(name="c", text="C"))
    return builtin, extra


def _counting(builds):
    build = _lm_eval_build()

    def counted(paths, *, resolve_includes=True):
        builds.append([p.name for p in paths])
        return build(paths, resolve_includes=resolve_includes)

    return counted


def test_the_cached_index_is_lm_evals_and_is_read_back_until_a_file_changes(folders, tmp_path):
    builtin, extra = folders
    own = _lm_eval_build()([builtin, extra])
    builds: list[list[str]] = []
    warned: list[tuple] = []
    build = lm_eval_tasks.cached(_counting(builds), builtin, lambda *a: warned.append(a))
    assert build([builtin, extra]) == own
    assert own["b"].cfg["doc_to_text"] == "mine" and set(own) == {"a", "b", "c", "g"}
    assert warned == [("Task '%s' from %s overrides existing task from %s", "b", extra / "b.yaml",
                       builtin / "sub" / "b.yaml")]  # fmt: skip
    assert builds == [["builtin"], ["extra"]]
    (entry,) = (tmp_path / "cache" / "lm-eval-tasks").iterdir()

    assert build([builtin, extra]) == own  # read back: only the included folder is indexed again
    assert builds[2:] == [["extra"]]

    (builtin / "a.yaml").write_text(TASK.format(name="a", text="changed"))
    os.utime(builtin / "a.yaml", ns=(1, 1))
    assert build([builtin])["a"].cfg["doc_to_text"] == "changed"
    assert builds[3:] == [["builtin"]]

    entry.write_bytes(b"not a pickle")  # an entry of no use is not read: the index is built again
    (newer,) = set((tmp_path / "cache" / "lm-eval-tasks").iterdir()) - {entry}
    newer.write_bytes(b"\x80\x05broken")
    assert build([builtin]) == _lm_eval_build()([builtin])
    assert builds[4:] == [["builtin"]]


def test_other_calls_go_to_lm_eval_and_an_unwritable_cache_is_no_error(folders, tmp_path, monkeypatch):
    builtin, extra = folders
    builds: list[list[str]] = []
    build = lm_eval_tasks.cached(_counting(builds), builtin, lambda *a: None)
    assert build([extra]) == _lm_eval_build()([extra]) and builds == [["extra"]]  # no built-in folder: as it was
    assert build([builtin], resolve_includes=False) == _lm_eval_build()([builtin], resolve_includes=False)
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("PLLSCORE_CACHE", str(tmp_path / "file"))  # a folder cannot be made there
    assert build([builtin]) == _lm_eval_build()([builtin])


def test_importing_the_adapter_installs_the_cache_once():
    import pllscore.integrations.lm_eval  # noqa: F401

    installed = _index.TaskIndex.build
    assert installed.pllscore_cache and not getattr(installed.__wrapped__, "pllscore_cache", False)
    lm_eval_tasks.install()
    assert _index.TaskIndex.build is installed
