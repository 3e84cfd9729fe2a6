"""score_file takes the settings objects and keyword options alike; what it records and resume compares
comes from those objects, and outputs written before a setting was recorded still resume."""

from __future__ import annotations

import json

import pytest

from pllscore import InputError
from pllscore.jobs.local import RESUME_KEYS, score_file
from pllscore.jobs.table import TableJob
from pllscore.settings import ModelSettings, RunSettings, TableSettings, TextSettings

pytestmark = pytest.mark.shared

TEXTS = [f"The traveler lost souvenir number {i} near the {w}." for i, w in enumerate(["mat", "store", "vehicle"] * 3)]
#: the keys a run of pllscore 0.x before the settings recorded them left out at their defaults
NOT_RECORDED_BEFORE = ("context", "context_column", "sep", "words", "words_column", "word_sep", "mask_by",
                       "outputs", "word_prob", "norm", "unigram", "convention")  # fmt: skip


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(TEXTS) + "\n")
    return path


def test_objects_and_keywords_give_the_same_output(shared_bert, corpus, tmp_path):
    by_keywords = tmp_path / "k.tsv"
    score_file(corpus, by_keywords, model=shared_bert, metrics="original", level="word", progress=False)
    by_objects = tmp_path / "o.tsv"
    score_file(
        corpus, by_objects, model=ModelSettings(model=shared_bert), text=TextSettings(metrics=("original",)),
        table=TableSettings(level="word"), run=RunSettings(progress=False),
    )  # fmt: skip
    assert by_objects.read_bytes() == by_keywords.read_bytes()


def test_a_keyword_replaces_the_field_of_the_object(shared_bert, corpus, tmp_path):
    out = tmp_path / "o.tsv"
    summary = score_file(corpus, out, model=shared_bert, text=TextSettings(metrics=("original",)), metrics="all")
    assert len(summary.metrics) == 4


def test_an_unknown_option_is_refused_by_name(shared_bert, corpus, tmp_path):
    with pytest.raises(InputError, match=r"^score_file\(\) got an unknown option 'metric'; did you mean 'metrics'\?$"):
        score_file(corpus, tmp_path / "o.tsv", model=shared_bert, metric="original")


def test_a_bad_value_is_refused_before_the_model_loads(corpus, tmp_path):
    with pytest.raises(InputError, match="unknown level 'words'"):
        score_file(corpus, tmp_path / "o.tsv", model="no/such-model", level="words")


def test_the_record_holds_every_recorded_setting(shared_bert, corpus, tmp_path):
    out = tmp_path / "o.tsv"
    score_file(corpus, out, model=shared_bert, metrics="original", progress=False)
    meta = json.loads((tmp_path / "o.tsv.meta.json").read_text())
    assert set(RESUME_KEYS) <= set(meta)
    assert meta["metrics"] == ["original"] and meta["convention"] == "paper" and meta["norm"] is None


def test_an_output_written_before_the_settings_were_recorded_resumes(shared_bert, corpus, tmp_path):
    out = tmp_path / "o.tsv"
    score_file(corpus, out, model=shared_bert, metrics="original", chunk_size=4, progress=False)
    meta_file = tmp_path / "o.tsv.meta.json"
    meta = json.loads(meta_file.read_text())
    for key in NOT_RECORDED_BEFORE:
        del meta[key]
    meta["base"] = "e"
    meta_file.write_text(json.dumps(meta))
    again = score_file(corpus, out, model=shared_bert, metrics="original", chunk_size=4, resume=True, progress=False)
    assert again.resumed_from == len(TEXTS)
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(InputError, match=r"made with convention='paper', this run has convention='lm-eval'"):
        score_file(corpus, out, model=shared_bert, metrics="original", chunk_size=4, resume=True, convention="lm-eval")


def test_each_text_is_encoded_once(shared_bert, corpus, tmp_path, monkeypatch):
    calls: list[int] = []
    real = type(shared_bert).encode

    def encode(self, texts, **options):
        calls.append(len(texts))
        return real(self, texts, **options)

    monkeypatch.setattr(type(shared_bert), "encode", encode)
    score_file(corpus, tmp_path / "o.tsv", model=shared_bert, metrics="original", chunk_size=4, progress=False)
    assert sum(calls) == len(TEXTS)


def test_rows_past_the_kept_encodings_are_encoded_when_scored(shared_bert, corpus, tmp_path, monkeypatch):
    import pllscore.jobs.table as table

    monkeypatch.setattr(table, "KEEP_TOKENS", 0)
    kept = tmp_path / "kept.tsv"
    score_file(corpus, kept, model=shared_bert, metrics="original", chunk_size=4, progress=False)
    monkeypatch.undo()
    whole = tmp_path / "whole.tsv"
    score_file(corpus, whole, model=shared_bert, metrics="original", chunk_size=4, progress=False)
    assert kept.read_bytes() == whole.read_bytes()
    assert TableJob.__doc__ and "360 bytes per token" in TableJob.__doc__
