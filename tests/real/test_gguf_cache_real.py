"""The GGUF cache on real weights: a model loaded from the cache scores exactly as one converted from the file.

For each real GGUF file: converted by plain transformers (gguf's own reader, no pllscore in the
way), by pllscore without the cache, by pllscore into an empty cache (converts, keeps the result)
and from that cache (no conversion): the same float32 weights, the same tokens, the same scores,
to the bit. Gemma ties its output layer to its embeddings: still one tensor, stored once.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile

import pytest
import torch

from tests.real.conftest import real_file, skip_if_none_available
from tests.real.fetch import MODELS

skip_if_none_available()

TEXTS = [
    "The cat sat on the mat.",
    "Samuel hasn't hated himself.",
    "The hooligan wrecked the vehicle, and the traveler lost the souvenir!",
    "Naïve café owners didn't expect 42 customers.",
]


def _plain_transformers_weights(path: str) -> dict[str, torch.Tensor]:
    """The weights transformers makes of the file on its own (gguf's reader, no pllscore code)."""
    from transformers import AutoModelForCausalLM

    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.abspath(path), os.path.join(tmp, "m.gguf"))
        model = AutoModelForCausalLM.from_pretrained(tmp, gguf_file="m.gguf", dtype=torch.float32)
    return model.state_dict()


@pytest.mark.parametrize("key", list(MODELS))
def test_cached_uncached_and_plain_transformers_agree_exactly(key, tmp_path, monkeypatch):
    import pllscore
    from pllscore.engine import gguf as gguf_module

    path = str(real_file(key))
    monkeypatch.setenv("PLLSCORE_CACHE", str(tmp_path / "cache"))
    conversions: list[str] = []
    real_convert = gguf_module.convert

    def counted(file, kind=None):
        conversions.append(file)
        return real_convert(file, kind)

    monkeypatch.setattr(gguf_module, "convert", counted)

    uncached = pllscore.load(path, device="cpu", cache=False)
    reference = uncached.score(TEXTS, progress=False)
    ids = uncached.tokenizer(TEXTS)["input_ids"]
    weights = uncached.model.state_dict()
    plain = _plain_transformers_weights(path)
    assert weights.keys() == plain.keys()
    assert all(torch.equal(weights[k], plain[k]) for k in plain), "pllscore's one-pass read changed a weight"
    del uncached, plain
    gc.collect()

    for n in (1, 2):  # into the empty cache, then from it
        s = pllscore.load(path, device="cpu")
        assert len(conversions) == 2, f"load {n}: converted {len(conversions) - 1} times"
        assert s.name == path and s.tokenizer(TEXTS)["input_ids"] == ids
        got = s.score(TEXTS, progress=False)
        assert [r.total for r in got] == [r.total for r in reference]
        assert all(list(a.logprobs) == list(b.logprobs) for a, b in zip(got, reference))
        state = s.model.state_dict()
        assert all(torch.equal(state[k], weights[k]) for k in weights)
        if s.model.config.tie_word_embeddings:
            assert s.model.lm_head.weight.data_ptr() == s.model.model.embed_tokens.weight.data_ptr()
        del s, state
        gc.collect()
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)
