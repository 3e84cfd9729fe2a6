"""A device this machine lacks (a command copied from a GPU server to a laptop) is refused in one line naming
what the machine has, before the model loads: ``--device cuda``, ``cuda:1``, ``mps``, and a ``--max-memory``
that names a GPU. Torch's view of the machine is faked, so the tests say the same on any machine."""

from __future__ import annotations

import pytest
import torch

import pllscore
from pllscore import InputError, PllscoreError
from pllscore.engine import loading
from pllscore.engine.models import machine_devices, resolve_device, unavailable
from tests.conftest import TINY_GPT2


def _machine(monkeypatch, *, gpus: int, built: bool = True, mps: bool = False) -> None:
    """Torch as it sees a machine with ``gpus`` CUDA GPUs (a CPU-only build when not ``built``) and MPS or not."""
    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: built)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: built and gpus > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus if built else 0)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)


@pytest.fixture
def cpu_only(monkeypatch):
    _machine(monkeypatch, gpus=0, built=False)

    def no_load(*args, **kwargs):
        raise AssertionError("the model was read before the device was checked")

    monkeypatch.setattr(loading.AutoConfig, "from_pretrained", no_load)


@pytest.mark.parametrize(
    ("device", "says"),
    [
        ("cuda", "device='cuda' is not available: this torch ("),
        ("cuda:1", "device='cuda:1' is not available: this torch ("),
        ("mps", "device='mps' is not available: torch finds no Apple GPU (MPS) here"),
        (torch.device("cuda", 0), "device='cuda:0' is not available"),
    ],
)
def test_python_load_refuses_a_missing_device_as_a_pllscore_error(cpu_only, device, says):
    with pytest.raises(PllscoreError) as e:
        pllscore.load(TINY_GPT2, device=device)
    assert isinstance(e.value, InputError)
    message = str(e.value)
    assert message.startswith(says) and "\n" not in message
    assert "this machine has only the CPU" in message and message.endswith(
        "use device='cpu' (or 'auto': the best device there is)"
    )


def test_a_max_memory_naming_a_missing_gpu_is_refused_before_the_load(cpu_only):
    pytest.importorskip("accelerate")
    with pytest.raises(
        InputError, match=r"^max_memory names cuda:0, which is not available: .*only the CPU; leave cuda:0"
    ):
        pllscore.load(TINY_GPT2, device_map="auto", max_memory="cuda:0=20GiB,cpu=60GiB")
    with pytest.raises(InputError, match=r"^device_map names cuda:1, which is not available"):
        pllscore.load(TINY_GPT2, device_map={"": "cuda:1"})
    with pytest.raises(InputError, match=r"^max_memory names mps, which is not available"):
        pllscore.load(TINY_GPT2, device_map="auto", max_memory={"mps": "1GiB", "cpu": "1GiB"})


ARGS = [
    (["--device", "cuda"], "error: --device cuda is not available: this torch ("),
    (["--device", "cuda:1"], "error: --device cuda:1 is not available: this torch ("),
    (["--device", "mps"], "error: --device mps is not available: torch finds no Apple GPU (MPS) here"),
    (["--device-map", "auto", "--max-memory", "cuda:0=20GiB,cpu=60GiB"], "error: --max-memory names cuda:0, which is"),
]


@pytest.mark.parametrize(("args", "says"), ARGS, ids=[" ".join(a) for a, _ in ARGS])
def test_the_cli_refuses_a_missing_device_in_one_line(cpu_only, args, says):
    if "--device-map" in args:
        pytest.importorskip("accelerate")
    from tests.test_cli import run

    done = run("score", "--text", "The cat sat.", "-m", str(TINY_GPT2), *args)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(says) and "this machine has only the CPU" in lines[0]
    if "--device" in args:
        assert lines[0].endswith("use --device cpu (or 'auto': the best device there is)")


def test_what_a_machine_with_gpus_is_told(monkeypatch):
    _machine(monkeypatch, gpus=2)
    assert machine_devices() == ["cuda:0", "cuda:1", "cpu"]
    assert unavailable(torch.device("cuda")) is None
    assert unavailable(torch.device("cuda:1")) is None
    assert unavailable(torch.device("cuda:2")) == "this machine has 2 CUDA GPUs: cuda:0, cuda:1 and the CPU"
    assert unavailable(torch.device("mps")).endswith("this machine has cuda:0, cuda:1 and the CPU")
    _machine(monkeypatch, gpus=0)
    assert "torch sees no CUDA GPU (is CUDA_VISIBLE_DEVICES empty?)" in unavailable(torch.device("cuda"))
    _machine(monkeypatch, gpus=0, built=False, mps=True)
    assert machine_devices() == ["mps", "cpu"]
    assert resolve_device("auto") == torch.device("mps")
    assert resolve_device("mps") == torch.device("mps")
    assert unavailable(torch.device("cpu")) is None
