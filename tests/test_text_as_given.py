"""A text is scored as given: a literal "[MASK]", "<s>" or "<|endoftext|>" in it is text.

Also: tokenizers that give one text token types other than 0 (Funnel), and Funnel models,
are refused, since pllscore runs models without token types and pads its batches.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from pllscore import CausalScorer, InputError, MaskedScorer, ModelError
from pllscore.engine.loading import special_ids
from tests import oracle
from tests import tokenizers_fixtures as tf
from tests.conftest import MASKED_FAMILIES

ATOL = 1e-5


def _text(tok) -> str:
    """A sentence holding the literal strings of the tokenizer's special tokens."""
    return f"The {tok.mask_token} sat{tok.sep_token} {tok.cls_token} {tok.pad_token}."


class _Fixed:
    """A stand-in tokenizer for tests/oracle.py that returns the ids pllscore scored."""

    def __init__(self, tok, ids: list[int], word_ids: list[int | None]) -> None:
        self.ids, self.wids = ids, word_ids
        self.mask_token_id, self.bos_token_id, self.eos_token_id = tok.mask_token_id, tok.bos_token_id, tok.eos_token_id

    def __call__(self, text: str, **kwargs: object) -> _Fixed:
        return self

    def __getitem__(self, key: str) -> list[int]:
        assert key == "input_ids"
        return self.ids

    def word_ids(self) -> list[int | None]:
        return self.wids


def _content(enc) -> list[int]:
    return [i for i, w in zip(enc.ids, enc.word_ids) if w is not None]


@pytest.mark.parametrize("family", MASKED_FAMILIES)
def test_masked_special_strings_are_scored_as_text(masked_models, family):
    model, tok = masked_models[family]
    scorer = MaskedScorer(model, tok, max_tokens=64)
    text = _text(tok)
    (enc,) = scorer.encode([text]).encoded  # the encoding score() uses
    content = _content(enc)
    assert tok.mask_token_id not in content
    assert not set(content) & special_ids(tok), family
    # every character of the text is covered by its own tokens
    covered = {c for (a, b), w in zip(enc.offsets, enc.word_ids) if w is not None for c in range(a, b)}
    assert {c for c, ch in enumerate(text) if not ch.isspace()} <= covered
    if family not in {"xlmr-unigram", "albert-unigram"}:
        # WordPiece and BPE: the tokenizer's own reading with split_special_tokens
        assert list(enc.ids) == tok(text, split_special_tokens=True)["input_ids"]
    results = scorer.score(text, metric=["original", "word-l2r"])
    fixed = _Fixed(tok, enc.ids, enc.word_ids)
    for r in results:
        want = oracle.masked_logprobs(model, fixed, text, r.metric)
        np.testing.assert_allclose(r.logprobs, want, atol=ATOL, rtol=0, err_msg=f"{family} {r.metric}")
        assert tok.mask_token not in r.pieces


def test_masked_windowed_path_reads_special_strings_as_text(masked_models):
    model, tok = masked_models["bert-wordpiece"]
    scorer = MaskedScorer(model, tok)
    text = " ".join(["The [MASK] sat on the mat."] * 12)  # longer than the model's 64 positions
    r = scorer.score(text, long="window")[0]
    assert np.isfinite(r.logprobs).all() and "[MASK]" not in r.pieces
    assert r.pieces[:6] == ("The", "[", "M", "##A", "##S", "##K")


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram"])
def test_causal_special_strings_are_scored_as_text(causal_models, family):
    model, tok = causal_models[family]
    scorer = CausalScorer(model, tok)
    text = f"The cat{tok.eos_token} sat {tok.bos_token} on the <|endoftext|> mat."
    (enc,) = scorer.encode([text]).encoded  # the encoding score() uses
    assert enc.ids[0] == (tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id)
    assert tok.eos_token_id not in enc.ids[1:] and tok.bos_token_id not in enc.ids[1:]
    r = scorer.score(text)[0]
    assert tok.eos_token not in r.pieces and r.n_tokens == len(enc.ids) - 1
    np.testing.assert_allclose(r.logprobs, oracle.causal_logprobs(model, _Fixed(tok, enc.ids, []), text), atol=ATOL)
    if family == "gpt2-bpe":
        # byte-level BPE: the tokenizer's own reading with split_special_tokens, through the unchanged oracle
        split = copy.copy(tok)
        split.split_special_tokens = True
        np.testing.assert_allclose(r.logprobs, oracle.causal_logprobs(model, split, text), atol=ATOL)


def test_user_tokenizer_is_left_as_it_was(masked_models):
    model, tok = masked_models["xlmr-unigram"]
    before = tok.backend_tokenizer.encode_special_tokens
    MaskedScorer(model, tok).score("The <mask> sat.")
    assert tok.backend_tokenizer.encode_special_tokens == before
    assert tok("<mask>", add_special_tokens=False)["input_ids"] == [tok.mask_token_id]


def test_special_string_the_tokenizer_cannot_read_as_text_is_refused():
    """A BPE vocabulary whose merges build "<mask>" itself: no way to read it as text, so an error."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<pad>"], show_progress=False)
    raw.train_from_iterator([f"{s} <mask> <cls> <sep>" for s in tf.CORPUS], trainer)
    assert raw.token_to_id("<mask>") is not None  # a piece learnt from text
    raw.post_processor = processors.TemplateProcessing(
        single="<cls> $A <sep>",
        special_tokens=[("<cls>", raw.token_to_id("<cls>")), ("<sep>", raw.token_to_id("<sep>"))],
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        cls_token="<cls>",
        sep_token="<sep>",
    )
    torch.manual_seed(0)
    model = BertForMaskedLM(
        BertConfig(
            vocab_size=len(tok),
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=37,
            pad_token_id=tok.pad_token_id,
        )
    ).eval()
    scorer = MaskedScorer(model, tok)
    assert scorer.score("The cat sat on the mat .")[0].total < 0
    with pytest.raises(InputError, match=r"text 1 contains '<mask>'.*special token '<mask>'") as e:
        scorer.score(["The cat sat .", "The <mask> sat ."])
    assert "\n" not in str(e.value)


# -- token types ---------------------------------------------------------------------------


def _typed_wordpiece(cls_type: int):
    """The WordPiece fixture with [CLS] given token type ``cls_type``, Funnel style."""
    tok = tf.wordpiece()
    tok.backend_tokenizer.post_processor = __import__("tokenizers").processors.TemplateProcessing(
        single=f"[CLS]:{cls_type} $A:0 [SEP]:0",
        pair=f"[CLS]:{cls_type} $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.cls_token_id), ("[SEP]", tok.sep_token_id)],
    )
    return tok


def test_tokenizer_with_nonzero_token_types_is_refused(tiny_bert):
    model, _ = tiny_bert
    scorer = MaskedScorer(model, _typed_wordpiece(2))
    with pytest.raises(ModelError, match=r"token type ids other than 0") as e:
        scorer.score("The cat sat.")
    assert "\n" not in str(e.value)
    with pytest.raises(ModelError, match=r"token type ids other than 0"):
        scorer.check("The cat sat.")


def test_tokenizer_with_zero_token_types_scores_as_before(tiny_bert):
    model, tok = tiny_bert
    typed = MaskedScorer(model, _typed_wordpiece(0)).score("The cat sat.")[0]
    assert typed.logprobs.tolist() == MaskedScorer(model, tok).score("The cat sat.")[0].logprobs.tolist()


def _funnel():
    import torch
    from transformers import FunnelConfig, FunnelForMaskedLM, FunnelTokenizer

    wp = tf.wordpiece()
    tok = FunnelTokenizer(
        vocab=dict(wp.get_vocab()),
        do_lower_case=False,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
    )
    torch.manual_seed(0)
    config = FunnelConfig(
        vocab_size=len(tok),
        block_sizes=[1, 1],
        num_decoder_layers=1,
        d_model=32,
        n_head=2,
        d_head=16,
        d_inner=37,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
    )
    return FunnelForMaskedLM(config).eval(), tok


def test_funnel_is_refused(tmp_path):
    import pllscore

    model, tok = _funnel()
    assert tok("The cat.", return_token_type_ids=True)["token_type_ids"][0] == 2
    with pytest.raises(ModelError, match="Funnel"):
        MaskedScorer(model, tok)
    with pytest.raises(ModelError, match="Funnel"):
        MaskedScorer(model, tf.wordpiece())  # its pooling, not only its token types, rules it out
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    with pytest.raises(ModelError, match="token type ids other than 0") as e:
        pllscore.load(tmp_path, device="cpu")
    assert "\n" not in str(e.value)
