"""The Ray engine's --resume refuses another input, model or setting (checked on the driver, before Ray starts).

A first run is stopped at ``ray.init`` (after its ``_meta.json`` is written: a run that died at once);
the resume is refused, or gets as far as ``ray.init`` again when nothing changed.
"""

from __future__ import annotations

import re
import shutil

import pandas as pd
import pytest

from tests.conftest import TINY_BERT

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.shared

from pllscore import InputError  # noqa: E402
from pllscore.jobs.ray import score_dataset  # noqa: E402

TEXTS = [f"The traveler lost souvenir number {i} near the {w}." for i, w in enumerate(["mat", "store", "vehicle"] * 4)]


class Stop(BaseException):
    """Stands for a kill of the driver as it starts Ray."""


@pytest.fixture(autouse=True)
def no_ray(monkeypatch):
    def init(*args, **kwargs):
        raise Stop

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)


@pytest.fixture
def inputs(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    frame = pd.DataFrame({"id": [f"s{i}" for i in range(12)], "sentence": TEXTS, "alt": TEXTS[::-1]})
    frame.iloc[:7].to_csv(folder / "a.csv", index=False)
    frame.iloc[7:].to_csv(folder / "b.csv", index=False)
    return folder


def _refusal(inputs, out, first, second, mutate=None):
    with pytest.raises(Stop):
        score_dataset(inputs, out, **first)
    if mutate is not None:
        mutate()
    try:
        score_dataset(inputs, out, resume=True, **second)
    except InputError as e:
        assert "\n" not in str(e)
        return str(e)
    except Stop:
        return None
    raise AssertionError("the resume neither failed nor started Ray")


def _says(message, key):
    assert message is not None, f"a change of {key} was not noticed"
    m = re.search(rf"^cannot resume '.*': it was made with {key}=(.+), this run has {key}=(.+?); .*--force", message)
    assert m and m.group(1) != m.group(2), message
    return m.groups()


BASE = {"model": str(TINY_BERT), "metrics": ["original"], "block_rows": 4}
CHANGES = [
    ("metrics", {"metrics": ["whole-word"]}),
    ("level", {"level": "token"}),
    ("column", {"column": "alt"}),
    ("id_column", {"id_column": "id"}),
    ("base", {"base": 2}),
    ("surprisal", {"surprisal": True}),
    ("skip_empty", {"skip_empty": True}),
    ("block_rows", {"block_rows": 5}),
    ("dtype", {"dtype": "bfloat16"}),
    ("long", {"long": "window"}),
    ("stride", {"stride": 8}),
]


@pytest.mark.parametrize(("key", "change"), CHANGES, ids=[c[0] for c in CHANGES])
def test_ray_resume_refuses_a_changed_setting(inputs, tmp_path, key, change):
    base = {**BASE, "long": "window"} if key == "stride" else BASE  # a stride is refused without windows
    _says(_refusal(inputs, tmp_path / "out", base, {**base, **change}), key)


def test_ray_resume_with_the_same_settings_goes_on(inputs, tmp_path):
    assert _refusal(inputs, tmp_path / "out", BASE, BASE) is None


def test_ray_resume_refuses_changed_input_content(inputs, tmp_path):
    def change():  # same rows, one word changed, in the second file
        path = inputs / "b.csv"
        path.write_text(path.read_text().replace("vehicle", "bicycle"))

    old, new = _says(_refusal(inputs, tmp_path / "out", BASE, BASE, mutate=change), "input_sha256")
    assert re.fullmatch(r"[0-9a-f]{12}", old) and re.fullmatch(r"[0-9a-f]{12}", new)


def test_ray_resume_refuses_changed_model_weights(inputs, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(TINY_BERT, folder)
    for f in folder.iterdir():
        f.chmod(0o644)

    def change():  # the driver never loads weights: the files' fingerprint tells
        with open(folder / "model.safetensors", "r+b") as f:
            f.seek(-8, 2)
            last = f.read(8)
            f.seek(-8, 2)
            f.write(bytes(b ^ 1 for b in last))

    opts = {**BASE, "model": str(folder)}
    old, new = _says(_refusal(inputs, tmp_path / "out", opts, opts, mutate=change), "model_fingerprint")
    assert re.fullmatch(r"sha256:[0-9a-f]{12}", old)


def test_ray_resume_refuses_another_pllscore_version(inputs, tmp_path, monkeypatch):
    import pllscore._version

    version = pllscore._version.__version__

    def change():
        monkeypatch.setattr(pllscore._version, "__version__", "99.0")

    assert _says(_refusal(inputs, tmp_path / "out", BASE, BASE, mutate=change), "pllscore") == (repr(version), "'99.0'")
