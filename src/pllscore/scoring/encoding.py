"""Texts (and contexts) -> token ids and alignments: the checks on texts and the encoding every scorer shares.

In: texts, optionally a context per text (and the scorer's tokenizer and settings). Out: one
:class:`Encoded` per text, whose :class:`~pllscore.plan.align.Alignment` says which positions
are the text's tokens (the ones scored) and how they group into words, with character spans
that index into the text.

A text with a context is encoded as the joint string ``context + sep + text``. Its tokens are
split between context and text as lm-evaluation-harness splits context and continuation
(``TemplateLM._encode_pair`` in ``lm_eval/api/model.py``): the context's trailing whitespace is
moved to the continuation (``n_spaces = len(context) - len(context.rstrip())``), then the whole
string and the stripped context are encoded, and the continuation is the whole's tokens after as
many as the context has (``whole_enc[len(context_enc):]``). Where a token of the whole crosses
the end of the stripped context (it merges context and text characters), the conventions part:
under ``"paper"`` it, and every token after it, belongs to the text, and the model reads the
whole's tokens; under ``"lm-eval"`` the model reads, as lm-eval's does, the context's own
tokens and then the whole's after as many as those (the crossing token is scored only if it
comes after them; text characters before the first scored token are in no token). Context
tokens are never scored nor masked; they keep their place in the sequence (a causal LM's BOS
stays before them).

Words are the tokenizer's (``word_ids()``) unless the user gives others (``words="whitespace"``
or a list of words per text; :mod:`pllscore.plan.words` says which word a token belongs to).
Results follow the user's words; the word-based masked metrics mask by the tokenizer's words
unless ``mask_by="words"``, in which case :attr:`Encoded.alignment` and ``word_ids`` carry the
user's words, so windows of long texts mask by them too.

Two conventions (:data:`CONVENTIONS`) say how a text without a context is read. ``"paper"``
(the default; the convention of the PLL paper's code) encodes the text as given. ``"lm-eval"``
reads it as lm-evaluation-harness reads a continuation of an empty context: ``sep + text``
(lm-eval's ``target_delimiter``, a space), so a byte-level BPE's first token is ``" The"``, not
``"The"``. Spans still index into the text. What a causal LM is conditioned on under each
convention is the scorer's business (its hooks ``_encoding`` and ``_lm_eval_encoding``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from pllscore.engine.tokenizing import Tokens, check_token_types, literal_specials, special_ids, text_only_tokenizer
from pllscore.engine.tokenizing import tokenize as tokenize_texts
from pllscore.errors import InputError, InputTooLongError
from pllscore.plan.align import Span, check_span, restrict
from pllscore.plan.words import assign, regroup, word_spans
from pllscore.scoring.encoded import Encoded
from pllscore.scoring.text_checks import (
    CONVENTIONS,
    LONG_MODES,
    check_contexts,
    check_convention,
    check_long,
    check_texts,
)

__all__ = [
    "CONVENTIONS",
    "LONG_MODES",
    "Encoded",
    "Encodings",
    "NoTokensError",
    "check_contexts",
    "check_convention",
    "check_long",
    "check_span",
    "check_texts",
    "context_size",
    "encode",
    "targets",
]


class NoTokensError(InputError):
    """A text that the tokenizer turns into no token of its own (whitespace that it drops, a text swallowed by
    its context's tokens); ``index`` is its position in the call."""

    def __init__(self, index: int, text: str, after_context: bool) -> None:
        self.index = index
        after = " after its context" if after_context else ""
        super().__init__(f"text {index} ({text!r:.40}) has no tokens{after} after tokenization; remove it")


@dataclass(frozen=True)
class Encodings:
    """Texts encoded once by a scorer (:meth:`pllscore.Scorer.encode`): check them, then score them
    (``scorer.score(encodings)``) without encoding them again.

    Attributes:
        texts: the texts, checked.
        encoded: one :class:`Encoded` per text.
        options: ``long``, ``context``, ``sep``, ``words``, ``word_sep``, ``mask_by`` and ``convention``
            are the options they were encoded with, the scorer's defaults filled in (``context``: one
            string per text, or None: no context; ``words``: a mode, or one list of words per text).
        made_by: what encoded them (the scorer's class, model, length limit and special tokens);
            a scorer scores only encodings made as it makes them.
    """

    texts: Sequence[str]
    encoded: Sequence[Encoded]
    long: str = "error"
    context: Sequence[str] | None = None
    sep: str = " "
    words: str | Sequence[Sequence[str]] = "tokenizer"
    word_sep: str = " "
    mask_by: str = "tokenizer"
    convention: str = "paper"
    made_by: str = field(default="", repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.texts)

    def __repr__(self) -> str:  # a file's encodings are long: their size and options, not their tokens
        context = None if self.context is None else "per text"
        words = self.words if isinstance(self.words, str) else "per text"
        return (
            f"Encodings({len(self)} texts, {self.n_tokens} tokens, long={self.long!r}, context={context!r}, "
            f"sep={self.sep!r}, words={words!r}, word_sep={self.word_sep!r}, mask_by={self.mask_by!r}, "
            f"convention={self.convention!r})"
        )

    @property
    def n_tokens(self) -> int:
        """The number of tokens of all texts, special tokens and contexts included."""
        return sum(len(e.ids) for e in self.encoded)

    def __getitem__(self, rows: slice) -> Encodings:
        """The encodings of texts ``rows`` (a slice), with their contexts and words."""
        if not isinstance(rows, slice):
            raise TypeError(f"Encodings are sliced (encodings[lo:hi]), not indexed by {type(rows).__name__}")
        words = self.words if isinstance(self.words, str) else self.words[rows]
        context = None if self.context is None else self.context[rows]
        return replace(self, texts=self.texts[rows], encoded=self.encoded[rows], context=context, words=words)

    def alike(self) -> tuple[Any, ...]:
        """The options two encodings must share to be scored as one (the per-text ones left out)."""
        mode = self.words if isinstance(self.words, str) else None
        return (self.long, self.sep, mode, self.word_sep, self.mask_by, self.convention, self.made_by)

    @classmethod
    def concat(cls, parts: Sequence[Encodings]) -> Encodings:
        """One :class:`Encodings` of the texts of ``parts``, in order; all made alike with the same options."""
        if not parts:
            raise InputError("no encodings to join")
        first = parts[0]
        if any(p.alike() != first.alike() for p in parts[1:]):
            raise InputError("these encodings were made with different options or scorers; encode them together")
        contexts = None
        if any(p.context is not None for p in parts):
            contexts = [c for p in parts for c in (p.context if p.context is not None else [""] * len(p))]
        words = first.words if isinstance(first.words, str) else [w for p in parts for w in p.words]
        texts = [t for p in parts for t in p.texts]
        encoded = [e for p in parts for e in p.encoded]
        return replace(first, texts=texts, encoded=encoded, context=contexts, words=words)


def encode(
    tokenizer: Any,
    texts: list[str],
    *,
    name: str,
    max_length: int | None,
    add_special_tokens: bool,
    prefix: int | None | Sequence[int | None] = None,
    allow_long: bool = False,
    contexts: Sequence[str] | None = None,
    sep: str = " ",
    words: str | Sequence[Sequence[str]] = "tokenizer",
    word_sep: str = " ",
    mask_by: str = "tokenizer",
    lead_sep: bool = False,
) -> list[Encoded]:
    """Encode ``texts`` as given, one :class:`Encoded` each; with ``contexts``, each text after its context.

    A text is scored as given: a literal ``"[MASK]"`` or ``"<|endoftext|>"`` in it is text, not a
    special token (``split_special_tokens``); a vocabulary that lists special tokens as pieces gets
    a copy that cannot read them from text; a text that still yields one is refused. ``prefix``
    (a causal LM's BOS; or one per text) is put before the ids. ``lead_sep`` is the ``"lm-eval"``
    convention: a text without a context is encoded as ``sep + text``, and one with a context is
    split from it as lm-eval splits (see the module's docstring). A text without tokens of its own
    is a :class:`NoTokensError`. A text longer than
    ``max_length`` is an :class:`InputTooLongError` unless ``allow_long``. ``words`` (checked by
    :func:`pllscore.plan.words.check_words`), ``word_sep`` and ``mask_by``: see the module's docstring.
    """
    ctx = list(contexts) if contexts is not None else [""] * len(texts)
    prefixes = list(prefix) if isinstance(prefix, Sequence) else [prefix] * len(texts)
    # where each text begins in the string encoded, and the context lm-eval's rule encodes
    starts = [len(c) + len(sep) if c or lead_sep else 0 for c in ctx]
    joint = [c + sep + t if c or lead_sep else t for c, t in zip(ctx, texts)]
    stripped = [c.rstrip() for c in ctx]
    toks, used, literal = _tokenize(tokenizer, joint, add_special_tokens, name)
    alone = _contexts_alone(used, stripped)
    n_context = [len(a[0]) for a in alone]
    piece_of = {p: tokenizer.convert_ids_to_tokens(p) for p in dict.fromkeys(prefixes) if p is not None}
    out = []
    for i, text in enumerate(texts):
        if literal is not None and literal[0] == i:  # the errors of a text come in order, this one first
            raise _literal_error(tokenizer, toks[i], i, literal[1], joint[i], starts[i], name)
        t = toks[i]  # each list read once, here
        ids, pieces, offsets, word_ids = t.ids, t.tokens, t.offsets, t.word_ids
        if lead_sep and n_context[i]:  # lm-eval's split: the context's own tokens, then the whole's after as many
            ids, pieces, offsets, word_ids = _lm_eval_split(ids, pieces, offsets, word_ids, alone[i])
        if prefixes[i] is not None:
            ids, pieces = [prefixes[i], *ids], [piece_of[prefixes[i]], *pieces]
            offsets, word_ids = [(0, 0), *offsets], [None, *word_ids]
        if max_length is not None and len(ids) > max_length and not allow_long:
            raise InputTooLongError(i, len(ids), max_length)
        content = [j for j, w in enumerate(word_ids) if w is not None]
        lead = content[0] if content else 0
        trail = len(ids) - 1 - content[-1] if content else 0
        if ctx[i]:
            context_positions = set(content[: context_size(content, offsets, n_context[i], len(stripped[i]))])
            word_ids = [None if j in context_positions else w for j, w in enumerate(word_ids)]
            content = [j for j in content if j not in context_positions]
        if not content:
            raise NoTokensError(i, text, bool(ctx[i]))
        # tuples (see Encoded): thousands of encodings alive do not make the collector walk the whole heap more often
        e = Encoded(
            tuple(ids), tuple(pieces), tuple(offsets), tuple(word_ids), tuple(content), text, starts[i], lead, trail
        )
        user = word_spans(text, words if isinstance(words, str) else words[i], word_sep, index=i)
        out.append(e if user is None else _by_user_words(e, user, mask_by))
    return out


def _tokenize(
    tokenizer: Any, joint: list[str], add_special_tokens: bool, name: str
) -> tuple[Sequence[Tokens], Any, tuple[int, int] | None]:
    """The tokens of the strings ``joint``, the tokenizer that made them, and the first (string, position) whose
    own token is a special token read from its text (None: none is).

    Where some string yields a special token from its text, a copy of the tokenizer that cannot
    read special tokens from text (if the vocabulary allows one) encodes the batch again.
    """
    specials = special_ids(tokenizer)
    toks = tokenize_texts(tokenizer, joint, add_special_tokens)
    literal = _first_literal(toks, specials)
    if literal is not None:
        alt = text_only_tokenizer(tokenizer)
        if alt is not None:
            tokenizer, toks = alt, tokenize_texts(alt, joint, add_special_tokens)
            literal = _first_literal(toks, specials)
    check_token_types(next(([t.type_ids] for t in toks if any(t.type_ids)), None), name)
    return toks, tokenizer, literal


def _first_literal(toks: Sequence[Tokens], specials: frozenset[int]) -> tuple[int, int] | None:
    """The first (string, position) of ``toks`` whose own token (word id not None) has a special token's id."""
    for i, t in enumerate(toks):
        ids = t.ids
        if not specials.isdisjoint(ids):
            literal = literal_specials(ids, t.word_ids, specials)
            if literal:
                return i, literal[0]
    return None


#: a stripped context encoded alone, without special tokens: its ids, pieces and character offsets
_Alone = tuple[list[int], list[str], list[Span]]


def _contexts_alone(tokenizer: Any, stripped: list[str]) -> list[_Alone]:
    """Per text, its stripped context encoded alone, without special tokens (no context: no tokens)."""
    with_context = [i for i, c in enumerate(stripped) if c]
    out: list[_Alone] = [([], [], [])] * len(stripped)
    if with_context:
        ctx_toks = tokenize_texts(tokenizer, [stripped[i] for i in with_context], False)
        for k, i in enumerate(with_context):
            out[i] = (ctx_toks[k].ids, ctx_toks[k].tokens, ctx_toks[k].offsets)
    return out


def _lm_eval_split(
    ids: list[int], pieces: list[str], offsets: list[Span], word_ids: list[int | None], alone: _Alone
) -> tuple[list[int], list[str], list[Span], list[int | None]]:
    """A joint encoding as lm-eval's ``_encode_pair`` splits it (``context_enc + whole_enc[len(context_enc):]``).

    Where the joint's first content tokens are the context's own (nothing crosses the join), it is
    returned as it is. Otherwise they are replaced by the context's own tokens and the text keeps
    the joint's tokens after as many as the context has: a token that crosses the join is scored
    only when it comes after them, and the text's characters before it are in no token.
    """
    c_ids, c_pieces, c_offsets = alone
    content = [j for j, w in enumerate(word_ids) if w is not None]
    k = len(c_ids)
    if [ids[j] for j in content[:k]] == c_ids or not content:
        return ids, pieces, offsets, word_ids
    lead, end, rest = content[0], content[-1] + 1, content[k:]
    context_words: list[int | None] = [-1] * k  # content until the caller makes them the context's (None)
    return (
        [*ids[:lead], *c_ids, *(ids[j] for j in rest), *ids[end:]],
        [*pieces[:lead], *c_pieces, *(pieces[j] for j in rest), *pieces[end:]],
        [*offsets[:lead], *c_offsets, *(offsets[j] for j in rest), *offsets[end:]],
        [*word_ids[:lead], *context_words, *(word_ids[j] for j in rest), *word_ids[end:]],
    )


def _literal_error(tokenizer: Any, toks: Tokens, i: int, pos: int, joint: str, start: int, name: str) -> InputError:
    """The error for text ``i`` whose position ``pos`` is a special token read from its (joint) string."""
    a, b = toks.offsets[pos]
    token = toks.ids[pos]
    where = f"text {i}" if a >= start else f"the context of text {i}"
    return InputError(
        f"{where} contains {joint[a:b]!r}, which the tokenizer of {name!r} reads only as its special "
        f"token {tokenizer.convert_ids_to_tokens(token)!r}; pllscore scores text as given, "
        "so reword or remove it"
    )


def _by_user_words(e: Encoded, user: Sequence[Span], mask_by: str) -> Encoded:
    """``e`` with the user's words ``user`` (their spans): the words its results report, and with
    ``mask_by="words"`` the words its masks follow too."""
    al = e.alignment
    regrouped = regroup(al, user, assign(al, user))
    if mask_by != "words":
        return replace(e, user_words=regrouped, aligned=al)
    of = dict(zip(regrouped.positions, regrouped.word_of))
    return replace(e, word_ids=tuple(of.get(j) for j in range(len(e.word_ids))), aligned=regrouped)


def context_size(content: list[int], offsets: list[Span], n_context: int, end: int) -> int:
    """How many of the content positions belong to the context (lm-eval's rule; see the module's docstring).

    ``n_context`` is the number of tokens of the stripped context encoded alone, ``end`` its
    length in characters: a token that ends after it crosses into the text and belongs to it.
    """
    crossing = next((k for k, j in enumerate(content) if offsets[j][1] > end), len(content))
    return min(n_context, crossing)


def targets(
    encoded: Sequence[Encoded], spans: Sequence[Span | None] | None, texts: Sequence[str] | None = None
) -> list[np.ndarray | None]:
    """Per text, which of its tokens to score (None: all), from character spans; a span outside its text
    (``texts``) is refused, never clamped."""
    if spans is None:
        return [None] * len(encoded)
    if len(spans) != len(encoded):
        raise InputError(f"{len(spans)} spans for {len(encoded)} texts; give one span (or None) per text")
    out: list[np.ndarray | None] = []
    for i, (e, span) in enumerate(zip(encoded, spans)):
        if span is None:
            out.append(None)
            continue
        if texts is not None:
            check_span(span, texts[i], i)
        keep = np.asarray(restrict(e.alignment, (int(span[0]), int(span[1])))[1], dtype=bool)
        if not keep.any():
            raise InputError(f"span {tuple(span)} of text {i} covers none of its tokens; check the character offsets")
        out.append(keep)
    return out
