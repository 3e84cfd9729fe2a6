"""The architecture matrix's encoder-decoder rows: each architecture on the proven list, exact against the loop.

A tiny random model of each architecture is built here (no Hub) with a tokenizer whose special-token
ids match its config (pad, EOS, the decoder's start), its padding embedding random (not zero). Texts
with and without a source are scored as one padded batch of mixed lengths (sources and decoder
inputs both padded) and one text at a time, and compared with :func:`tests.oracle.seq2seq_logprobs`
(one unbatched, unpadded ``model(input_ids=source, labels=text)`` per text): at most 1e-4 nats per
token; batch totals agree with alone to 1e-4. :data:`pllscore.scoring.seq2seq.SEQ2SEQ_PADDED` is
checked to hold exactly the architectures proven here, and :data:`pllscore.engine.seq2seq.HEAD_LAST`
(the LM head applied at the labels only, through a hook on its input) none but these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from pllscore import Seq2SeqScorer
from pllscore.engine import seq2seq as engine_seq2seq
from pllscore.engine.seq2seq import HEAD_LAST, STEM_SHARING
from pllscore.scoring.seq2seq import SEQ2SEQ_PADDED
from tests import oracle
from tests import tokenizers_fixtures as tf
from tests.device import on_device

pytestmark = pytest.mark.gpu  # make test-gpu: the same on CUDA (tests/device.py)

# a text alone, a long and a short one, each with and without a source; the sources differ in length too
TEXTS = ["The cat sat on the mat.", "She went to the store yesterday, and she was happy!", "A dog ran."]
SOURCES = ["The keys are on the table.", "Is the vehicle ready?", "The chef cut the onion with a knife, yes."]
ATOL = 1e-4  # per token, against the independent loop
TOTALS = 1e-4  # batch totals against alone (random mT5 gives ~-300 nats a text: float32 rounding reaches 1e-5)

T5_IDS = dict(pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)  # <pad> 0, </s> 1, <unk> 2
BART_IDS = dict(pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)  # <s> <pad> </s> <unk>
T5_SMALL = dict(d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=2, num_heads=4)
T5_SMALL.update(relative_attention_num_buckets=8)
BART_SMALL = dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2)
BART_SMALL.update(decoder_attention_heads=2, encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=64)


def _tok(name: str) -> Any:
    return {
        "t5": tf.t5_unigram,
        "bart": lambda: tf.byte_bpe(roberta=True),
        "mbart": lambda: tf.seq2seq_unigram(("<s>", "<pad>", "</s>", "<unk>")),
        "marian": lambda: tf.seq2seq_unigram(("</s>", "<unk>", "<pad>")),
    }[name]()


def _arch(config: str, model: str, tok: str, **kw: Any) -> Callable[[], Any]:
    def build() -> Any:
        import transformers

        t = _tok(tok)
        return getattr(transformers, model)(getattr(transformers, config)(vocab_size=len(t), **kw)), t

    return build


SEQ2SEQ = {
    "t5": _arch("T5Config", "T5ForConditionalGeneration", "t5", **T5_IDS, **T5_SMALL),
    "mt5": _arch("MT5Config", "MT5ForConditionalGeneration", "t5", **T5_IDS, **T5_SMALL),
    "umt5": _arch("UMT5Config", "UMT5ForConditionalGeneration", "t5", **T5_IDS, **T5_SMALL),
    "bart": _arch("BartConfig", "BartForConditionalGeneration", "bart", **BART_IDS, **BART_SMALL),
    # the model's own loss starts mBART's decoder from the labels' last token (</s> here), not from
    # decoder_start_token_id: equal when that is </s>, as for mBART-50's tokenizers
    "mbart": _arch("MBartConfig", "MBartForConditionalGeneration", "mbart", **BART_IDS, **BART_SMALL),
    "marian": _arch(
        "MarianConfig",
        "MarianMTModel",
        "marian",
        pad_token_id=2,
        eos_token_id=0,
        decoder_start_token_id=2,
        **BART_SMALL,
    ),
    "pegasus": _arch("PegasusConfig", "PegasusForConditionalGeneration", "t5", **T5_IDS, **BART_SMALL),
    "m2m_100": _arch("M2M100Config", "M2M100ForConditionalGeneration", "mbart", **BART_IDS, **BART_SMALL),
    # in eval its experts take every token (moe_eval_capacity_token_fraction 1.0, the default), so a batch's
    # padding cannot crowd a text's tokens out of an expert; the router leaves padding out
    "nllb-moe": _arch(
        "NllbMoeConfig",
        "NllbMoeForConditionalGeneration",
        "mbart",
        num_experts=4,
        encoder_sparse_step=2,
        decoder_sparse_step=2,
        **BART_IDS,
        **BART_SMALL,
    ),
}

_BUILT: dict[str, Any] = {}


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny models gain nothing from intra-op threads, and on shared cores lose much to them."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def built(arch: str) -> tuple[Any, Any]:
    """(model, tokenizer) of ``arch``, seeded, in eval mode, its padding embedding random; built once per session."""
    if arch not in _BUILT:
        torch.manual_seed(0)
        model, tok = SEQ2SEQ[arch]()
        assert tok.pad_token_id == model.config.pad_token_id and tok.eos_token_id == model.config.eos_token_id
        with torch.no_grad():  # exactness must not rest on a zero padding row
            for emb in {id(e): e for e in (model.get_input_embeddings(), model.get_decoder().embed_tokens)}.values():
                row = emb.weight[tok.pad_token_id]
                row.copy_(torch.randn_like(row))
        _BUILT[arch] = (on_device(model.eval()), tok)
    return _BUILT[arch]


# texts that share a decoder prefix with TEXTS[0]: the architectures of STEM_SHARING run it once
STEMMED = ["The cat sat on a mat.", "The cat sat on the mat!"]


def _batch() -> tuple[list[str], list[str]]:
    """The texts with their sources, then again without (the empty source), with texts sharing a stem."""
    return TEXTS + TEXTS + STEMMED, SOURCES + [""] * (len(TEXTS) + len(STEMMED))


@pytest.mark.parametrize("arch", sorted(SEQ2SEQ))
def test_seq2seq_architecture_is_exact(arch, monkeypatch):
    monkeypatch.setattr(engine_seq2seq, "_MIN_SAVING", 0.0)  # share every stem there is
    model, tok = built(arch)
    scorer = Seq2SeqScorer(model, tok)
    assert scorer.padding == ("pad" if arch in SEQ2SEQ_PADDED else "single"), arch
    assert (scorer.engine.head is not None) == (arch in HEAD_LAST), arch  # the LM head on the labels only
    assert scorer.engine.share_stems == (arch in STEM_SHARING), arch  # shared decoder stems
    texts, sources = _batch()
    batch = scorer.score(texts, context=sources)
    for i, (text, source) in enumerate(zip(texts, sources)):
        one = scorer.score([text], context=source or None)[0]
        assert abs(batch[i].total - one.total) <= TOTALS, (arch, text, source)
        want = oracle.seq2seq_logprobs(model, tok, text, source)
        np.testing.assert_allclose(batch[i].logprobs, want, atol=ATOL, rtol=0, err_msg=f"{arch} {text!r} {source!r}")


def test_the_list_is_the_matrix():
    """Every encoder-decoder architecture the matrix builds is on the list, and nothing else is (none needed
    one text per pass: an architecture that does goes off the list, with a test that padded it is off)."""
    assert SEQ2SEQ_PADDED == set(SEQ2SEQ)
    assert HEAD_LAST <= set(SEQ2SEQ)  # the head cut to the labels is proven on these only
    assert STEM_SHARING <= set(SEQ2SEQ)
