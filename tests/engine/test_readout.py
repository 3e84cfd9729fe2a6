"""The sliced output projection equals the plain log-softmax readout."""

import pytest
import torch

from pllscore.engine import readout


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(("vocab_slice", "row_slice"), [(7, 3), (64, 1024), (1, 1)])
def test_sliced_linear_equals_full_log_softmax(monkeypatch, bias, vocab_slice, row_slice):
    torch.manual_seed(0)
    proj = torch.nn.Linear(16, 61, bias=bias)
    hidden = torch.randn(10, 16) * 3
    targets = torch.randint(0, 61, (10,))
    targets[0], targets[1] = 0, 60  # the first and last vocabulary rows
    monkeypatch.setattr(readout, "_VOCAB_SLICE", vocab_slice)
    monkeypatch.setattr(readout, "_ROW_SLICE", row_slice)
    got = readout.read_logprobs(proj, hidden, targets, 61)
    want = torch.log_softmax(proj(hidden), dim=-1)[torch.arange(10), targets]
    torch.testing.assert_close(got, want, atol=1e-5, rtol=0)


def test_other_heads_use_the_full_logits():
    torch.manual_seed(0)
    head = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 30))
    hidden, targets = torch.randn(5, 8), torch.randint(0, 30, (5,))
    got = readout.read_logprobs(head, hidden, targets, 30)
    want = torch.log_softmax(head(hidden), dim=-1)[torch.arange(5), targets]
    torch.testing.assert_close(got, want, atol=1e-6, rtol=0)
