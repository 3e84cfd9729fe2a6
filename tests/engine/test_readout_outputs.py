"""Entropy, rank and token-set mass from the streaming readout equal a direct float64 computation."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from pllscore.engine import readout


def _direct(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor):
    """Full-softmax reference in float64."""
    x = logits.double()
    logp = torch.log_softmax(x, -1)
    p = logp.exp()
    ent = -torch.where(p > 0, p * logp, torch.zeros_like(p)).sum(-1)
    target = x.gather(1, targets[:, None])
    rank = 1 + (x > target).sum(-1)
    in_set = torch.logsumexp(logp.masked_fill(~mask, float("-inf")), -1)
    return logp.gather(1, targets[:, None]).squeeze(1), ent, rank, in_set


def _as_linear(logits: torch.Tensor) -> tuple[torch.nn.Linear, torch.Tensor]:
    """A linear layer and hidden states whose product is ``logits``: the identity times the logits'
    transpose, with a -inf logit put in the bias (0 * -inf in the product would be NaN)."""
    n, v = logits.shape
    proj = torch.nn.Linear(n, v)
    with torch.no_grad():
        ruled_out = torch.isinf(logits).all(0)
        proj.weight.copy_(torch.where(ruled_out[None, :], 0.0, logits).T)
        proj.bias.copy_(torch.where(ruled_out, float("-inf"), 0.0))
    return proj, torch.eye(n)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 5),
    v=st.integers(1, 40),
    vocab_slice=st.integers(1, 17),
    scale=st.sampled_from([0.1, 1.0, 10.0, 60.0]),
    seed=st.integers(0, 2**16),
    ties=st.booleans(),
    neg_inf=st.booleans(),
)
def test_streaming_outputs_equal_direct(monkeypatch_session, n, v, vocab_slice, scale, seed, ties, neg_inf):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(n, v, generator=g) * scale
    if ties:  # few distinct values: ranks with ties, equal logits across slice boundaries
        logits = logits.round()
    if neg_inf and v > 1:  # a token the model rules out
        logits[:, 0] = float("-inf")
    targets = torch.randint(1 if neg_inf and v > 1 else 0, v, (n,), generator=g)
    mask = torch.rand(v, generator=g) < 0.4
    monkeypatch_session.setattr(readout, "_VOCAB_SLICE", vocab_slice)
    proj, hidden = _as_linear(logits)
    with torch.inference_mode():
        got = readout.read_outputs(proj, hidden, targets, v, entropy=True, rank=True, token_set=mask)
        full = readout.pick_outputs(logits, targets, entropy=True, rank=True, token_set=mask)
    lp, ent, rank, in_set = _direct(logits, targets, mask)
    for out in (got, full):
        np.testing.assert_allclose(out["logprob"].numpy(), lp.numpy(), atol=1e-5 * max(scale, 1))
        np.testing.assert_allclose(out["entropy"].numpy(), ent.numpy(), atol=2e-5 * max(scale, 1))
        np.testing.assert_array_equal(out["rank"].numpy(), rank.numpy())
        np.testing.assert_allclose(out["set"].numpy(), in_set.numpy(), atol=1e-5 * max(scale, 1))
    # asking for more leaves the log-probability bit for bit as the plain readout gives it
    with torch.inference_mode():
        assert torch.equal(got["logprob"], readout.read_logprobs(proj, hidden, targets, v))


@pytest.fixture(scope="module")
def monkeypatch_session():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_hand_worked_entropy_and_rank():
    # logits log(1/2), log(1/4), log(1/4): entropy 1.5 ln 2; target 2 ties with 1 (rank 2), target 0 is rank 1
    logits = torch.log(torch.tensor([[0.5, 0.25, 0.25], [0.5, 0.25, 0.25]]))
    out = readout.pick_outputs(logits, torch.tensor([2, 0]), entropy=True, rank=True)
    np.testing.assert_allclose(out["entropy"].numpy(), [1.5 * np.log(2)] * 2, rtol=1e-6)
    assert out["rank"].tolist() == [2, 1]


def test_nothing_asked_is_the_plain_readout():
    proj = torch.nn.Linear(4, 9)
    hidden, targets = torch.randn(3, 4), torch.tensor([0, 4, 8])
    with torch.inference_mode():
        assert readout.read_outputs(proj, hidden, targets, 9).keys() == {"logprob"}


def test_other_heads_in_row_chunks_equal_direct(monkeypatch):
    torch.manual_seed(1)
    head = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 30))
    hidden, targets = torch.randn(7, 8) * 4, torch.randint(0, 30, (7,))
    mask = torch.rand(30) < 0.5
    monkeypatch.setattr(readout, "_MAX_LOGITS", 60)  # two rows of logits at a time
    with torch.inference_mode():
        got = readout.read_outputs(head, hidden, targets, 30, entropy=True, rank=True, token_set=mask)
        lp, ent, rank, in_set = _direct(head(hidden), targets, mask)
    np.testing.assert_allclose(got["logprob"].numpy(), lp.numpy(), atol=1e-5)
    np.testing.assert_allclose(got["entropy"].numpy(), ent.numpy(), atol=1e-5)
    np.testing.assert_array_equal(got["rank"].numpy(), rank.numpy())
    np.testing.assert_allclose(got["set"].numpy(), in_set.numpy(), atol=1e-5)
