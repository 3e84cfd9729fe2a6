"""Tiny random encoder-decoder LMs built in-process: T5 with a Unigram tokenizer, BART with byte-level BPE."""

from __future__ import annotations

import torch

from tests import tokenizers_fixtures as tf


def t5(**config):  # type: ignore[no-untyped-def]
    """A 2-layer T5 and its T5-style Unigram tokenizer (``$A </s>``, no BOS)."""
    from transformers import T5Config, T5ForConditionalGeneration

    tok = tf.t5_unigram()
    torch.manual_seed(0)
    options = dict(d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=2, num_heads=4)
    options.update(relative_attention_num_buckets=8, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    options.update(config)
    model = T5ForConditionalGeneration(T5Config(vocab_size=len(tok), **options)).eval()
    return model, tok


def bart(**config):  # type: ignore[no-untyped-def]
    """A 2-layer BART and its byte-level BPE tokenizer (``<s> $A </s>``)."""
    from transformers import BartConfig, BartForConditionalGeneration

    tok = tf.byte_bpe(roberta=True)
    tok.model_max_length = 64
    torch.manual_seed(0)
    options = dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2)
    options.update(decoder_attention_heads=2, encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=64)
    options.update(pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2)
    options.update(config)
    model = BartForConditionalGeneration(BartConfig(vocab_size=len(tok), **options)).eval()
    return model, tok


BUILDERS = {"t5-unigram": t5, "bart-bpe": bart}


def save(folder: str, name: str = "t5-unigram") -> None:
    """Build one of the models above and save it with its tokenizer to ``folder`` (what the docs' examples load:
    ``python -m tests.seq2seq_models FOLDER [t5-unigram|bart-bpe]``)."""
    model, tok = BUILDERS[name]()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)


if __name__ == "__main__":
    import sys

    save(*sys.argv[1:3])
