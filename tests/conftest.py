"""Session fixtures: tiny random models of each family, built in-process, and the shared trained models."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.device import on_device
from tests.ray_session import _ray_session, ray_cluster  # noqa: F401  (the Ray tests' local Ray, tests/ray_session.py)

# huggingface_hub reads these once, at import: set them before anything imports it
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
# GGUF conversions (and lm-eval's task index) the tests make go to a cache of the run's own, never the user's (a
# test that checks the cache sets PLLSCORE_CACHE itself); pytest-xdist's workers share the one their controller
# made, which they inherit, so that each entry is made once per run
RUN_CACHE = "PLLSCORE_TEST_RUN_CACHE"  # the run's cache, as the controller made it
if "PLLSCORE_TEST_USER_CACHE" not in os.environ and not (
    os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(RUN_CACHE) == os.environ.get("PLLSCORE_CACHE")
):
    import atexit
    import shutil

    os.environ["PLLSCORE_CACHE"] = os.environ[RUN_CACHE] = tempfile.mkdtemp(prefix="pllscore-test-cache-")
    atexit.register(shutil.rmtree, os.environ["PLLSCORE_CACHE"], ignore_errors=True)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"
TINY_BERT = SHARED / "tiny-bert-cased"
TINY_GPT2 = SHARED / "tiny-gpt2"

SENTENCES = [
    "The hooligan wrecked the vehicle.",
    "The traveler lost the souvenir.",
    "The cat sat on the mat.",
    "She didn't go to the store yesterday!",
    "Carnivores eat meat, and the marauder ran.",
]


@pytest.fixture(scope="session")
def cli_server() -> Iterator[str]:
    """The socket of a warm fork server for ``pllscore`` commands (tests/cli_server.py), one per test process: the
    docs' examples, the README's and tests/test_cli_server.py share it (a start is the torch import, 6 CPU-s)."""
    from tests.cli_server import running

    with running({**os.environ, "HF_HUB_OFFLINE": "1"}) as path:
        yield path


@pytest.fixture(scope="session")
def example_env(cli_server: str) -> dict[str, str]:
    """The environment the examples of the docs and the README run in: offline, this test's venv first on PATH,
    ``pllscore`` commands forked from the run's warm server (tests/cli_client.py reads its socket from it)."""
    import sys

    from tests.cli_client import SOCKET

    venv_bin = Path(sys.executable).parent
    return {**os.environ, "HF_HUB_OFFLINE": "1", "PATH": f"{venv_bin}:{os.environ['PATH']}", SOCKET: cli_server}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "gpu: an exactness test that `make test-gpu` runs with its models on PLLSCORE_TEST_DEVICE (tests/device.py)",
    )


# Under pytest-xdist (make test: --dist loadscope) the tests of a file go to one worker, so that a module's fixtures
# (a fork server, a forkserver, models) are set up once, and every test that runs on Ray goes to one worker, in
# order: the run has one local Ray (tests/ray_session.py), as without xdist, not one per worker contending for the
# CPUs. The scheduler sees test ids only, so Ray's tests are known by name: those of tests/distributed, those
# named test_..._ray_..., and the docs' ray.md; collection fails on a test that uses the run's Ray and is not.
RAY_TESTS = re.compile(r"^tests/distributed/|::test_(\w+_)?ray(_\w+)?(\[|$)|\[ray\.md\]$")


def xdist_scope(nodeid: str) -> str:
    """The unit of work a test belongs to under pytest-xdist: "ray", or its file."""
    return "ray" if RAY_TESTS.search(nodeid) else nodeid.split("::", 1)[0]


def pytest_xdist_make_scheduler(config: pytest.Config, log):  # type: ignore[no-untyped-def]
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileOrRay(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return FileOrRay(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # the docs' Ray page last: its Python example ends the run's Ray (ray.shutdown(), as a reader's does), which
    # the other Ray tests would have to start again
    items.sort(key=lambda item: item.nodeid.endswith("[ray.md]"))
    on_ray = [i.nodeid for i in items if "ray_cluster" in getattr(i, "fixturenames", ())]
    unnamed = [nodeid for nodeid in on_ray if xdist_scope(nodeid) != "ray"]
    if unnamed:
        raise pytest.UsageError(f"tests that use the run's Ray must be named test_..._ray_... (conftest.py): {unnamed}")


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    # an accidental download fails at once instead of hanging or passing by luck
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def _seeded(build):
    import torch

    torch.manual_seed(0)
    return on_device(build().eval())  # seeded on the CPU, then moved: the same weights on every device


def _masked_models():
    from transformers import (
        AlbertConfig,
        AlbertForMaskedLM,
        BertConfig,
        BertForMaskedLM,
        DistilBertConfig,
        DistilBertForMaskedLM,
        ElectraConfig,
        ElectraForMaskedLM,
        ModernBertConfig,
        ModernBertForMaskedLM,
        RobertaConfig,
        RobertaForMaskedLM,
        XLMRobertaConfig,
        XLMRobertaForMaskedLM,
    )

    from tests import tokenizers_fixtures as tf

    wp, bpe, uni = tf.wordpiece(), tf.byte_bpe(roberta=True), tf.unigram()
    small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)
    ids = lambda t: dict(pad_token_id=t.pad_token_id)  # noqa: E731
    return {
        "bert-wordpiece": (
            lambda: BertForMaskedLM(BertConfig(vocab_size=len(wp), max_position_embeddings=64, **small, **ids(wp))),
            wp,
        ),
        "roberta-bpe": (
            lambda: RobertaForMaskedLM(
                RobertaConfig(
                    vocab_size=len(bpe),
                    max_position_embeddings=66,
                    bos_token_id=bpe.bos_token_id,
                    eos_token_id=bpe.eos_token_id,
                    **small,
                    **ids(bpe),
                )
            ),
            bpe,
        ),
        "xlmr-unigram": (
            lambda: XLMRobertaForMaskedLM(
                XLMRobertaConfig(
                    vocab_size=len(uni),
                    max_position_embeddings=66,
                    bos_token_id=uni.bos_token_id,
                    eos_token_id=uni.eos_token_id,
                    **small,
                    **ids(uni),
                )
            ),
            uni,
        ),
        "albert-unigram": (
            lambda: AlbertForMaskedLM(
                AlbertConfig(vocab_size=len(uni), embedding_size=16, max_position_embeddings=64, **small, **ids(uni))
            ),
            uni,
        ),
        "distilbert-wordpiece": (
            lambda: DistilBertForMaskedLM(
                DistilBertConfig(
                    vocab_size=len(wp),
                    dim=32,
                    n_layers=2,
                    n_heads=2,
                    hidden_dim=37,
                    max_position_embeddings=64,
                    **ids(wp),
                )
            ),
            wp,
        ),
        "electra-wordpiece": (
            lambda: ElectraForMaskedLM(
                ElectraConfig(vocab_size=len(wp), embedding_size=16, max_position_embeddings=64, **small, **ids(wp))
            ),
            wp,
        ),
        "modernbert-wordpiece": (
            lambda: ModernBertForMaskedLM(
                ModernBertConfig(
                    vocab_size=len(wp),
                    max_position_embeddings=64,
                    local_attention=8,
                    **small,
                    **ids(wp),
                    cls_token_id=wp.cls_token_id,
                    sep_token_id=wp.sep_token_id,
                    bos_token_id=wp.cls_token_id,
                    eos_token_id=wp.sep_token_id,
                )
            ),
            wp,
        ),
    }


MASKED_FAMILIES = [
    "bert-wordpiece",
    "roberta-bpe",
    "xlmr-unigram",
    "albert-unigram",
    "distilbert-wordpiece",
    "electra-wordpiece",
    "modernbert-wordpiece",
]


@pytest.fixture(scope="session")
def masked_models():
    return {name: (_seeded(build), tok) for name, (build, tok) in _masked_models().items()}


@pytest.fixture(scope="session")
def tiny_bert(masked_models):
    """(model, tokenizer) of the in-process BERT with a WordPiece vocabulary."""
    return masked_models["bert-wordpiece"]


@pytest.fixture(scope="session")
def causal_models():
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    from tests import tokenizers_fixtures as tf

    gpt_tok = tf.byte_bpe(roberta=False)
    llama_tok = tf.unigram(template="<s> $A")  # adds BOS itself, as Llama tokenizers do
    return {
        "gpt2-bpe": (
            _seeded(
                lambda: GPT2LMHeadModel(
                    GPT2Config(
                        vocab_size=len(gpt_tok),
                        n_positions=64,
                        n_embd=32,
                        n_layer=2,
                        n_head=2,
                        bos_token_id=gpt_tok.bos_token_id,
                        eos_token_id=gpt_tok.eos_token_id,
                    )
                )
            ),
            gpt_tok,
        ),
        "llama-unigram": (
            _seeded(
                lambda: LlamaForCausalLM(
                    LlamaConfig(
                        vocab_size=len(llama_tok),
                        hidden_size=32,
                        intermediate_size=37,
                        num_hidden_layers=2,
                        num_attention_heads=2,
                        num_key_value_heads=1,
                        max_position_embeddings=64,
                        bos_token_id=llama_tok.bos_token_id,
                        eos_token_id=llama_tok.eos_token_id,
                        pad_token_id=llama_tok.pad_token_id,
                    )
                )
            ),
            llama_tok,
        ),
    }


@pytest.fixture(scope="session")
def seq2seq_models():
    from tests.seq2seq_models import BUILDERS

    return {name: build() for name, build in BUILDERS.items()}


def _need(path: Path) -> None:
    if not path.is_dir():
        pytest.skip(f"{path} not found: the shared models must sit beside the repository")


@pytest.fixture(scope="session")
def shared_bert():
    import pllscore

    _need(TINY_BERT)
    os.environ["HF_HUB_OFFLINE"] = "1"
    return pllscore.load(TINY_BERT, device="cpu")


@pytest.fixture(scope="session")
def shared_gpt2():
    import pllscore

    _need(TINY_GPT2)
    os.environ["HF_HUB_OFFLINE"] = "1"
    return pllscore.load(TINY_GPT2, device="cpu")
