"""Tiny fast tokenizers of each family, built from in-test vocabularies (no downloads)."""

from __future__ import annotations

import string

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

# words that stay whole in the WordPiece vocabulary; anything else splits into letters
WHOLE_WORDS = (
    "the The a A cat dog sat on mat . , ! ? ' traveler lost souvenir wrecked vehicle ran to store she She "
    "went yesterday keys cabinet are is table chef cut onion with knife"
).split()
# the pieces of the hand-worked example: the ho ##oli ##gan wrecked the vehicle .
PIECES = ["ho", "##oli", "##gan", "##s", "##ed", "##ing", "##er"]

CORPUS = [
    "The cat sat on the mat.",
    "The hooligan wrecked the vehicle.",
    "The traveler lost the souvenir.",
    "She went to the store yesterday.",
    "The keys to the cabinet are on the table.",
    "The chef cut the onion with a knife.",
    "A dog ran to the store, and she was happy!",
    "Carnivores eat meat; herbivores eat plants.",
    "Unbelievable: the marauder didn't return the souvenirs.",
    "Is the vehicle ready? Yes, it is ready now.",
] * 3


# RoBERTa/XLM-R names of the special tokens
_XLM_SPECIALS = dict(
    bos_token="<s>",
    eos_token="</s>",
    cls_token="<s>",
    sep_token="</s>",
    unk_token="<unk>",
    pad_token="<pad>",
    mask_token="<mask>",
)


def wordpiece() -> PreTrainedTokenizerFast:
    """Cased WordPiece with [CLS] $A [SEP], BERT style."""
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    letters = list(string.ascii_letters + string.digits)
    vocab_list = specials + list(dict.fromkeys(WHOLE_WORDS + PIECES + letters + ["##" + c for c in letters]))
    vocab_list += [p for p in string.punctuation if p not in vocab_list]
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab_list)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )


def byte_bpe(*, roberta: bool) -> PreTrainedTokenizerFast:
    """Byte-level BPE; RoBERTa style (<s> $A </s>) or GPT-2 style (no special tokens added)."""
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"] if roberta else ["<|endoftext|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    if roberta:
        tok.post_processor = processors.RobertaProcessing(
            ("</s>", tok.token_to_id("</s>")),
            ("<s>", tok.token_to_id("<s>")),
            trim_offsets=True,
            add_prefix_space=False,
        )
        return PreTrainedTokenizerFast(tokenizer_object=tok, **_XLM_SPECIALS)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>"
    )


def unigram(*, template: str = "<s> $A </s>") -> PreTrainedTokenizerFast:
    """SentencePiece-style Unigram with Metaspace (ALBERT/XLM-R style)."""
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=150, special_tokens=specials, unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single=template, special_tokens=[(t, tok.token_to_id(t)) for t in ("<s>", "</s>") if t in template]
    )
    return PreTrainedTokenizerFast(tokenizer_object=tok, **_XLM_SPECIALS)


def t5_unigram() -> PreTrainedTokenizerFast:
    """T5-style Unigram: ``$A </s>``, <pad> 0, </s> 1, <unk> 2, no BOS."""
    specials = ["<pad>", "</s>", "<unk>"]
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=150, special_tokens=specials, unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>", model_max_length=64
    )


def seq2seq_unigram(specials: tuple[str, ...], *, pad: str = "<pad>", eos: str = "</s>") -> PreTrainedTokenizerFast:
    """Unigram ``$A </s>`` with ``specials`` as its first ids, in that order (Marian: ``</s> <unk> <pad>``;
    mBART, M2M100: ``<s> <pad> </s> <unk>``), so a config's pad and EOS ids can match it."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=150, special_tokens=list(specials), unk_token="<unk>", show_progress=False
    )
    tok.train_from_iterator(CORPUS, trainer)
    tok.post_processor = processors.TemplateProcessing(single=f"$A {eos}", special_tokens=[(eos, specials.index(eos))])
    named = {"bos_token": "<s>"} if "<s>" in specials else {}
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token=pad, eos_token=eos, unk_token="<unk>", model_max_length=64, **named
    )
