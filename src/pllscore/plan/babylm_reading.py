"""The model reads of the BabyLM reading task under the official pipeline's convention (pure logic, no torch).

In: (context, word) pairs, the tokenizer and the backend. Out: a :class:`ReadPlan`: the distinct model
inputs, the distinct reads ``(input, position, target id)``, and for each pair the reads whose
probabilities multiply into the word's probability.

The convention (evaluation-pipeline-2025, ``reading/evaluation_functions.py``), per pair:

- the word is tokenised alone, without special tokens and without its leading space;
- its first token is read after the context string; each later token ``t`` is read after the
  context string with the *decoded* earlier tokens glued on without a space, and its target is the
  first token of ``t`` decoded and tokenised again (so BERT's ``##ter`` is read as ``#``);
- the input for a context string ``s``:

  - ``causal``: ``tokenizer(s)`` with the tokenizer's special tokens, read at the last position;
  - ``mlm``: ``tokenizer(s + 3 masks)``, read at the first mask (the position 3 from the end, or 4
    when the tokenizer closes the text with a special token);
  - ``mntp``: the same input, read one position earlier (the last token before the masks);
  - ``enc_dec_*``: the encoder reads ``[CLS] s <mask> [EOS]`` (each special token where the tokenizer
    has one; the mask is the first additional special token where there is no mask token), the
    decoder its start token (the BOS, else the first additional special token), read at position 0.

A causal LM's read at the last position of a token sequence is the same as its read at that position of
any sequence that extends it, so :func:`plan_reads` keeps only the sequences no other extends; the others
are read inside them. The other backends see the whole input, so each distinct input is its own row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pllscore.errors import InputError, ModelError
from pllscore.settings.babylm import BABYLM_BACKENDS

__all__ = ["BACKENDS", "MASKS_APPENDED", "ReadPlan", "decoder_start", "plan_reads", "reading_backend"]

#: the backends of the BabyLM pipeline
BACKENDS = BABYLM_BACKENDS  # declared once, with the command's settings
#: masks the official pipeline appends after the context of a masked (and MNTP) LM
MASKS_APPENDED = 3


@dataclass(frozen=True)
class ReadPlan:
    """The distinct inputs and reads of a set of (context, word) pairs."""

    backend: str  # "causal", "mlm", "mntp" or "enc_dec" (both encoder-decoder backends read alike)
    inputs: tuple[tuple[int, ...], ...]  # the model's rows (encoder rows for enc_dec)
    reads: tuple[tuple[int, int, int], ...]  # (input row, position, target token id)
    pairs: tuple[tuple[int, ...], ...]  # per pair, its chained reads (indices into ``reads``)
    decoder_start: int | None = None  # enc_dec: the decoder's one input token

    @property
    def n_inputs(self) -> int:
        """Rows the model runs."""
        return len(self.inputs)


def reading_backend(backend: str) -> str:
    """The reading backend of a BabyLM backend: both encoder-decoder backends read as ``enc_dec``."""
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return "enc_dec" if backend.startswith("enc_dec") else backend


def plan_reads(pairs: Sequence[tuple[str, str]], tokenizer: Any, backend: str) -> ReadPlan:
    """The reads of ``pairs`` (context string, word) under the official convention (see the module)."""
    kind = reading_backend(backend)
    make_input = _input_maker(tokenizer, kind)
    chains = [_chain(tokenizer, context, word) for context, word in pairs]
    contexts = list(dict.fromkeys(s for chain in chains for s, _ in chain))
    encoded = {s: make_input(s) for s in contexts}
    rows, where = _rows(kind, [ids for ids, _ in encoded.values()])
    place = {s: (where[i][0], where[i][1] + pos) for i, (s, (_, pos)) in enumerate(encoded.items())}
    reads: dict[tuple[int, int, int], int] = {}
    out = []
    for chain in chains:
        keys = [(*place[s], target) for s, target in chain]
        out.append(tuple(reads.setdefault(k, len(reads)) for k in keys))
    start = decoder_start(tokenizer) if kind == "enc_dec" else None
    return ReadPlan(kind, tuple(rows), tuple(reads), tuple(out), start)


def _chain(tokenizer: Any, context: str, word: str) -> list[tuple[str, int]]:
    """The (context string, target id) of each token of ``word``, chained as the convention does."""
    target = _ids(tokenizer, word)
    if not target:
        raise InputError(f"the word {word!r} has no tokens under this tokenizer; drop its row from the reading data")
    chain = [(context, target[0])]
    s = context + tokenizer.decode(target[0])
    for token in target[1:]:
        piece = tokenizer.decode(token)
        again = _ids(tokenizer, piece)
        if not again:
            raise InputError(
                f"token {token} of the word {word!r} decodes to {piece!r}, which has no tokens of its own: the "
                "official convention cannot read it; drop the word's row from the reading data"
            )
        chain.append((s, again[0]))
        s += piece
    return chain


def _ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def _input_maker(tokenizer: Any, kind: str) -> Any:
    """A function: context string -> (input ids, read position from the start)."""
    if kind == "causal":
        return lambda s: _at(list(tokenizer(s)["input_ids"]), -1, s)
    if kind in ("mlm", "mntp"):
        mask, mask_id = tokenizer.mask_token, tokenizer.mask_token_id
        if mask is None:
            raise ModelError(f"the {kind} backend appends mask tokens, and this tokenizer has none; use causal")
        back = MASKS_APPENDED + (0 if kind == "mlm" else 1)

        def masked(s: str) -> tuple[list[int], int]:
            ids = list(tokenizer(s + mask * MASKS_APPENDED)["input_ids"])
            return _at(ids, -back if ids[-1] == mask_id else -(back + 1), s)

        return masked
    lead = [] if tokenizer.cls_token is None else [tokenizer.cls_token_id]
    tail = [_mask_id(tokenizer)] + ([] if tokenizer.eos_token_id is None else [tokenizer.eos_token_id])
    return lambda s: (lead + _ids(tokenizer, s) + tail, 0)


def _at(ids: list[int], back: int, s: str) -> tuple[list[int], int]:
    """``ids`` and the position ``back`` from the end, counted from the start."""
    if len(ids) + back < 0:
        raise InputError(f"the context {s!r} is too short for the backend's read position ({back})")
    return ids, len(ids) + back


def _specials(tokenizer: Any) -> list[str]:
    """The tokenizer's additional special tokens (transformers 4's name, and 5's)."""
    for name in ("additional_special_tokens", "extra_special_tokens"):
        found = getattr(tokenizer, name, None)
        if isinstance(found, (list, tuple)) and found:
            return [str(t) for t in found]
    return []


def _mask_id(tokenizer: Any) -> int:
    if tokenizer.mask_token is not None:
        return int(tokenizer.mask_token_id)
    specials = _specials(tokenizer)
    if not specials:
        raise ModelError(
            "the enc_dec backends put a mask token after the context, and this tokenizer has neither a mask token "
            "nor additional special tokens (T5's <extra_id_0>); set its mask_token"
        )
    return int(tokenizer.convert_tokens_to_ids(specials[0]))


def decoder_start(tokenizer: Any) -> int:
    """The encoder-decoder reads' decoder token: the BOS, else the first additional special token (its first id)."""
    token = tokenizer.bos_token
    if token is None:
        specials = _specials(tokenizer)
        if not specials:
            raise ModelError(
                "the enc_dec backends start the decoder with the BOS token, else the first additional special "
                "token, and this tokenizer has neither; set its bos_token"
            )
        token = specials[0]
    ids = _ids(tokenizer, token)
    if not ids:
        raise ModelError(f"the decoder's start token {token!r} has no token ids under this tokenizer")
    return ids[0]  # the read is at the decoder's first position, which sees its first token only


def _rows(kind: str, seqs: list[list[int]]) -> tuple[list[tuple[int, ...]], list[tuple[int, int]]]:
    """The model's rows and, per sequence, (its row, the row position of its first token).

    Causal LMs: a sequence that another extends is read inside the longest that does (offset 0). Others:
    each distinct sequence once.
    """
    distinct = list(dict.fromkeys(tuple(s) for s in seqs))
    if kind != "causal":
        index = {s: i for i, s in enumerate(distinct)}
        return distinct, [(index[tuple(s)], 0) for s in seqs]
    # in lexicographic order every extension of a sequence comes right after it
    ordered = sorted(distinct)
    rows: list[tuple[int, ...]] = []
    host: dict[tuple[int, ...], int] = {}
    for i in range(len(ordered) - 1, -1, -1):
        s = ordered[i]
        after = ordered[i + 1] if i + 1 < len(ordered) else None
        if after is not None and after[: len(s)] == s:
            host[s] = host[after]
        else:
            host[s] = len(rows)
            rows.append(s)
    return rows, [(host[tuple(s)], 0) for s in seqs]
