"""A real masked LM: AntiBERTy (antibody sequences, one residue a token), from its PyPI wheel (tests/real/antiberty.py).

Every PLL metric equals the one-copy-at-a-time oracle of tests/oracle.py (float32, one forward pass per
masked copy, full logits), on three antibody variable domains: as given (every residue its own word, so
original, word-l2r and whole-word coincide) and cut into segments by spaces with ``mask_by="words"`` (so
that the four differ). bfloat16 weights stay within a bound of float32.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pllscore
from pllscore.metrics import METRICS
from tests.oracle import mask_set, whitespace_groups
from tests.real.fetch import FetchError


@pytest.fixture(scope="module")
def folder():
    from tests.real.antiberty import antiberty_folder

    try:
        return antiberty_folder()
    except FetchError as e:
        pytest.skip(f"AntiBERTy unavailable (pip download antiberty==0.1.3): {e}")


# public variable domains: trastuzumab's heavy and light chains, adalimumab's heavy chain
CHAINS = [
    "EVQLVESGGGLVQPGGSLRLSCAASGFNIKDTYIHWVRQAPGKGLEWVARIYPTNGYTRYADSVKGRFTISADTSKNTAYLQMNSLRAEDTAVYYCSRWGGDGFYAMDYWGQGTLVTVSS",
    "DIQMTQSPSSLSASVGDRVTITCRASQDVNTAVAWYQQKPGKAPKLLIYSASFLYSGVPSRFSGSRSGTDFTLTISSLQPEDFATYYCQQHYTTPPTFGQGTKVEIK",
    "EVQLVESGGGLVQPGRSLRLSCAASGFTFDDYAMHWVRQAPGKGLEWVSAITWNSGHIDYADSVEGRFTISRDNAKNSLYLQMNSLRAEDTAVYYCAKVSYLSTASSLDYWGQGTLVTVSS",
]
TOL = 1e-4  # nats per residue and per chain, pllscore vs the oracle (measured: 1.1e-5 per chain, PLL-original)
TOL_BF16 = 0.05  # nats per residue on average, bfloat16 weights vs float32


def _segments(chain: str, sizes=(3, 1, 5, 2, 7)) -> str:
    """``chain`` cut into words of varying sizes, joined by spaces."""
    out, at, k = [], 0, 0
    while at < len(chain):
        out.append(chain[at : at + sizes[k % len(sizes)]])
        at, k = at + sizes[k % len(sizes)], k + 1
    return " ".join(out)


@pytest.fixture(scope="module")
def scorer(folder):
    return pllscore.load(folder, device="cpu")


def test_it_loads_as_a_masked_lm_one_residue_a_token(scorer):
    assert type(scorer.model).__name__ == "BertForMaskedLM" and scorer.kind == "masked"
    assert scorer.model.config.num_hidden_layers == 8 and scorer.model.config.hidden_size == 512
    enc = scorer.tokenizer(CHAINS[1])
    assert len(enc["input_ids"]) == len(CHAINS[1]) + 2  # [CLS], a token per residue, [SEP]
    assert scorer.tokenizer.convert_ids_to_tokens(enc["input_ids"][1:4]) == list(CHAINS[1][:3])
    assert scorer.tokenizer.unk_token_id not in enc["input_ids"]


_FORWARDS: dict[tuple, float] = {}


@torch.inference_mode()
def oracle(model, tokenizer, text: str, metric: str, groups: list[int] | None = None) -> list[float]:
    """Per residue, its log-probability under ``metric`` (:func:`tests.oracle.mask_set`), one forward pass per
    masked copy and full logits, as :func:`tests.oracle.masked_logprobs` computes it; a copy already run (the
    same ids and masked positions: original, word-l2r and whole-word coincide on one-residue words) is reused."""
    enc = tokenizer(text)
    ids, word_ids = enc["input_ids"], enc.word_ids()
    if groups is not None:
        it = iter(groups)
        word_ids = [None if w is None else next(it) for w in word_ids]
    out = []
    for t in range(len(ids)):
        if word_ids[t] is None:
            continue
        masked = sorted(mask_set(metric, t, word_ids))
        key = (tuple(ids), tuple(masked), t)
        if key not in _FORWARDS:
            x = torch.tensor([ids])
            x[0, masked] = tokenizer.mask_token_id
            _FORWARDS[key] = torch.log_softmax(model(input_ids=x).logits[0, t].double(), -1)[ids[t]].item()
        out.append(_FORWARDS[key])
    return out


def test_every_metric_equals_the_oracle(scorer):
    got = scorer.score(CHAINS, metric="all")
    for metric in METRICS:
        for chain, r in zip(CHAINS, got.for_metric(metric)):
            want = oracle(scorer.model, scorer.tokenizer, chain, metric)
            assert r.n_tokens == len(chain)
            np.testing.assert_allclose(r.logprobs, want, atol=TOL, rtol=0, err_msg=metric)
            assert abs(r.total - sum(want)) < TOL


def test_every_metric_over_words_of_several_residues_equals_the_oracle(scorer):
    texts = [_segments(c) for c in CHAINS]
    got = scorer.score(texts, metric="all", words="whitespace", mask_by="words")
    totals = {}
    for metric in METRICS:
        totals[metric] = got.for_metric(metric).totals
        for text, r in zip(texts, got.for_metric(metric)):
            enc = scorer.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            groups = whitespace_groups(text, enc["offset_mapping"])
            want = oracle(scorer.model, scorer.tokenizer, text, metric, groups)
            np.testing.assert_allclose(r.logprobs, want, atol=TOL, rtol=0, err_msg=metric)
    assert len({tuple(np.round(t, 6)) for t in totals.values()}) == 4  # words of several residues: four metrics


def test_bfloat16_weights_stay_near_float32(folder, scorer):
    half = pllscore.load(folder, device="cpu", dtype="bfloat16")
    exact, approx = scorer.score(CHAINS, metric="original"), half.score(CHAINS, metric="original")
    for chain, a, b in zip(CHAINS, exact, approx):
        gap = abs(a.total - b.total) / len(chain)
        assert 0 < gap < TOL_BF16, (chain[:10], a.total, b.total)
