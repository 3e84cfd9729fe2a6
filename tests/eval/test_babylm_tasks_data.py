"""BabyLM sentence tasks' files read into items: each task's sentences, groupings, and bad data named by file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pllscore.errors import InputError
from pllscore.eval.babylm.tasks_data import read_task

SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "data" / "babylm_sample" / "fast_eval"


def _write(folder: Path, name: str, lines: list[object] | str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    text = lines if isinstance(lines, str) else "".join(json.dumps(x) + "\n" for x in lines)
    path.write_text(text, encoding="utf-8")
    return path


def test_blimp_and_supplement(tmp_path: Path) -> None:
    good = {
        "sentence_good": "A b.",
        "sentence_bad": "B a.",
        "field": "syntax_semantics",
        "UID": "p",
        "linguistics_term": "t",
    }
    _write(tmp_path / "b", "x.jsonl", [good, {"sentence_good": "C.", "sentence_bad": "D."}])
    _write(tmp_path / "b", "notes.txt", "ignored")
    first, second = read_task("blimp", tmp_path / "b")
    assert first.sentences == first.completions == ("A b.", "B a.") and first.prefixes == (None, None)
    assert first.groups == (("field", "syntax/semantics"), ("UID", "p"), ("linguistics_term", "t"))
    assert second.groups == (("field", "supplement"), ("UID", "x"), ("linguistics_term", "supplement"))
    assert second.where.endswith("x.jsonl:2")


def test_ewok_entity_tracking_wug_comps() -> None:
    ewok = read_task("ewok", SAMPLE / "ewok_fast")[0]
    assert ewok.sentences[1] == ewok.prefixes[0] + " " + ewok.completions[1].lstrip()
    assert ewok.completions[0].startswith(" ") and ewok.prefixes[1] != ewok.prefixes[0]
    assert [k for k, _ in ewok.groups] == ["UID", "context_type", "context_contrast", "target_contrast"]
    full = read_task("ewok", SAMPLE / "ewok_fast", full_sentence_scores=True)[0]
    assert full.completions == full.sentences
    et = read_task("entity_tracking", SAMPLE / "entity_tracking_fast")
    assert {i.uid for i in et} >= {"regular_0_ops", "move_contents_1_ops"}
    assert all(s == p + c for i in et for s, p, c in zip(i.sentences, i.prefixes, i.completions))
    wug = read_task("wug_past", SAMPLE / "wug_past_tense")[0]
    assert wug.uid == "wug_past" and wug.prefixes == (None,) and len(wug.sentences) == 2 and wug.ratio == 0.085
    comps = read_task("comps", SAMPLE / "comps")
    assert {i.uid for i in comps} == {"base", "wugs"} and comps[0].shown == comps[0].sentences


@pytest.mark.parametrize(
    ("task", "text", "message"),
    [
        ("blimp", '{"sentence_good": "a"\n', r"x\.jsonl:1: not a JSON line"),
        ("blimp", '{"sentence_good": "a", "sentence_bad": "b"}\n[1]\n', r"x\.jsonl:2: expected a JSON object"),
        ("blimp", '{"sentence_good": "a"}\n', r"x\.jsonl:1: .*missing sentence_bad"),
        ("blimp", '{"sentence_good": "a", "sentence_bad": 3}\n', r"x\.jsonl:1: 'sentence_bad' must be a string"),
        ("wug_adj", '{"sentences": "a\\tb", "ratio": "high"}\n', r"x\.jsonl:1: 'ratio' must be a number"),
        ("entity_tracking", '{"input_prefix": "a", "options": [], "numops": 0}\n', r"x\.jsonl:1: 'options'"),
        ("comps", '{"prefix_acceptable": "a", "property_phrase": "b"}\n', r"missing prefix_unacceptable"),
    ],
)
def test_bad_lines_are_named(task: str, text: str, message: str, tmp_path: Path) -> None:
    _write(tmp_path / "t", "x.jsonl", text)
    with pytest.raises(InputError, match=message):
        read_task(task, tmp_path / "t")


def test_empty_and_missing_folders(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    _write(tmp_path / "blank", "x.jsonl", "\n\n")
    for folder in ("empty", "blank"):
        with pytest.raises(InputError, match="no items"):
            read_task("blimp", tmp_path / folder)
    with pytest.raises(InputError, match="no such folder"):
        read_task("blimp", tmp_path / "nowhere")
    with pytest.raises(InputError, match="unknown sentence task"):
        read_task("reading", tmp_path)
