"""Model and tokenizer from a Hub name, a local folder or a GGUF file; masked, causal or seq2seq from the config.

:func:`load_pretrained` is the one entry point: a GGUF file (or a folder holding one) goes to
:mod:`pllscore.engine.gguf`, anything else to transformers' Auto classes here. Every failure of
transformers or the file system becomes a one-line :class:`ModelError`, and so does a checkpoint
that would score with weights transformers had to initialise at random (a classifier or a bare
encoder loaded as a masked LM, an ELECTRA discriminator).

What both loaders share (kinds, device, dtype) is :mod:`pllscore.engine.models`; the tokenizer
helpers that keep a text's characters text are :mod:`pllscore.engine.tokenizing`. Both are
re-exported here under their old names.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator
from typing import Any

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoModelForSeq2SeqLM, AutoTokenizer

from pllscore.engine.gguf import find_gguf, load_gguf
from pllscore.engine.models import (
    Kind,
    Loaded,
    check_kind,
    detect_kind,
    dtype_keyword,
    missing_weights,
    model_kind,
    one_line,
    resolve_device,
    resolve_dtype,
    weights_dtype,
)
from pllscore.engine.placement import input_device, placement_options
from pllscore.engine.tokenizing import (
    check_token_types,
    encode_text,
    literal_specials,
    special_ids,
    text_only_tokenizer,
)
from pllscore.errors import InputError, ModelError

__all__ = [
    "Kind",
    "Loaded",
    "check_token_types",
    "detect_kind",
    "encode_text",
    "fast_tokenizer",
    "literal_specials",
    "load_pretrained",
    "max_input_length",
    "model_not_found",
    "resolve_device",
    "resolve_dtype",
    "special_ids",
    "text_only_tokenizer",
]

# models whose position ids start after the padding index, so two positions are unusable
_OFFSET_POSITIONS = {"roberta", "xlm-roberta", "camembert", "xlm-roberta-xl", "data2vec-text", "longformer"}


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


def model_not_found(name: str, e: BaseException) -> ModelError:
    """The error for a model whose config cannot be read: a broken folder, a missing path, or an unknown name."""
    if os.path.isdir(name) and not os.path.isfile(os.path.join(name, "config.json")):
        return ModelError(
            f"model folder {name!r} has no config.json; give the folder a transformers model was saved to "
            "(save_pretrained writes config.json), a .gguf file or a Hub name"
        )
    if os.path.isdir(name):
        return ModelError(f"cannot load model from folder {name!r}: {one_line(e)}")
    if os.path.sep in name and not os.path.exists(name) and name.startswith((".", os.path.sep, "~")):
        return ModelError(f"model folder {name!r} does not exist; check the path")
    return ModelError(
        f"model {name!r} not found: it is not a local folder, not in the Hugging Face cache, and could not be "
        "fetched from the Hub (offline or misspelled?); pass the path of a downloaded model folder"
    )


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a model loads: a tokenizer's vocabulary (Gemma's
    262k tokens) and a checkpoint's index make millions of objects, and each full collection walks them
    all (a cached Gemma-3 load: 6.8 s with it, 3-5 s without). Nothing a load makes is cyclic garbage
    worth collecting before it returns; the collector is put back as it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextlib.contextmanager
def _weights_bar_hidden() -> Iterator[None]:
    """transformers' own progress bars ("Loading weights") off while a model loads, put back as they were after;
    the Hub's download bars are huggingface_hub's and stay. The command line turns both off for the whole run."""
    from transformers.utils import logging as hf_logging

    was = getattr(hf_logging, "_tqdm_active", None)
    if was is None:  # pragma: no cover - a transformers without the switch
        yield
        return
    hf_logging._tqdm_active = False
    try:
        yield
    finally:
        hf_logging._tqdm_active = was


def load_pretrained(
    name_or_path: str | os.PathLike[str],
    *,
    device: str | torch.device = "auto",
    dtype: str | torch.dtype | None = None,
    revision: str | None = None,
    kind: Kind | None = None,
    trust_remote_code: bool = False,
    cache: bool = True,
    autocast: bool = False,
    device_map: str | dict[str, Any] | None = None,
    max_memory: str | dict[Any, Any] | None = None,
    offload_folder: str | os.PathLike[str] | None = None,
) -> Loaded:
    """Load a model and its fast tokenizer, in eval mode, on ``device``, its weights in ``dtype``.

    ``name_or_path`` is a GGUF file or a folder holding one (read by :mod:`pllscore.engine.gguf`;
    ``cache``: keep its converted weights in the user cache), a model folder, or a Hub name.
    ``autocast``: the weights stay float32 and the scorer autocasts to ``dtype`` (bfloat16 or float16).
    ``device_map`` (``"auto"``), ``max_memory``, ``offload_folder``: spread the model over the GPUs, the
    CPU and disk through accelerate instead of putting it on ``device`` (:mod:`pllscore.engine.placement`).
    """
    weights = weights_dtype(dtype, autocast)
    placed = placement_options(device_map, max_memory, offload_folder, device)
    torch_device = resolve_device(device)  # a device this machine lacks is refused before anything loads
    with _collector_paused(), _weights_bar_hidden():
        return _load(name_or_path, torch_device, weights, revision, kind, trust_remote_code, cache, placed)


def _load(
    name_or_path: str | os.PathLike[str],
    torch_device: torch.device,
    weights: torch.dtype,
    revision: str | None,
    kind: Kind | None,
    trust_remote_code: bool,
    cache: bool,
    placed: dict[str, Any],
) -> Loaded:
    """:func:`load_pretrained` with the collector paused; ``weights``: the weights' type; ``placed``: the
    device map's keywords (:func:`~pllscore.engine.placement.placement_options`)."""
    name = os.fspath(name_or_path)
    file = find_gguf(name)
    check_kind(kind)
    if file is not None and revision is not None:
        raise InputError(f"revision={revision!r} names a Hub commit; a GGUF file is local: leave revision out")
    if file is not None:
        if placed:
            raise InputError(
                f"device_map is not available for a GGUF file ({os.path.basename(file)!r}): load it on one device, "
                "in bfloat16 if it does not fit in float32"
            )
        return load_gguf(file, torch_device, kind=kind, cache=cache, dtype=weights)
    common: dict[str, Any] = {"revision": revision, "trust_remote_code": trust_remote_code}
    if not os.path.isdir(name) and not _hub_reachable():
        common["local_files_only"] = True  # offline: use the cache, fail at once if the model is not there
    try:
        config = AutoConfig.from_pretrained(name, **common)
    except (OSError, ValueError, KeyError) as e:
        raise model_not_found(name, e) from e
    chosen, arch = _chosen_kind(config, name, kind)
    tokenizer = fast_tokenizer(name, common)
    loads = model_kind(chosen)  # mntp reads a masked LM
    auto = {"masked": AutoModelForMaskedLM, "causal": AutoModelForCausalLM, "seq2seq": AutoModelForSeq2SeqLM}[loads]
    try:
        model, info = auto.from_pretrained(name, **common, **dtype_keyword(weights), **placed, output_loading_info=True)
    except (OSError, ValueError, KeyError) as e:
        if placed and "offload_folder" in str(e):
            raise ModelError(
                f"{name!r} does not fit in max_memory, so some layers go to disk: give offload_folder= "
                "(--offload-folder DIR) for them, or allow more memory"
            ) from e
        raise ModelError(f"cannot load {name!r} as a {loads} LM: {one_line(e)}") from e
    _check_loaded_weights(model, info, name=name, arch=arch, kind=loads)
    model.eval()
    if placed:  # accelerate placed it (or, when it all fits on the CPU, transformers left it there)
        torch_device = input_device(model)
    else:
        model.to(torch_device)
    return Loaded(
        model=model,
        tokenizer=tokenizer,
        kind=chosen,
        name=name,
        revision=revision or getattr(config, "_commit_hash", None),
        device=torch_device,
        placement=placed,
    )


def _chosen_kind(config: Any, name: str, kind: Kind | None) -> tuple[Kind, str]:
    """The kind to load (``kind`` if it fits the config, else the config's own) and the architecture's name."""
    detected = detect_kind(config)
    arch = ", ".join(getattr(config, "architectures", None) or [config.model_type])
    if kind is not None and detected is not None and model_kind(kind) != detected:
        raise ModelError(
            f"{name!r} is a {detected} LM ({arch}), not a {model_kind(kind)} one; it cannot be used for {kind} "
            f"scoring: load it with kind={detected!r} or leave kind out"
        )
    chosen = kind or detected
    if chosen is None:
        raise ModelError(
            f"{name!r} ({arch}) is neither a masked, a causal nor an encoder-decoder language model; pllscore needs "
            "a model with a language-modelling head (pass kind='masked', 'causal' or 'seq2seq' to force one)"
        )
    return chosen, arch


def fast_tokenizer(name: str, common: dict[str, Any]) -> Any:
    """The model's fast tokenizer, checked to give a single text token type 0 (``common``: ``from_pretrained``'s
    keywords: ``revision``, ``trust_remote_code``, ...); one-line :class:`ModelError` where it cannot be used."""
    try:
        tokenizer = AutoTokenizer.from_pretrained(name, use_fast=True, **common)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ModelError(f"cannot load the tokenizer of {name!r}: {one_line(e)}") from e
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(
            f"{name!r} has only a slow tokenizer ({type(tokenizer).__name__}); pllscore needs a fast one "
            "(tokenizer.json) for word ids and offsets: save one with the `tokenizers` library "
            "or use a model that has it"
        )
    check_token_types(tokenizer("a", return_token_type_ids=True).get("token_type_ids"), name)
    return tokenizer


_HEADS = {
    "masked": "a masked-LM head (a *ForMaskedLM model such as bert-base-cased or roberta-base)",
    "causal": "a causal-LM head (a *ForCausalLM or *LMHeadModel model such as gpt2)",
    "seq2seq": "a sequence-to-sequence LM head (a *ForConditionalGeneration model such as t5-small or bart-base)",
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
        raise ModelError(f"cannot load {name!r} as a {kind} LM: {one_line(ValueError(errors[0]))}")
    missing = missing_weights(info)
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
