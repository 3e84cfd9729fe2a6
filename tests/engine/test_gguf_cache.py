"""The GGUF cache: a converted GGUF file is kept, reused, checked, rebuilt when stale or corrupt, never half-written.

Every comparison of scores is exact: a model loaded from the cache has the same float32 weights,
config and tokenizer as one converted from the file. The tiny GGUF files are tests/test_gguf.py's.
"""

from __future__ import annotations

import json
import os

import pytest
import torch

import pllscore
from pllscore.engine import gguf as gguf_module
from pllscore.engine import gguf_cache
from tests.conftest import SENTENCES
from tests.test_gguf import make_tiny_gguf, needs_gguf, write_tiny_gguf

pytestmark = needs_gguf


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_gguf(tmp_path_factory.mktemp("gguf"))


@pytest.fixture(scope="module")
def uncached(tiny):
    """The tiny model's scores loaded straight from the file (cache=False): the reference."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(gguf_cache.ENV, "/nonexistent/never-written")
        s = pllscore.load(tiny[0], device="cpu", cache=False)
    return s.score(SENTENCES)


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A fresh cache folder named by PLLSCORE_CACHE."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(gguf_cache.ENV, str(folder))
    return folder


@pytest.fixture
def gguf_file(tiny, tmp_path):
    """A copy of the tiny GGUF file that a test may touch or overwrite."""
    path = tmp_path / "model.gguf"
    path.write_bytes(tiny[0].read_bytes())
    return path


@pytest.fixture
def conversions(monkeypatch):
    """How many times a GGUF file was converted (read by transformers) during the test."""
    calls: list[str] = []
    real = gguf_module.convert

    def counted(file, kind=None):
        calls.append(file)
        return real(file, kind)

    monkeypatch.setattr(gguf_module, "convert", counted)
    return calls


def _same(results, reference) -> None:
    assert [r.total for r in results] == [r.total for r in reference]
    for a, b in zip(results, reference):
        assert list(a.logprobs) == list(b.logprobs)


def _entries(root) -> list[str]:
    folder = root / "gguf"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_cached_and_uncached_loads_score_identically(gguf_file, root, uncached, conversions):
    first = pllscore.load(gguf_file, device="cpu")  # converts and keeps the result
    second = pllscore.load(gguf_file, device="cpu")  # from the cache
    assert len(conversions) == 1
    _same(first.score(SENTENCES), uncached)
    _same(second.score(SENTENCES), uncached)
    a, b = first.model.state_dict(), second.model.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert second.tokenizer(SENTENCES)["input_ids"] == first.tokenizer(SENTENCES)["input_ids"]


def test_the_second_load_reads_the_cache_not_the_file(gguf_file, root, uncached, monkeypatch):
    pllscore.load(gguf_file, device="cpu")

    def refuse(file, kind=None):
        raise AssertionError("converted again")

    monkeypatch.setattr(gguf_module, "convert", refuse)
    s = pllscore.load(gguf_file, device="cpu")
    _same(s.score(SENTENCES), uncached)


def test_the_entry_is_a_checked_transformers_folder_under_pllscore_cache(gguf_file, root):
    pllscore.load(gguf_file, device="cpu")
    entry = gguf_cache.entry_folder(gguf_file)
    assert entry.parent == root / "gguf" and _entries(root) == [entry.name]
    names = {p.name for p in entry.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "manifest.json"} <= names
    manifest = json.loads((entry / "manifest.json").read_text())
    st = os.stat(gguf_file)
    assert manifest["key"]["size"] == st.st_size and manifest["key"]["mtime_ns"] == st.st_mtime_ns
    assert set(manifest["files"]) == names - {"manifest.json"}
    assert "quantization_config" not in json.loads((entry / "config.json").read_text())


def test_without_pllscore_cache_the_user_cache_folder_is_used(monkeypatch, tmp_path):
    from platformdirs import user_cache_dir

    monkeypatch.delenv(gguf_cache.ENV, raising=False)
    assert gguf_cache.cache_root() == type(gguf_cache.cache_root())(user_cache_dir("pllscore"))
    monkeypatch.setenv(gguf_cache.ENV, str(tmp_path / "elsewhere"))
    assert gguf_cache.entry_folder("m.gguf").parent == tmp_path / "elsewhere" / "gguf"


def test_cache_false_neither_writes_nor_reads(gguf_file, root, uncached, conversions):
    pllscore.load(gguf_file, device="cpu", cache=False)
    assert not root.exists()
    pllscore.load(gguf_file, device="cpu")  # now an entry exists
    s = pllscore.load(gguf_file, device="cpu", cache=False)
    assert len(conversions) == 3  # cache=False converted although the entry was there
    _same(s.score(SENTENCES), uncached)


def test_a_corrupt_entry_is_rebuilt_with_a_note(gguf_file, root, uncached, conversions, capsys):
    pllscore.load(gguf_file, device="cpu")
    weights = gguf_cache.entry_folder(gguf_file) / "model.safetensors"
    with open(weights, "r+b") as f:
        f.truncate(weights.stat().st_size // 2)
    capsys.readouterr()
    s = pllscore.load(gguf_file, device="cpu")
    err = capsys.readouterr().err
    assert len(conversions) == 2
    notes = [line for line in err.splitlines() if "cached conversion" in line]
    assert len(notes) == 1 and "corrupt" in notes[0] and "model.safetensors" in notes[0]
    _same(s.score(SENTENCES), uncached)
    pllscore.load(gguf_file, device="cpu")  # the rebuilt entry is good
    assert len(conversions) == 2


def test_an_entry_without_its_manifest_is_not_used(gguf_file, root, conversions, capsys):
    pllscore.load(gguf_file, device="cpu")
    (gguf_cache.entry_folder(gguf_file) / "manifest.json").unlink()
    pllscore.load(gguf_file, device="cpu")
    assert len(conversions) == 2 and "incomplete" in capsys.readouterr().err


def test_a_touched_file_makes_its_entry_stale(gguf_file, root, conversions, capsys):
    pllscore.load(gguf_file, device="cpu")
    st = os.stat(gguf_file)
    os.utime(gguf_file, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    pllscore.load(gguf_file, device="cpu")
    assert len(conversions) == 2 and "stale" in capsys.readouterr().err
    pllscore.load(gguf_file, device="cpu")
    assert len(conversions) == 2


def test_a_file_rewritten_with_the_same_size_and_time_is_not_read_from_the_old_entry(gguf_file, root, tmp_path):
    """Only the header hash tells the two apart: another model of the same shape, its time set back."""
    old = pllscore.load(gguf_file, device="cpu").score(SENTENCES)
    (tmp_path / "other").mkdir()
    other_path, other_model, tok = make_tiny_gguf(tmp_path / "other", seed=1)
    st = os.stat(gguf_file)
    write_tiny_gguf(gguf_file, other_model, tok)
    assert os.path.getsize(gguf_file) == st.st_size
    os.utime(gguf_file, ns=(st.st_atime_ns, st.st_mtime_ns))
    new = pllscore.load(gguf_file, device="cpu").score(SENTENCES)
    reference = pllscore.load(other_path, device="cpu", cache=False).score(SENTENCES)
    _same(new, reference)
    assert [r.total for r in new] != [r.total for r in old]


def test_a_failed_write_leaves_no_entry_and_the_load_goes_on(gguf_file, root, uncached, monkeypatch, capsys):
    real = gguf_cache.save_converted

    def half(model, tokenizer, folder):
        real(model, tokenizer, folder)
        (folder / "model.safetensors").write_bytes(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(gguf_cache, "save_converted", half)
    s = pllscore.load(gguf_file, device="cpu")
    _same(s.score(SENTENCES), uncached)
    assert "No space left on device" in capsys.readouterr().err
    assert _entries(root) == []  # neither an entry nor its temporary folder


def test_an_interrupted_conversion_leaves_no_entry(gguf_file, root, monkeypatch, conversions):
    def interrupted(model, tokenizer, folder):
        (folder / "config.json").write_text("{}")
        raise KeyboardInterrupt

    with monkeypatch.context() as mp:
        mp.setattr(gguf_cache, "save_converted", interrupted)
        with pytest.raises(KeyboardInterrupt):
            pllscore.load(gguf_file, device="cpu")
    assert _entries(root) == []
    # a conversion killed outright leaves its temporary folder: never read as an entry, swept when old
    tmp = root / "gguf" / ".tmp-killed"
    tmp.mkdir(parents=True)
    (tmp / "config.json").write_text("{}")
    os.utime(tmp, (0, 0))
    pllscore.load(gguf_file, device="cpu")
    assert _entries(root) == [gguf_cache.entry_folder(gguf_file).name]


def test_tied_embeddings_stay_tied_and_are_stored_once(tmp_path, root):
    from safetensors import safe_open

    path = make_tiny_gguf(tmp_path, tied=True)[0]
    reference = pllscore.load(path, device="cpu", cache=False).score(SENTENCES)
    pllscore.load(path, device="cpu")
    s = pllscore.load(path, device="cpu")
    model = s.model
    assert model.config.tie_word_embeddings
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    with safe_open(str(gguf_cache.entry_folder(path) / "model.safetensors"), "pt") as f:
        assert "lm_head.weight" not in f.keys() and "model.embed_tokens.weight" in f.keys()
    _same(s.score(SENTENCES), reference)


def test_the_provenance_names_the_gguf_file_not_the_cache(gguf_file, root):
    import hashlib

    from pllscore.io.provenance import model_identity, model_record

    pllscore.load(gguf_file, device="cpu")
    s = pllscore.load(gguf_file, device="cpu")
    digest = hashlib.sha256(gguf_file.read_bytes()).hexdigest()
    assert s.name == str(gguf_file) and s.model.config._name_or_path == str(gguf_file)
    assert model_identity(s) == {"name": str(gguf_file.resolve()), "revision": None, "fingerprint": f"sha256:{digest}"}
    assert model_record(s)["model_file"] == {"name": "model.gguf", "sha256": digest}
