"""What the BabyLM pipeline reads from a model for one sentence task, per backend (pure logic, no torch).

In: a task's items (each a few sentences, split into prefix and completion) and the tokenizer's encoding of
each text. Out: the distinct :class:`Read` s a model must run (one input, an optional decoder input, the
positions whose next-token distribution is read and the token read there) and, per sentence, which reads
it sums. Identical reads (the same masked copy in two items, the same sentence twice) run once.

The official pipeline's conventions, reproduced here (docs/guide/babylm-conventions.md says what each
means):

- ``causal``: the sentence with the tokenizer's special tokens; the tokens whose character span ends
  after the completion starts are scored, each given the tokens before it; the first token never is
  (nothing is added before it when the tokenizer adds no BOS).
- ``mlm``: one copy per completion token (those ending after the completion starts), that token masked
  and read at its own position (PLL-original over the completion).
- ``mntp``: the same copies, each token read one position before its mask; a first token is skipped
  when the tokenizer has neither CLS nor BOS.
- ``enc_dec_mask``: the ``mlm`` copies as encoder inputs, the decoder given ``[BOS, MASK]`` (or the first
  extra special token alone when there is no BOS), the masked token read at the decoder's last position.
- ``enc_dec_prefix``: the encoder reads ``[CLS] prefix [MASK] [EOS]`` (each special where the tokenizer has
  one), the decoder ``[BOS, MASK] + completion[:-1]``, every completion token read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pllscore.settings.babylm import BABYLM_BACKENDS

__all__ = [
    "BACKENDS",
    "PADDED_SUMS",
    "Item",
    "Read",
    "ReadPlan",
    "Specials",
    "official_widths",
    "overlapping",
    "plan_reads",
]

#: the official pipeline's backends (declared once, with the command's settings)
BACKENDS = BABYLM_BACKENDS

#: a text -> (token ids, character offsets), as the tokenizer gives them
Encode = Callable[[str], tuple[list[int], list[tuple[int, int]]]]


@dataclass(frozen=True)
class Item:
    """One item of a sentence task: its candidate sentences (the right one first), how each splits into a
    prefix and the scored completion, and what the reports group it by."""

    sentences: tuple[str, ...]
    prefixes: tuple[str | None, ...]
    completions: tuple[str, ...]
    uid: str
    #: (grouping, value) in the official order, e.g. ("field", "syntax"), ("UID", "passive_2"), ...
    groups: tuple[tuple[str, str], ...]
    #: the human share of the first sentence (WUG tasks)
    ratio: float | None = None
    #: what a prediction names: the completions, or the whole sentences (COMPS)
    predict_sentences: bool = False
    #: file:line, for messages
    where: str = ""

    @property
    def shown(self) -> tuple[str, ...]:
        """The text a prediction shows for each candidate."""
        return self.sentences if self.predict_sentences else self.completions


@dataclass(frozen=True)
class Read:
    """One forward pass's worth of reading: ``ids`` (the encoder's input for an encoder-decoder), the
    decoder's input if any, and at each position of ``at`` (in the decoder's output if there is one) the
    log-probability of the token in ``targets``."""

    ids: tuple[int, ...]
    decoder: tuple[int, ...] | None
    at: tuple[int, ...]
    targets: tuple[int, ...]

    @property
    def length(self) -> int:
        """Padded tokens the read costs."""
        return len(self.ids) + len(self.decoder or ())


@dataclass(frozen=True)
class Specials:
    """The special token ids the backends need (None: the tokenizer has none)."""

    mask: int | None = None
    bos: int | None = None
    cls: int | None = None
    eos: int | None = None
    extra: int | None = None  # the first additional special token (T5's <extra_id_0>)


@dataclass(frozen=True)
class ReadPlan:
    """The distinct reads of a task, per item and sentence the indices of the reads it sums, and the width of
    the row the official code sums it in (its float32 rounding depends on it: see :func:`official_widths`)."""

    reads: tuple[Read, ...]
    sentences: tuple[tuple[tuple[int, ...], ...], ...]
    widths: tuple[tuple[int, ...], ...] = ()


#: the backends whose official sums run over rows padded to their batch's longest
PADDED_SUMS = ("causal", "enc_dec_prefix")


def _own_width(backend: str, reads: Sequence[Read], used: Sequence[int]) -> int:
    if backend == "causal":  # one row per sentence: a place for every token after the first
        return max(len(reads[used[0]].ids) - 1, 0) if used else 0
    return sum(len(reads[r].targets) for r in used)


def official_widths(
    backend: str, reads: Sequence[Read], sentences: Sequence[Sequence[Sequence[int]]], batch_size: int = 64
) -> tuple[tuple[int, ...], ...]:
    """Per item and sentence, the length of the row the official code sums its log-probabilities over.

    ``mlm``, ``mntp`` and ``enc_dec_mask`` sum a sentence's own reads (a slice of exactly that many).
    ``causal`` and ``enc_dec_prefix`` sum a row of their batch's padded width (zeros where nothing is read):
    the items go in batches of ``batch_size`` in the data's order (the official ``--batch_size``, 64),
    and a sentence's row is as wide as the widest of the batch's sentences of the same index. torch's sum
    of a row rounds differently with its width, which decides near-ties.
    """
    own = [[_own_width(backend, reads, used) for used in item] for item in sentences]
    if backend not in PADDED_SUMS:
        return tuple(tuple(row) for row in own)
    out: list[tuple[int, ...]] = []
    for start in range(0, len(own), batch_size):
        block = own[start : start + batch_size]
        widest: dict[int, int] = {}
        for row in block:
            for k, n in enumerate(row):
                widest[k] = max(widest.get(k, 0), n)
        out.extend(tuple(widest[k] for k in range(len(row))) for row in block)
    return tuple(out)


def overlapping(offsets: Sequence[tuple[int, int]], start_char: int, first: int = 0) -> list[int]:
    """Indices (from ``first``) of the tokens whose span ends after ``start_char``: the official test of a
    token belonging to the completion (special tokens, spanning (0, 0), never do)."""
    return [i for i in range(first, len(offsets)) if offsets[i][1] > start_char]


def _causal(sentence: str, completion: str, encode: Encode) -> list[Read]:
    ids, offsets = encode(sentence)
    if not ids:
        return []
    # the official start shifts by the first token's start (0 for a text that starts with its first token)
    start = len(sentence) - len(completion) + offsets[0][0]
    scored = [i for i in overlapping(offsets, start) if i >= 1]
    return [Read(tuple(ids), None, tuple(i - 1 for i in scored), tuple(ids[i] for i in scored))]


def _masked_copies(sentence: str, completion: str, encode: Encode, mask: int, shift: int, first: int) -> list[Read]:
    ids, offsets = encode(sentence)
    out = []
    for i in overlapping(offsets, len(sentence) - len(completion), first):
        copy = list(ids)
        copy[i] = mask
        # an MNTP read of the first token (a tokenizer with CLS/BOS that does not add it) wraps to the last
        # position, as the official index -1 does (there, the padded batch's last; here, the text's own)
        at = i - shift if i - shift >= 0 else len(ids) - 1
        out.append(Read(tuple(copy), None, (at,), (ids[i],)))
    return out


def _enc_dec_mask(sentence: str, completion: str, encode: Encode, specials: Specials) -> list[Read]:
    mask = _mask(specials)
    if specials.bos is not None:
        decoder: tuple[int, ...] = (specials.bos, mask)
    elif specials.extra is not None:
        decoder = (specials.extra,)
    else:
        raise ValueError("the tokenizer has neither a BOS token nor an additional special token")
    copies = _masked_copies(sentence, completion, encode, mask, 0, 0)
    return [Read(c.ids, decoder, (len(decoder) - 1,), c.targets) for c in copies]


def _enc_dec_prefix(prefix: str | None, completion: str, encode_plain: Encode, specials: Specials) -> list[Read]:
    mask = _mask(specials)
    bos = specials.bos if specials.bos is not None else specials.extra
    if bos is None:
        raise ValueError("the tokenizer has neither a BOS token nor an additional special token")
    source = encode_plain(prefix)[0] if prefix is not None else []
    cls = [specials.cls] if specials.cls is not None else []
    eos = [specials.eos] if specials.eos is not None else []
    target = encode_plain(completion)[0]
    decoder = (bos, mask, *target[:-1])
    return [Read((*cls, *source, mask, *eos), decoder, tuple(range(1, len(target) + 1)), tuple(target))]


def _mask(specials: Specials) -> int:
    mask = specials.mask if specials.mask is not None else specials.extra
    if mask is None:
        raise ValueError("the tokenizer has neither a mask token nor an additional special token")
    return mask


def sentence_reads(
    backend: str, prefix: str | None, sentence: str, completion: str, encode: Encode, plain: Encode, specials: Specials
) -> list[Read]:
    """The reads one sentence sums under ``backend`` (``encode``: with the tokenizer's special tokens;
    ``plain``: without)."""
    if backend == "causal":
        return _causal(sentence, completion, encode)
    if backend in ("mlm", "mntp"):
        # MNTP reads a token one position before its mask; without CLS/BOS the first token has no such place
        first = 1 if backend == "mntp" and specials.cls is None and specials.bos is None else 0
        return _masked_copies(sentence, completion, encode, _mask(specials), int(backend == "mntp"), first)
    if backend == "enc_dec_mask":
        return _enc_dec_mask(sentence, completion, encode, specials)
    if backend == "enc_dec_prefix":
        return _enc_dec_prefix(prefix, completion, plain, specials)
    raise ValueError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")


def plan_reads(
    items: Sequence[Item],
    backend: str,
    encode: Encode,
    plain: Encode,
    specials: Specials,
    *,
    official_batch_size: int = 64,
) -> ReadPlan:
    """Every item's reads under ``backend``, each distinct read once, and the official sums' widths.

    ``enc_dec_prefix`` pairs each sentence with the prefix of the same index and stops at the shorter
    list, as the official pipeline does (so a WUG item, with one prefix, gets one sentence there).
    """
    index: dict[Read, int] = {}
    per_item = []
    for item in items:
        rows = []
        if backend == "enc_dec_prefix":
            texts = list(zip(item.prefixes, item.sentences, item.completions))
        else:
            texts = [(p, s, c) for p, s, c in zip((None,) * len(item.sentences), item.sentences, item.completions)]
        for prefix, sentence, completion in texts:
            reads = sentence_reads(backend, prefix, sentence, completion, encode, plain, specials)
            rows.append(tuple(index.setdefault(r, len(index)) for r in reads))
        per_item.append(tuple(rows))
    reads = tuple(index)
    return ReadPlan(reads, tuple(per_item), official_widths(backend, reads, per_item, official_batch_size))
