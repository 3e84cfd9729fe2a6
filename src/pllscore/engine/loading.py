"""Model and tokenizer from a Hub name or a local folder; masked vs causal from the config.

Every failure of transformers or the file system becomes a one-line :class:`ModelError`, and
so does a checkpoint that would score with weights transformers had to initialise at random
(a classifier or a bare encoder loaded as a masked LM, an ELECTRA discriminator).

The tokenizer helpers at the end keep a text's characters text: a literal ``[MASK]`` or
``<|endoftext|>`` in it is never read as the special token.
"""

from __future__ import annotations

import copy
import json
import os
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from pllscore.errors import InputError, ModelError

Kind = Literal["masked", "causal"]

__all__ = [
    "Kind",
    "Loaded",
    "check_token_types",
    "detect_kind",
    "encode_text",
    "literal_specials",
    "load_pretrained",
    "max_input_length",
    "resolve_device",
    "resolve_dtype",
    "special_ids",
    "text_only_tokenizer",
]

# models whose position ids start after the padding index, so two positions are unusable
_OFFSET_POSITIONS = {"roberta", "xlm-roberta", "camembert", "xlm-roberta-xl", "data2vec-text", "longformer"}

_DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
}


@dataclass(frozen=True)
class Loaded:
    """A loaded model with its tokenizer and what pllscore learned about it."""

    model: Any
    tokenizer: Any
    kind: Kind
    name: str
    revision: str | None
    device: torch.device


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` picks cuda, then mps, then cpu; anything else is passed to ``torch.device``."""
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise InputError(f"invalid device {device!r}; use 'auto', 'cpu', 'cuda', 'cuda:1' or 'mps'") from e


def resolve_dtype(dtype: str | torch.dtype | None) -> torch.dtype:
    """``None`` means float32, the exact setting; strings like ``"bfloat16"`` are accepted.

    bfloat16 and float16 are run by autocast over float32 weights: matrix products in the reduced
    type, normalisation and the final log-softmax in float32.
    """
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        if dtype in (torch.float32, torch.bfloat16, torch.float16):
            return dtype
    elif isinstance(dtype, str) and dtype.lower().removeprefix("torch.") in _DTYPES:
        return _DTYPES[dtype.lower().removeprefix("torch.")]
    raise InputError(f"unsupported dtype {dtype!r}; use float32, bfloat16 or float16")


def detect_kind(config: Any) -> Kind | None:
    """Masked or causal LM, from the config's architectures, else its model type."""
    archs = list(getattr(config, "architectures", None) or [])
    if any(a.endswith("ForMaskedLM") for a in archs):
        return "masked"
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        return "causal"
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    model_type = getattr(config, "model_type", None)
    if getattr(config, "is_decoder", False) and model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "causal"
    if model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "masked"
    if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "causal"
    return None


def max_input_length(config: Any, tokenizer: Any) -> int | None:
    """The longest input, in tokens (special tokens included), that the model accepts."""
    limits: list[int] = []
    n = getattr(config, "max_position_embeddings", None)
    if isinstance(n, int) and n > 0:
        if getattr(config, "model_type", None) in _OFFSET_POSITIONS:
            n -= (getattr(config, "pad_token_id", None) or 0) + 1
        limits.append(n)
    m = getattr(tokenizer, "model_max_length", None)
    if isinstance(m, int) and 0 < m < 1_000_000:
        limits.append(m)
    return min(limits) if limits else None


def _hub_reachable() -> bool:
    """Whether the Hub's host name resolves; a failed lookup is quick, the Hub's own retries are not."""
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False
    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def _not_found(name: str, e: BaseException) -> ModelError:
    if os.path.isdir(name):
        return ModelError(f"cannot load model from folder {name!r}: {_one_line(e)}")
    if os.path.sep in name and not os.path.exists(name) and name.startswith((".", os.path.sep, "~")):
        return ModelError(f"model folder {name!r} does not exist; check the path")
    return ModelError(
        f"model {name!r} not found: it is not a local folder, not in the Hugging Face cache, and could not be "
        "fetched from the Hub (offline or misspelled?); pass the path of a downloaded model folder"
    )


def load_pretrained(
    name_or_path: str | os.PathLike[str],
    *,
    device: str | torch.device = "auto",
    dtype: str | torch.dtype | None = None,
    revision: str | None = None,
    kind: Kind | None = None,
    trust_remote_code: bool = False,
) -> Loaded:
    """Load a model and its fast tokenizer, in eval mode, on ``device``."""
    name = os.fspath(name_or_path)
    from pllscore.engine import gguf  # a .gguf file, or a folder holding one: see pllscore.engine.gguf

    if gguf.find_gguf(name) is not None:
        return gguf.load_gguf(name, device=device, dtype=dtype, revision=revision, kind=kind)
    if kind not in (None, "masked", "causal"):
        raise InputError(f"unknown kind {kind!r}; use 'masked', 'causal' or leave it out")
    torch_device = resolve_device(device)
    resolve_dtype(dtype)  # fail early on a bad name; weights stay float32, reduced precision is autocast
    common: dict[str, Any] = {"revision": revision, "trust_remote_code": trust_remote_code}
    if not os.path.isdir(name) and not _hub_reachable():
        common["local_files_only"] = True  # offline: use the cache, fail at once if the model is not there
    try:
        config = AutoConfig.from_pretrained(name, **common)
    except (OSError, ValueError, KeyError) as e:
        raise _not_found(name, e) from e

    detected = detect_kind(config)
    arch = ", ".join(getattr(config, "architectures", None) or [config.model_type])
    if kind is not None and detected is not None and kind != detected:
        other = "masked-LM (PLL)" if detected == "causal" else "causal-LM"
        raise ModelError(
            f"{name!r} is a {detected} LM ({arch}), not a {kind} one; it cannot be used for {other.split()[0]} "
            f"scoring: load it with kind={detected!r} or leave kind out"
        )
    chosen = kind or detected
    if chosen is None:
        raise ModelError(
            f"{name!r} ({arch}) is neither a masked nor a causal language model; "
            "pllscore needs a model with a language-modelling head (pass kind='masked' or kind='causal' to force one)"
        )

    try:
        tokenizer = AutoTokenizer.from_pretrained(name, use_fast=True, **common)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ModelError(f"cannot load the tokenizer of {name!r}: {_one_line(e)}") from e
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(
            f"{name!r} has only a slow tokenizer ({type(tokenizer).__name__}); pllscore needs a fast one "
            "(tokenizer.json) for word ids and offsets: save one with the `tokenizers` library "
            "or use a model that has it"
        )

    check_token_types(tokenizer("a", return_token_type_ids=True).get("token_type_ids"), name)

    auto = AutoModelForMaskedLM if chosen == "masked" else AutoModelForCausalLM
    dtype_key = "dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype"
    try:
        model, info = auto.from_pretrained(name, **common, **{dtype_key: torch.float32}, output_loading_info=True)
    except (OSError, ValueError, KeyError) as e:
        raise ModelError(f"cannot load {name!r} as a {chosen} LM: {_one_line(e)}") from e
    _check_loaded_weights(model, info, name=name, arch=arch, kind=chosen)
    model.eval().to(torch_device)
    return Loaded(
        model=model,
        tokenizer=tokenizer,
        kind=chosen,
        name=name,
        revision=revision or getattr(config, "_commit_hash", None),
        device=torch_device,
    )


_HEADS = {
    "masked": "a masked-LM head (a *ForMaskedLM model such as bert-base-cased or roberta-base)",
    "causal": "a causal-LM head (a *ForCausalLM or *LMHeadModel model such as gpt2)",
}


def _check_loaded_weights(model: Any, info: dict[str, Any], *, name: str, arch: str, kind: Kind) -> None:
    """Refuse a model any of whose weights transformers initialised at random.

    ``info`` is ``from_pretrained(..., output_loading_info=True)``'s report. Weights tied to
    others (GPT-2's ``lm_head`` to ``wte``, BERT's decoder to the word embeddings) are not in
    its missing keys: they are the trained ones. Unexpected keys (a pooler, an NSP head) are
    left unused and harmless.
    """
    errors = [str(m) for m in info.get("error_msgs") or () if str(m).strip()]
    if errors:
        raise ModelError(f"cannot load {name!r} as a {kind} LM: {_one_line(ValueError(errors[0]))}")
    mismatched = {k[0] if isinstance(k, (tuple, list)) else k for k in info.get("mismatched_keys") or ()}
    missing = sorted(set(info.get("missing_keys") or ()) | mismatched)
    if not missing:
        return
    prefix = getattr(model, "base_model_prefix", "") or ""
    body = [k for k in missing if prefix and k.startswith(prefix + ".")]
    lead = f"has no trained {kind}-LM head" if not body else f"lacks weights of {type(model).__name__}'s body"
    n = len(missing)
    shown = ", ".join(missing[:3]) + (f" and {n - 3} more" if n > 3 else "")
    raise ModelError(
        f"{name!r} ({arch}) {lead}: {n} weight{'s' if n > 1 else ''} of {type(model).__name__} "
        f"{'are' if n > 1 else 'is'} not in the checkpoint and would be randomly initialised ({shown}), so its "
        f"scores would be meaningless; use a checkpoint with {_HEADS[kind]}"
    )


# -- tokenizers: text is text -------------------------------------------------------------

_TEXT_ONLY: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_NO_COPY = object()


def special_ids(tokenizer: Any) -> frozenset[int]:
    """Ids of the tokenizer's special tokens, which no character of a text may become.

    The unknown token is left out (unless it doubles as BOS/EOS/...): it is what a character
    outside the vocabulary becomes, and it is scored as such.
    """
    ids = {int(i) for i in getattr(tokenizer, "all_special_ids", None) or ()}
    roles = {getattr(tokenizer, f"{r}_token_id", None) for r in ("bos", "eos", "cls", "sep", "pad", "mask")}
    unk = getattr(tokenizer, "unk_token_id", None)
    if unk is not None and unk not in roles:
        ids.discard(int(unk))
    return frozenset(ids)


def text_only_tokenizer(tokenizer: Any) -> Any | None:
    """A copy of a fast tokenizer whose model cannot read a special token's string from text, or None.

    ``split_special_tokens=True`` stops the tokenizer's added-token matcher, but a Unigram
    (SentencePiece: XLM-R, ALBERT, T5) or WordPiece vocabulary may list ``<s>``, ``<mask>``
    or ``[MASK]`` as ordinary pieces, so its model still finds them in text. The copy renames
    those pieces to strings no text holds, keeping their ids; the template that adds special
    tokens is unchanged. A BPE model builds pieces from merges, which do not make special
    tokens, so it gets no copy (None), as does anything the copy cannot be made for.
    """
    try:
        cached = _TEXT_ONLY.get(tokenizer)
    except TypeError:  # not hashable or not weak-referenceable
        cached = None
    if cached is not None:
        return None if cached is _NO_COPY else cached
    made = _text_only_copy(tokenizer)
    try:
        _TEXT_ONLY[tokenizer] = _NO_COPY if made is None else made
    except TypeError:
        pass
    return made


def _text_only_copy(tokenizer: Any) -> Any | None:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not hasattr(tokenizer, "_tokenizer"):
        return None
    try:
        from tokenizers import Tokenizer

        spec = json.loads(backend.to_str())
        model = spec["model"]
        names = {tokenizer.convert_ids_to_tokens(i) for i in special_ids(tokenizer)}
        vocab = model.get("vocab")
        if model.get("type") == "Unigram" and isinstance(vocab, list):
            hits = [entry for entry in vocab if entry[0] in names]
            for entry in hits:
                entry[0] = "\u0000pllscore-special\u0000" + entry[0]
        elif model.get("type") in ("WordPiece", "WordLevel") and isinstance(vocab, dict):
            hits = [k for k in vocab if k in names and k != model.get("unk_token")]
            for k in hits:
                vocab["\u0000pllscore-special\u0000" + k] = vocab.pop(k)
        else:
            return None
        if not hits:
            return None
        clone = copy.copy(tokenizer)
        clone._tokenizer = Tokenizer.from_str(json.dumps(spec))
    except Exception:  # noqa: BLE001 - an unusual tokenizer: the caller refuses the text instead
        return None
    return clone


def encode_text(tokenizer: Any, texts: list[str], add_special_tokens: bool) -> Any:
    """Encode ``texts`` with special-token strings in them read as text, with offsets and token types.

    The fast tokenizer's backend keeps the setting it was last called with; it is put back.
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    before = getattr(backend, "encode_special_tokens", None)
    try:
        return tokenizer(
            texts,
            add_special_tokens=add_special_tokens,
            return_offsets_mapping=True,
            return_token_type_ids=True,
            split_special_tokens=True,
            verbose=False,  # over-long input is reported by pllscore, in one line
        )
    finally:
        if before is not None and backend.encode_special_tokens != before:
            backend.encode_special_tokens = before


def literal_specials(ids: Iterable[int], word_ids: Iterable[int | None], specials: frozenset[int]) -> list[int]:
    """Positions of a text's own tokens (word id not None) whose id is a special token's."""
    return [j for j, (i, w) in enumerate(zip(ids, word_ids)) if w is not None and i in specials]


def check_token_types(type_ids: Any, name: str) -> None:
    """Refuse a tokenizer that gives one text token type ids other than 0 (Funnel, XLNet).

    pllscore runs models without token types, which equals all zeros: exact for BERT-style
    tokenizers, wrong for these.
    """
    rows = type_ids if type_ids is not None else []
    if rows and not isinstance(rows[0], (list, tuple)):
        rows = [rows]
    for row in rows:
        if any(int(t) != 0 for t in row):
            raise ModelError(
                f"the tokenizer of {name!r} gives a single text token type ids other than 0 "
                f"({[int(t) for t in row][:6]}..., Funnel/XLNet style), but pllscore runs the model without token "
                "types, so its scores would be wrong; use a model whose tokenizer gives a single text type 0 "
                "(BERT, RoBERTa, ELECTRA, GPT-2, Llama, ...)"
            )
