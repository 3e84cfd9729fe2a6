"""GGUF files as models: ``pllscore.load("model.gguf")``.

A GGUF file holds a whole model: its config and tokenizer as metadata, its weights as
(usually quantized) tensors. transformers reads it (``from_pretrained(folder, gguf_file=name)``)
and dequantizes the weights to float32, so a GGUF model is scored exactly as any float32 model
of its architecture; what the quantization changed is in the weights themselves. transformers
supports decoder architectures (Llama, Mistral, Qwen2, Gemma 2/3, Phi-3, GPT-2, ...), which
pllscore scores as causal LMs, and T5 and UMT5 (Flan-T5 style, gated feed-forward), which it scores
as encoder-decoder (seq2seq) LMs; a file of any other architecture is refused in one line.

A model is read from a GGUF when its name is a file that ends in ``.gguf`` or starts with the
GGUF magic bytes, or a folder that holds exactly one ``.gguf`` file and no ``config.json``.
The file is the model: the scorer's name is its path, and provenance records its name and
SHA-256 (:func:`pllscore.io.provenance.model_identity`). It needs the ``gguf`` package (and
``accelerate``, which transformers uses to load GGUF weights): ``pip install 'pllscore[gguf]'``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

import torch

from pllscore.engine.gguf_reader import shared_parses
from pllscore.engine.models import Kind, Loaded, detect_kind, dtype_keyword, float32_weights, missing_weights, one_line
from pllscore.engine.tokenizing import check_token_types
from pllscore.errors import ModelError
from pllscore.metrics import PLL_KINDS

__all__ = ["GGUF_EXTRA", "convert", "find_gguf", "is_gguf_file", "load_gguf"]

GGUF_EXTRA = "pip install 'pllscore[gguf]'"
_MAGIC = b"GGUF"
# transformers' own floor for reading GGUF files (transformers.utils.import_utils.GGUF_MIN_VERSION)
_MIN_GGUF = "0.10.0"
# one GGUF conversion at a time: shared_parses swaps functions of the gguf module while it runs
_LOCK = threading.Lock()


def is_gguf_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a file named ``*.gguf`` or one that starts with the GGUF magic bytes."""
    text = os.fspath(path)
    if not os.path.isfile(text):
        return False
    if text.lower().endswith(".gguf"):
        return True
    try:
        with open(text, "rb") as f:
            return f.read(4) == _MAGIC
    except OSError:
        return False


def find_gguf(name: str | os.PathLike[str]) -> str | None:
    """The GGUF file that ``name`` designates, or None when it is not a GGUF model.

    A GGUF file is itself; a folder without ``config.json`` that holds exactly one ``.gguf``
    file is that file. A folder without ``config.json`` that holds several is a
    :class:`ModelError` naming them, and a missing path ending in ``.gguf`` one saying so.
    Anything else (a model folder, a Hub name) is None: not a GGUF model.
    """
    text = os.fspath(name)
    if os.path.isdir(text):
        if os.path.isfile(os.path.join(text, "config.json")):
            return None
        found = sorted(
            e.name for e in os.scandir(text) if e.name.lower().endswith(".gguf") and e.is_file() and e.name[0] != "."
        )
        if len(found) > 1:
            raise ModelError(
                f"folder {text!r} holds {len(found)} GGUF files ({', '.join(found)}); pass the path of the one to load"
            )
        return os.path.join(text, found[0]) if found else None
    if is_gguf_file(text):
        return text
    if text.lower().endswith(".gguf"):
        raise ModelError(f"GGUF file {text!r} does not exist; check the path")
    return None


def _check_packages() -> None:
    """A one-line ModelError naming the extra when what transformers needs for GGUF is missing."""
    from importlib.metadata import PackageNotFoundError, version

    missing = [m for m in ("gguf", "accelerate") if importlib.util.find_spec(m) is None]
    if missing:
        raise ModelError(
            f"loading a GGUF file needs the {' and '.join(missing)} package{'s' if len(missing) > 1 else ''}: "
            f"{GGUF_EXTRA}"
        )
    try:
        have = version("gguf")
    except PackageNotFoundError:  # importable but not installed as a distribution: trust it
        return
    from packaging.version import InvalidVersion, Version

    try:
        old = Version(have) < Version(_MIN_GGUF)
    except InvalidVersion:
        old = False
    if old:
        raise ModelError(f"loading a GGUF file needs gguf>={_MIN_GGUF}, but gguf {have} is installed: {GGUF_EXTRA}")


@contextlib.contextmanager
def _alone(path: str) -> Iterator[tuple[str, str]]:
    """``(folder, file name)`` to hand transformers: a private folder holding only a link to the file.

    transformers also reads ``tokenizer_config.json`` and ``generation_config.json`` from the
    folder it is given, so a GGUF file that sits beside another model's files would get them
    mixed in. Where no link can be made (Windows without the right), the file's own folder.
    """
    real = os.path.abspath(path)
    with tempfile.TemporaryDirectory(prefix="pllscore-gguf-") as tmp:
        link = os.path.join(tmp, os.path.basename(real))
        try:
            os.symlink(real, link)
        except (OSError, NotImplementedError):
            yield os.path.dirname(real), os.path.basename(real)
        else:
            yield tmp, os.path.basename(real)


def load_gguf(
    path: str | os.PathLike[str],
    device: torch.device,
    *,
    kind: Kind | None = None,
    cache: bool = True,
    dtype: torch.dtype = torch.float32,
) -> Loaded:
    """Load a GGUF file (or a folder holding one) as a causal or seq2seq LM with its fast tokenizer, in eval mode.

    Called by :func:`pllscore.engine.loading.load_pretrained`, which has checked ``kind``, the
    device and the dtype as for any model; the weights are ``dtype`` (dequantized to float32 by
    transformers, kept so in the cache, and cast to ``dtype`` as they load).
    ``cache``: load the file's converted model from the user cache, converting it (and keeping
    the result there) when it is not yet (:mod:`pllscore.engine.gguf_cache`); False reads and
    writes nothing there.
    """
    name = os.fspath(path)
    file = find_gguf(name)
    if file is None:
        raise ModelError(f"{name!r} is not a GGUF file nor a folder holding one")
    _check_packages()
    try:
        with open(file, "rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise ModelError(f"cannot read GGUF file {file!r}: {one_line(e)}") from e
    if magic != _MAGIC:
        raise ModelError(f"{file!r} is not a GGUF file: it does not start with the GGUF magic bytes")

    got = None
    key = None
    if cache:
        from pllscore.engine import gguf_cache

        key = gguf_cache.file_key(file)
        entry = gguf_cache.lookup(file, key)
        if entry is not None:
            got = _load_entry(entry, file, kind, dtype)
    fresh = got is None
    if got is None:
        got = convert(file, kind)
        if key is not None:
            gguf_cache.store(file, key, got[0], got[1])
    model, tokenizer, info, arch = got
    missing = missing_weights(info)
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise ModelError(
            f"GGUF file {file!r} ({arch}) lacks {len(missing)} weight(s) of {type(model).__name__} ({shown}), "
            "which would be randomly initialised, so its scores would be meaningless"
        )
    model.config._name_or_path = file
    if fresh and dtype != torch.float32:  # a cache entry loads in ``dtype`` (transformers' own fp32 exceptions kept)
        model.to(dtype)
    model.eval().to(device)
    chosen: Kind = "seq2seq" if getattr(model.config, "is_encoder_decoder", False) else "causal"
    return Loaded(model=model, tokenizer=tokenizer, kind=chosen, name=file, revision=None, device=device)


_FAILURES = (OSError, ValueError, KeyError, TypeError, ImportError, NotImplementedError, AttributeError)
Converted = tuple[Any, Any, dict[str, Any], str]


def convert(file: str, kind: Kind | None = None) -> Converted:
    """``(model, fast tokenizer, loading info, architecture)`` of a GGUF file, read by transformers.

    The file is read once (:func:`pllscore.engine.gguf_reader.shared_parses`); the model is
    float32 and no longer marked as quantized (its weights are plain tensors), so that it saves
    as an ordinary transformers folder.
    """
    import gguf
    from transformers import AutoConfig, AutoTokenizer

    with _LOCK, _alone(file) as (folder, fname), shared_parses():
        common: dict[str, Any] = {"gguf_file": fname, "local_files_only": True}
        try:
            config = AutoConfig.from_pretrained(folder, **common)
            tensors = [t.name for t in gguf.GGUFReader(os.path.join(folder, fname)).tensors]  # shared_parses' reader
        except _FAILURES as e:
            raise ModelError(f"cannot read the GGUF file {file!r}: {one_line(e)}") from e
        chosen, arch = _kind_of(config, file, kind)
        if chosen == "seq2seq":
            _t5_feed_forward(config, tensors)
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder, **common)
        except _FAILURES as e:
            raise ModelError(f"cannot build the tokenizer of GGUF file {file!r}: {one_line(e)}") from e
        _check_tokenizer(tokenizer, file)
        try:
            model, info = _auto(chosen).from_pretrained(
                folder, config=config, **common, **float32_weights(), output_loading_info=True
            )
        except _FAILURES as e:
            raise ModelError(f"cannot load GGUF file {file!r} as a {chosen} LM: {one_line(e)}") from e
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    return model, tokenizer, info, arch


def _load_entry(
    entry: os.PathLike[str], file: str, kind: Kind | None, dtype: torch.dtype = torch.float32
) -> Converted | None:
    """The converted model of ``file`` from its cache entry (a transformers folder), its weights in ``dtype``;
    None (with a note) if it fails."""
    from transformers import AutoConfig, AutoTokenizer

    from pllscore.engine import gguf_cache

    common: dict[str, Any] = {"local_files_only": True}
    try:
        config = AutoConfig.from_pretrained(entry, **common)
        chosen, arch = _kind_of(config, file, kind)
        tokenizer = AutoTokenizer.from_pretrained(entry, **common)
        _check_tokenizer(tokenizer, file)
        model, info = _auto(chosen).from_pretrained(
            entry, config=config, **common, **dtype_keyword(dtype), output_loading_info=True
        )
    except _FAILURES as e:
        gguf_cache.discard(file, f"unreadable ({one_line(e)})")
        return None
    return model, tokenizer, info, arch


def _auto(kind: Kind) -> Any:
    """The transformers auto class that loads a GGUF file of ``kind`` (causal or seq2seq)."""
    import transformers

    return getattr(transformers, {"causal": "AutoModelForCausalLM", "seq2seq": "AutoModelForSeq2SeqLM"}[kind])


def _kind_of(config: Any, file: str, kind: Kind | None) -> tuple[Kind, str]:
    """The kind the file loads as (seq2seq for an encoder-decoder config, else causal) and its architecture.

    A one-line ModelError when the file is a masked LM, holds only an encoder, or ``kind`` says otherwise.
    """
    arch = getattr(config, "model_type", None) or type(config).__name__
    detected = detect_kind(config)
    chosen: Kind = "seq2seq" if detected == "seq2seq" else "causal"
    if detected == "masked" or kind in PLL_KINDS:
        raise ModelError(
            f"{file!r} ({arch}) is read from GGUF as a {chosen} LM; pllscore scores GGUF models by their "
            f"log-likelihood only: load it with kind={chosen!r} or leave kind out"
        )
    encoder = [a for a in getattr(config, "architectures", None) or [] if a.endswith("EncoderModel")]
    if encoder:
        raise ModelError(
            f"{file!r} ({arch}) holds only an encoder ({encoder[0]}); pllscore needs the whole encoder-decoder "
            "model to score texts: use a GGUF file of the full model"
        )
    if kind is not None and kind != chosen:
        raise ModelError(
            f"{file!r} ({arch}) is a {chosen} LM, not a {kind} one: load it with kind={chosen!r} or leave kind out"
        )
    return chosen, arch


def _t5_feed_forward(config: Any, tensors: list[str]) -> None:
    """Give a T5/UMT5 config the feed-forward llama.cpp runs: gated GELU (tanh) when the file has gate weights
    (Flan-T5, T5 v1.1, UMT5), else ReLU (the original T5).

    transformers' GGUF reader always sets ``is_gated_act`` but leaves the activation at T5's default ReLU,
    which is neither (a Flan-T5 file would score as a different model).
    """
    if getattr(config, "model_type", None) not in ("t5", "umt5", "mt5"):
        return
    gated = any(".ffn_gate." in name for name in tensors)
    config.feed_forward_proj = "gated-gelu" if gated else "relu"
    config.dense_act_fn = "gelu_new" if gated else "relu"
    config.is_gated_act = gated


def _check_tokenizer(tokenizer: Any, file: str) -> None:
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(
            f"the tokenizer transformers built from {file!r} is slow ({type(tokenizer).__name__}); "
            "pllscore needs a fast one for word ids and offsets: upgrade transformers"
        )
    check_token_types(tokenizer("a", return_token_type_ids=True).get("token_type_ids"), file)
