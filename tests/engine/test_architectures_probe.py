"""An architecture the proven lists do not know is probed at load, and scored exactly whatever it does.

A small custom model (registered with transformers' Auto classes, saved, and loaded by
``pllscore.load``) adds to every position a summary of the whole input: with ``leak="pad"`` the
mean over every position, padding included, so padded batches change its scores; with ``"batch"``
the mean over the whole batch, so even texts of equal length change each other's; with ``"noise"``
random noise, so not even one text alone is reproducible; with ``"none"`` the mean over the real
positions only (padding-exact). The probe must find each, and the scores must equal the
independent loop (:mod:`tests.oracle`, one unpadded pass per copy or text).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    PretrainedConfig,
    PreTrainedModel,
)
from transformers.modeling_outputs import CausalLMOutput, MaskedLMOutput

import pllscore
from pllscore import CausalScorer, MaskedScorer
from pllscore.engine import padding
from pllscore.errors import ModelError
from tests import oracle
from tests import tokenizers_fixtures as tf
from tests.device import DEVICE, on_device

pytestmark = pytest.mark.gpu  # make test-gpu: the same on CUDA (tests/device.py)

TEXTS = ["The cat sat on the mat.", "She went to the store yesterday!", "A dog ran.", "The cat sat."]


class LeakyConfig(PretrainedConfig):
    model_type = "leaky-test"

    def __init__(self, vocab_size: int = 100, hidden_size: int = 16, leak: str = "pad", **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.leak = leak
        super().__init__(**kwargs)


class _Leaky(PreTrainedModel):
    config_class = LeakyConfig
    base_model_prefix = "leaky"

    def __init__(self, config: LeakyConfig):
        super().__init__(config)
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.mix = nn.Linear(config.hidden_size, config.hidden_size)
        self.head = nn.Linear(config.hidden_size, config.vocab_size)
        self.post_init()

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=1.0)

    def _logits(self, input_ids, attention_mask=None):
        h = self.embed(input_ids)
        real = torch.ones_like(input_ids) if attention_mask is None else attention_mask
        if self.config.leak == "pad":  # every position, padding included
            summary = h.mean(1, keepdim=True)
        elif self.config.leak == "batch":  # every real position of every text of the batch
            summary = (h * real[..., None]).sum((0, 1), keepdim=True) / real.sum()
        elif self.config.leak == "noise":
            summary = torch.randn_like(h[:, :1])
        else:  # the real positions of the text only: exact
            summary = (h * real[..., None]).sum(1, keepdim=True) / real.sum(1)[:, None, None]
        return self.head(h + torch.tanh(self.mix(summary)))


class LeakyForMaskedLM(_Leaky):
    def forward(self, input_ids=None, attention_mask=None, **kwargs):
        return MaskedLMOutput(logits=self._logits(input_ids, attention_mask))


class LeakyForCausalLM(_Leaky):
    def forward(self, input_ids=None, attention_mask=None, **kwargs):
        return CausalLMOutput(logits=self._logits(input_ids, attention_mask))


AutoConfig.register("leaky-test", LeakyConfig, exist_ok=True)
AutoModelForMaskedLM.register(LeakyConfig, LeakyForMaskedLM, exist_ok=True)
AutoModelForCausalLM.register(LeakyConfig, LeakyForCausalLM, exist_ok=True)


def _leaky(cls, tok, leak: str):
    torch.manual_seed(0)
    return on_device(cls(LeakyConfig(vocab_size=len(tok), leak=leak, pad_token_id=tok.pad_token_id)).eval())


def test_an_unknown_padding_dependent_masked_lm_is_caught_at_load_and_scored_exactly(tmp_path, capsys):
    tok = tf.wordpiece()
    model = _leaky(LeakyForMaskedLM, tok, "pad")
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    assert "leaky-test" not in padding.PADDED
    capsys.readouterr()
    scorer = pllscore.load(tmp_path, device=DEVICE or "cpu")
    note = [line for line in capsys.readouterr().err.splitlines() if line.startswith("pllscore")]
    assert len(note) == 1 and "leaky-test" in note[0] and "without padding" in note[0], note
    assert "changed its log-probabilities" in note[0]
    assert scorer.padding == "equal"
    results = scorer.score(TEXTS, metric="all")
    for r in results:
        want = oracle.masked_logprobs(scorer.model, tok, r.text, r.metric)
        np.testing.assert_allclose(r.logprobs, want, atol=1e-5, rtol=0, err_msg=f"{r.metric} {r.text!r}")
    # padded, it would have been off: what the probe caught
    scorer.engine.padding = "pad"
    padded = scorer.score(TEXTS, metric="all")
    assert max(abs(a.total - b.total) for a, b in zip(results, padded)) > 1e-3


def test_an_unknown_padding_dependent_causal_lm_is_scored_exactly(capsys):
    tok = tf.byte_bpe(roberta=False)
    model = _leaky(LeakyForCausalLM, tok, "pad")
    scorer = CausalScorer(model, tok)
    assert scorer.padding == "equal"
    assert "leaky-test" in capsys.readouterr().err
    for r in scorer.score(TEXTS):
        np.testing.assert_allclose(r.logprobs, oracle.causal_logprobs(model, tok, r.text), atol=1e-5, rtol=0)


def test_a_model_mixing_the_batch_runs_one_text_per_pass(capsys):
    tok = tf.wordpiece()
    model = _leaky(LeakyForMaskedLM, tok, "batch")
    scorer = MaskedScorer(model, tok)
    assert scorer.padding == "single"
    assert "one text per forward pass" in capsys.readouterr().err
    for r in scorer.score(TEXTS[:2], metric=["original", "sentence-l2r"]):
        want = oracle.masked_logprobs(model, tok, r.text, r.metric)
        np.testing.assert_allclose(r.logprobs, want, atol=1e-5, rtol=0)


def test_a_model_not_reproducible_alone_is_refused():
    tok = tf.wordpiece()
    with pytest.raises(ModelError, match=r"LeakyForMaskedLM \(leaky-test\) cannot be scored exactly") as e:
        MaskedScorer(_leaky(LeakyForMaskedLM, tok, "noise"), tok)
    assert "\n" not in str(e.value)


def test_an_exact_unknown_model_is_padded_without_a_note(capsys):
    tok = tf.wordpiece()
    scorer = MaskedScorer(_leaky(LeakyForMaskedLM, tok, "none"), tok)
    assert scorer.padding == "pad"
    assert capsys.readouterr().err == ""


def test_nystromformer_with_fixed_segments_is_refused():
    from transformers import NystromformerConfig, NystromformerForMaskedLM

    tok = tf.wordpiece()
    config = NystromformerConfig(
        vocab_size=len(tok),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=20,
        segment_means_seq_len=32,
        num_landmarks=8,
        max_position_embeddings=34,
    )
    with pytest.raises(ModelError, match="nystromformer.*num_landmarks=8 below segment_means_seq_len=32") as e:
        MaskedScorer(NystromformerForMaskedLM(config).eval(), tok)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("arch", ["bert", "gpt2", "gemma3_text"])
def test_the_probe_reads_only_the_columns_it_needs_and_the_same_numbers(arch):
    from tests.engine.test_architectures import built

    model, tok = built(arch)
    rows, pad = (
        [tok(t)["input_ids"] for t in padding.PROBE_TEXTS][::-1],
        next(i for i in (tok.pad_token_id, tok.eos_token_id) if i is not None),
    )
    lengths = [len(r) for r in rows]
    seen = []
    hook = model.get_output_embeddings().register_forward_hook(lambda m, a, out: seen.append(out.shape[1]))
    with torch.inference_mode():
        full = padding.probe_read(model, rows, lengths, pad)
        some = padding.probe_read(model, rows, lengths, pad, cols=[0, 2, lengths[0] - 1])
    hook.remove()
    assert seen[-1] == 3  # the LM head saw three positions, not all
    for a, b, n in zip(full, some, lengths):
        cols = [c for c in (0, 2, lengths[0] - 1) if c < n]
        torch.testing.assert_close(a[cols], b, atol=1e-6, rtol=0)


@pytest.mark.parametrize("options", [{"long": "window"}, {"dtype": "bfloat16"}, {"compile": True}])
def test_unpadded_stays_unpadded_with_windows_bfloat16_and_compile(options, monkeypatch):
    """The batching mode is the model's, whatever else the scorer does; windows keep the texts exact."""
    from tests.engine.test_architectures import TEXTS, built

    monkeypatch.setattr("pllscore.scoring.base.compile_layers", lambda model: None)  # the mode, not the compiler
    model, tok = built("convbert")
    scorer = MaskedScorer(model, tok, **options)
    assert scorer.padding == scorer.engine.padding == "equal"
    if options.get("long") == "window":
        scorer.max_length = 6  # windows over every text
        batch = scorer.score(TEXTS, metric="all")
        for i, text in enumerate(TEXTS):
            alone = scorer.score([text], metric="all")
            for m in ("original", "sentence-l2r"):
                assert abs(batch.for_metric(m)[i].total - alone.for_metric(m)[0].total) <= 1e-5


def test_a_model_that_fails_the_probe_pass_is_refused_in_one_line():
    tok = tf.wordpiece()
    model = _leaky(LeakyForMaskedLM, tok, "none")
    model.forward = lambda input_ids=None, attention_mask=None, **kw: (_ for _ in ()).throw(TypeError("no mask\nhere"))
    with pytest.raises(ModelError, match=r"LeakyForMaskedLM \(leaky-test\) failed a padded forward pass") as e:
        MaskedScorer(model, tok)
    assert "\n" not in str(e.value)
