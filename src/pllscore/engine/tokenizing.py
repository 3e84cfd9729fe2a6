"""Tokenizer helpers that keep a text's characters text, and the token-type check done at load time.

A literal ``[MASK]`` or ``<|endoftext|>`` in a text is never read as the special token: the
text is encoded with special-token matching off, and where the tokenizer's own vocabulary lists
special tokens as pieces, with a copy that cannot find them (:func:`text_only_tokenizer`).
"""

from __future__ import annotations

import copy
import json
import weakref
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from pllscore.errors import ModelError

__all__ = [
    "Tokens",
    "check_token_types",
    "encode_text",
    "literal_specials",
    "special_ids",
    "text_only_tokenizer",
    "tokenize",
]

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


class Tokens(NamedTuple):
    """One text as the tokenizer encodes it (:func:`tokenize`): per token its id, piece, character span in
    the text, word id (None: a special token) and token type id; the names of a ``tokenizers.Encoding``."""

    ids: list[int]
    tokens: list[str]
    offsets: list[tuple[int, int]]
    word_ids: list[int | None]
    type_ids: list[int]


def tokenize(tokenizer: Any, texts: list[str], add_special_tokens: bool) -> Sequence[Tokens]:
    """Per text, its tokens as :func:`encode_text` gives them: a :class:`Tokens`, or the backend's own
    ``tokenizers.Encoding``, which has the same five attributes and makes each list when it is read.

    Where the tokenizer is transformers' plain fast tokenizer (no class of its own that changes how texts
    are encoded, no truncation or padding set), its Rust backend encodes the batch directly, with special-token
    matching off as in :func:`encode_text`, and the encodings are handed over as they are: no
    ``BatchEncoding`` of per-text dictionaries, and no list is made before it is needed (a caller that reads
    a text's lists one text at a time lets them go young). Any other tokenizer goes through :func:`encode_text`.
    """
    backend = _plain_backend(tokenizer)
    if backend is None:
        enc = encode_text(tokenizer, texts, add_special_tokens)
        types = enc.get("token_type_ids")
        return [
            Tokens(ids, enc.tokens(i), offsets, enc.word_ids(i), types[i] if types is not None else [0] * len(ids))
            for i, (ids, offsets) in enumerate(zip(enc["input_ids"], enc["offset_mapping"]))
        ]
    before = backend.encode_special_tokens
    backend.encode_special_tokens = True
    try:
        return backend.encode_batch(texts, add_special_tokens=add_special_tokens, is_pretokenized=False)  # type: ignore[no-any-return]
    finally:
        backend.encode_special_tokens = before


def _plain_backend(tokenizer: Any) -> Any | None:
    """The Rust tokenizer of a transformers fast tokenizer whose ``__call__`` only runs it, or None.

    None for transformers before 5 (another class), for a class that encodes in its own way (LayoutLM,
    LUKE, TAPAS, ...: they override ``__call__`` or ``_encode_plus``), for one that switches modes around
    a call (source and target languages of a translation tokenizer), and while the backend has truncation
    or padding set (``__call__`` would switch them off first).
    """
    try:
        from transformers.tokenization_utils_base import PreTrainedTokenizerBase
        from transformers.tokenization_utils_tokenizers import TokenizersBackend
    except ImportError:
        return None
    cls = type(tokenizer)
    if not isinstance(tokenizer, TokenizersBackend) or hasattr(tokenizer, "_switch_to_input_mode"):
        return None
    if cls.__call__ is not PreTrainedTokenizerBase.__call__ or cls._encode_plus is not TokenizersBackend._encode_plus:
        return None
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is None or backend.truncation is not None or backend.padding is not None:
        return None
    return backend


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
