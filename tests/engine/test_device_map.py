"""device_map="auto" with a max_memory too small for the model: accelerate offloads layers (here to disk, the only
place besides the CPU), and the scores are those of the model on one device (float32: 1e-5)."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import pllscore
from pllscore import InputError, ModelError
from pllscore.engine.placement import input_device, is_spread
from pllscore.settings import ModelSettings
from pllscore.settings.fields import parse_max_memory
from tests.conftest import SENTENCES

pytest.importorskip("accelerate")

# texts that share prefixes, so that the causal engine runs prefix trees too
SHARED = ["The cat sat.", "The cat sat on the mat.", "The cat sat on the warm mat.", "The dog sat on the mat."]


@pytest.fixture(scope="module")
def saved(tmp_path_factory, masked_models, causal_models, seq2seq_models):
    root = tmp_path_factory.mktemp("spread-models")
    pairs = {
        "bert": masked_models["bert-wordpiece"],
        "gpt2": causal_models["gpt2-bpe"],
        "llama": causal_models["llama-unigram"],
        "t5": seq2seq_models["t5-unigram"],
        "bart": seq2seq_models["bart-bpe"],
    }
    for name, (model, tok) in pairs.items():
        model.save_pretrained(root / name)
        tok.save_pretrained(root / name)
    return root


def _spread(folder, tmp_path, share=0.6):
    """The model of ``folder`` with a CPU allowance of ``share`` of its size: the rest goes to disk."""
    one = pllscore.load(folder, device="cpu")
    limit = {"cpu": int(share * one.model.get_memory_footprint())}
    spread = pllscore.load(folder, device_map="auto", max_memory=limit, offload_folder=tmp_path / "offload")
    assert is_spread(spread.model)
    assert "disk" in set(spread.model.hf_device_map.values())  # some layers really are offloaded
    assert input_device(spread.model).type == "cpu"
    return one, spread


def _close(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(y.logprobs, x.logprobs, atol=1e-5, rtol=0)


@pytest.mark.parametrize("share", [0.3, 0.6])  # all of it offloaded; some layers on the CPU, the rest on disk
def test_masked_offloaded_scores_as_on_one_device(saved, tmp_path, share):
    one, spread = _spread(saved / "bert", tmp_path, share)
    _close(one.score(SENTENCES, metric="all"), spread.score(SENTENCES, metric="all"))
    outputs = ["entropy", "rank"]
    a, b = one.score(SENTENCES[:3], outputs=outputs), spread.score(SENTENCES[:3], outputs=outputs)
    for x, y in zip(a, b):
        np.testing.assert_allclose(y.entropy, x.entropy, atol=1e-5, rtol=0)
        np.testing.assert_array_equal(y.rank, x.rank)


@pytest.mark.parametrize("name", ["gpt2", "llama"])
@pytest.mark.parametrize("share", [0.3, 0.6])
def test_causal_offloaded_scores_as_on_one_device(saved, tmp_path, name, share):
    one, spread = _spread(saved / name, tmp_path, share)
    _close(one.score(SENTENCES), spread.score(SENTENCES))
    _close(one.score(SHARED), spread.score(SHARED))  # prefix trees
    outputs = ["entropy", "rank"]
    a, b = one.score(SENTENCES[:3], outputs=outputs), spread.score(SENTENCES[:3], outputs=outputs)
    for x, y in zip(a, b):
        np.testing.assert_allclose(y.entropy, x.entropy, atol=1e-5, rtol=0)
        np.testing.assert_array_equal(y.rank, x.rank)


def test_prefix_trees_run_on_a_spread_model(saved, tmp_path, monkeypatch):
    from pllscore.engine import causal

    ran = []
    real = causal.run_trees
    monkeypatch.setattr(causal, "run_trees", lambda *a, **k: ran.append(1) or real(*a, **k))
    _, spread = _spread(saved / "gpt2", tmp_path)
    spread.score(SHARED)
    assert ran


@pytest.mark.parametrize("name", ["t5", "bart"])
@pytest.mark.parametrize("share", [0.3, 0.6])
def test_seq2seq_offloaded_scores_as_on_one_device(saved, tmp_path, name, share):
    one, spread = _spread(saved / name, tmp_path, share)
    _close(one.score(SENTENCES), spread.score(SENTENCES))
    context = ["Le chat.", "Le chat.", "Un chien."]
    _close(one.score(SHARED[:3], context=context), spread.score(SHARED[:3], context=context))


def test_the_cli_takes_device_map_max_memory_and_offload_folder(saved, tmp_path):
    from tests.test_cli import run

    model = str(saved / "gpt2")
    base = ["score", "--text", SENTENCES[0], "--text", SENTENCES[1], "--model", model, "-q"]
    one = run(*base, "--device", "cpu")
    spread = run(*base, "--device-map", "auto", "--max-memory", "cpu=30KB", "--offload-folder", str(tmp_path / "o"))
    assert one.returncode == 0 and spread.returncode == 0, spread.stderr
    rows = [[line.split("\t") for line in r.stdout.strip().splitlines()] for r in (one, spread)]
    assert rows[0][0] == rows[1][0]  # the header
    numbers = [i for i, v in enumerate(rows[0][1]) if v.replace(".", "").lstrip("-").isdigit()]
    assert numbers
    for a, b in zip(rows[0][1:], rows[1][1:]):
        np.testing.assert_allclose([float(b[i]) for i in numbers], [float(a[i]) for i in numbers], atol=1e-5)
        assert [v for i, v in enumerate(a) if i not in numbers] == [v for i, v in enumerate(b) if i not in numbers]


def test_disk_offload_of_a_safetensors_checkpoint_needs_no_folder(saved):
    """transformers reads the offloaded layers from the checkpoint file itself (a .bin checkpoint needs a folder)."""
    one = pllscore.load(saved / "gpt2", device="cpu")
    spread = pllscore.load(saved / "gpt2", device_map="auto", max_memory="cpu=10KB")
    assert set(spread.model.hf_device_map.values()) == {"disk"}
    _close(one.score(SENTENCES[:3]), spread.score(SENTENCES[:3]))


def test_placement_errors():
    with pytest.raises(InputError, match="max_memory is for a device map"):
        pllscore.load("unused", max_memory="cpu=1GiB")
    with pytest.raises(InputError, match="offload_folder is for a device map"):
        pllscore.load("unused", offload_folder="x")
    with pytest.raises(InputError, match="give either device='cpu' or device_map='auto'"):
        pllscore.load("unused", device="cpu", device_map="auto")
    with pytest.raises(InputError, match="unknown device_map 'everywhere'"):
        ModelSettings(model="m", device_map="everywhere")


def test_a_missing_accelerate_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "accelerate", None)  # import accelerate raises ImportError
    with pytest.raises(ModelError, match=r"^device_map needs the accelerate package: pip install accelerate$"):
        pllscore.load("unused", device_map="auto")


@pytest.mark.parametrize(
    ("given", "parsed"),
    [
        ("cuda:0=20GiB,cuda:1=20GiB,cpu=60GiB", {0: 20 * 2**30, 1: 20 * 2**30, "cpu": 60 * 2**30}),
        ("0=1.5GB, cpu=512MiB, disk=1TB", {0: 1_500_000_000, "cpu": 512 * 2**20, "disk": 10**12}),
        ("cuda=1000", {0: 1000}),
        ({"cuda:1": "2KiB", "mps": 10}, {1: 2048, "mps": 10}),
        (None, None),
    ],
)
def test_max_memory_syntax(given, parsed):
    assert parse_max_memory(given) == parsed
    assert ModelSettings(model="m", device_map="auto", max_memory=given).max_memory == parsed


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("cpu:60GiB", "'cpu:60GiB' is not DEVICE=SIZE"),
        ("gpu=1GiB", "unknown device 'gpu'"),
        ("cpu=lots", "'lots' is not a size"),
        ("cpu=-1GiB", "'-1GiB' is not a size"),
        ("cpu=3PB", "'3PB' is not a size"),
        ("", "max_memory must be like"),
    ],
)
def test_max_memory_refusals(given, says):
    with pytest.raises(InputError, match=re.escape(says)):
        parse_max_memory(given)


def test_placement_error_names_the_flag_once_on_the_command_line():
    from pllscore.cli.messages import cli_message

    with pytest.raises(InputError) as e:
        pllscore.load("unused", max_memory="cpu=1GiB")
    assert cli_message(e.value) == "--max-memory is for a device map: add --device-map auto, or drop it"


def test_a_spread_runs_meta_records_the_placement_it_got(saved, tmp_path):
    """The sidecar of a run with a device map records the map the model got (each module's device) with
    max_memory and offload_folder, not the device of the inputs alone; a run on one device records its device."""
    import json

    from tests.test_cli import run

    model, offload = str(saved / "gpt2"), tmp_path / "o"
    base = ["score", "--text", SENTENCES[0], "--model", model, "-q"]
    spread = run(*base, "--device-map", "auto", "--max-memory", "cpu=30KB", "--offload-folder", str(offload),
                 "-o", str(tmp_path / "spread.csv"))  # fmt: skip
    assert spread.returncode == 0, spread.stderr
    meta = json.loads((tmp_path / "spread.csv.meta.json").read_text())
    loaded = pllscore.load(model, device_map="auto", max_memory="cpu=30KB", offload_folder=offload)
    assert meta["device_map"] == {k: str(v) for k, v in loaded.model.hf_device_map.items()}
    assert "disk" in set(meta["device_map"].values())
    assert meta["max_memory"] == {"cpu": 30_000} and meta["offload_folder"] == str(offload.resolve())
    assert "device" not in meta
    one = run(*base, "--device", "cpu", "-o", str(tmp_path / "one.csv"))
    assert one.returncode == 0, one.stderr
    meta = json.loads((tmp_path / "one.csv.meta.json").read_text())
    assert meta["device"] == "cpu" and "device_map" not in meta


def test_placement_record_names_gpus_as_torch_does():
    from pllscore.engine.placement import placement_record

    class Placed:
        pass

    model = Placed()
    model.hf_device_map = {"embed": 0, "layers.0": 1, "layers.1": "cpu", "head": "disk"}
    got = placement_record(model, {"max_memory": {0: 10, 1: 20, "cpu": 30}, "offload_folder": "off"})
    assert got["device_map"] == {"embed": "cuda:0", "layers.0": "cuda:1", "layers.1": "cpu", "head": "disk"}
    assert got["max_memory"] == {"cuda:0": 10, "cuda:1": 20, "cpu": 30}
    assert got["offload_folder"].endswith("off") and got["offload_folder"].startswith("/")
    assert placement_record(Placed()) is None
