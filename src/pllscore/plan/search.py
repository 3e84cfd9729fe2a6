"""The exact best-first search for a slot's top-k words.

In: per text, how its words are scored (masked: a fixed number of masks per word length; causal:
the next word with its end-of-word term), and ``expand``, which answers batched requests for the
best tokens after a prefix. Out: per text, the k words of highest log-probability (:class:`Found`).

A word's log-probability is a sum of token log-probabilities (each <= 0), plus for a causal LM
the end term log P(E | context, word) (<= 0) and minus the text's constant log P(E | context).
So a prefix's value bounds every word that extends it, and a best-first search over prefixes,
ordered by that bound, is exact: a word taken from the top of the heap is worth at least every
word still reachable. Masked words of n tokens are a separate tree per n (the text with n masks),
all in the text's one heap.

Each text keeps a heap of three kinds of entries:

- a *node* (a prefix whose next-token distribution is not read yet), keyed by its value;
- a *cursor* over an expanded node's best tokens, keyed by the value of the next one (children are
  made one at a time, so a heap never holds a whole vocabulary);
- a *word*, complete, keyed by its log-probability; taken from the top, it is kept if ``accept``
  (the round trip) says the filled text re-tokenises into exactly its tokens.

Every round, each unfinished text pops entries until its best entry is a node; it asks for that
node and up to ``width - 1`` more (speculation, which never changes the answer: a word is only
taken while no node above it is waiting). All texts' requests go to ``expand`` together.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Expansion", "Found", "Frame", "Request", "Searched", "best_tokens", "search"]


@dataclass(frozen=True)
class Frame:
    """How one text's words are scored.

    Attributes:
        first: the class (:data:`~pllscore.plan.word_classes.CLASSES`) a word's first token is taken from.
        causal: the causal form (a word's probability includes that the next token ends it) rather
            than the masked one (a word of n tokens fills n masks).
        denominator: causal only: subtract log P(E | context) (False at a text's very start).
    """

    first: str = "first"
    causal: bool = False
    denominator: bool = True


@dataclass(frozen=True)
class Request:
    """What ``expand`` is asked: the ``top`` best tokens of class ``allowed`` after ``prefix``.

    ``length``: masked, the number of masks (the word's token count); causal, 0. ``end``: also
    log P(E) of that distribution (causal).
    """

    text: int
    length: int
    prefix: tuple[int, ...]
    allowed: str
    top: int
    end: bool = False


@dataclass(frozen=True)
class Expansion:
    """``expand``'s answer to one request: token ids and their log-probabilities, best first (at most
    ``top``; fewer when the class has fewer), and log P(E) (NaN unless asked)."""

    ids: np.ndarray
    logprobs: np.ndarray
    end: float = math.nan


@dataclass(frozen=True)
class Found:
    """One word found: its tokens and its log-probability (nats)."""

    tokens: tuple[int, ...]
    logprob: float


@dataclass(frozen=True)
class Searched:
    """One text's search: its words, best first, and whether the list is complete: False when the search
    stopped at its step budget with fewer than ``k`` words (a word better than none found may be missing
    after the last one); True when it has ``k`` or every word there is."""

    words: list[Found]
    complete: bool


def best_tokens(logprobs: np.ndarray, allowed: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``top`` allowed tokens of a log-probability vector, best first (ties by id): what ``expand``
    returns, written once for the engines' host side and for tests."""
    ids = np.flatnonzero(allowed[: len(logprobs)])
    values = logprobs[ids]
    if len(ids) > top:
        part = np.argpartition(-values, top - 1)[:top]
        ids, values = ids[part], values[part]
    order = np.lexsort((ids, -values))
    return ids[order], values[order].astype(np.float64)


Expand = Callable[[list[Request]], Sequence[Expansion]]
Accept = Callable[[int, tuple[int, ...]], bool]

_NODE, _CURSOR, _WORD = 0, 1, 2


@dataclass
class _Node:
    length: int
    prefix: tuple[int, ...]
    value: float
    top: int
    seen: frozenset[int] = frozenset()  # children already made (a node asked again for more)


@dataclass
class _Text:
    frame: Frame
    heap: list[tuple[float, int, int, object]] = field(default_factory=list)
    found: list[Found] = field(default_factory=list)
    base: float = 0.0  # causal: -log P(E | context), once the root is read
    shortest: int = 1
    steps: int = 0


def search(
    frames: Sequence[Frame],
    expand: Expand,
    accept: Accept,
    *,
    k: int,
    word_tokens: int,
    width: int | None = None,
    top: int | None = None,
    shortest: int = 1,
    max_steps: int | None = None,
) -> list[Searched]:
    """Per frame (text), its ``k`` best words of ``shortest`` to ``word_tokens`` tokens, best first (fewer
    when fewer exist). ``width``: nodes asked per text and round (default ``k``); ``top``: tokens asked per
    node at first (default ``2 * k + 8``; a node whose tokens run out is asked again for four times more).
    ``max_steps``: nodes a text may ask for (default ``1000 + 100 * k``), so that a text whose words keep
    failing the round trip stops: it keeps the words found, still the best ones in order, fewer than ``k``,
    and says so (:attr:`Searched.complete` is False).
    """
    width = width or max(k, 1)
    top = top or 2 * k + 8
    steps = max_steps or 1000 + 100 * k
    order = itertools.count()
    texts = [_Text(f) for f in frames]
    for t in texts:
        t.shortest = shortest
        lengths = [0] if t.frame.causal else range(shortest, word_tokens + 1)
        for n in lengths:
            _push(t, order, 0.0, _NODE, _Node(n, (), 0.0, top))
    active = [i for i in range(len(texts)) if k > 0]
    while active:
        asked: list[tuple[int, _Node]] = []
        for i in active:
            got = _pop(texts[i], i, order, accept, k, min(width, steps - texts[i].steps))
            texts[i].steps += len(got)
            asked += [(i, node) for node in got]
        active = [i for i in active if len(texts[i].found) < k and texts[i].heap and texts[i].steps < steps]
        if not asked:
            continue
        requests = [_request(texts[i], i, node) for i, node in asked]
        for (i, node), got in zip(asked, expand(requests)):
            _expanded(texts[i], order, node, got, word_tokens)
        active = sorted({*active, *(i for i, _ in asked)})
    return [Searched(t.found, len(t.found) >= k or not t.heap) for t in texts]


def _push(t: _Text, order: itertools.count, key: float, kind: int, item: object) -> None:
    heapq.heappush(t.heap, (-key, next(order), kind, item))


def _pop(t: _Text, index: int, order: itertools.count, accept: Accept, k: int, width: int) -> list[_Node]:
    """Pop ``t``'s entries in order: words kept while nothing above them waits, cursors stepped, nodes
    (at most ``width``) returned to be asked."""
    nodes: list[_Node] = []
    held = []
    while t.heap and len(t.found) < k:
        entry = heapq.heappop(t.heap)
        _, _, kind, item = entry
        if kind == _NODE and len(nodes) >= width:
            held.append(entry)
            break
        if kind == _WORD:
            if nodes:
                held.append(entry)  # a waiting node may still beat it
            elif accept(index, item[0]):  # type: ignore[index]
                t.found.append(Found(item[0], -entry[0]))  # type: ignore[index]
        elif kind == _CURSOR:
            _step(t, order, item)  # type: ignore[arg-type]
        else:
            nodes.append(item)  # type: ignore[arg-type]
    for entry in held:
        heapq.heappush(t.heap, entry)
    return nodes


def _request(t: _Text, index: int, node: _Node) -> Request:
    allowed = t.frame.first if not node.prefix else "continuation"
    # a causal node's end term completes it; the root's gives the text's denominator
    return Request(index, node.length, node.prefix, allowed, node.top + len(node.seen), end=t.frame.causal)


def _expanded(t: _Text, order: itertools.count, node: _Node, got: Expansion, word_tokens: int) -> None:
    """File an expansion: the node's word (causal), and a cursor over its children."""
    value = node.value
    if t.frame.causal:
        if not node.prefix:
            t.base = -got.end if t.frame.denominator else 0.0
            value = t.base
        elif not node.seen and len(node.prefix) >= t.shortest:  # a node asked again filed its word the first time
            _push(t, order, value + got.end, _WORD, (node.prefix, None))
        if len(node.prefix) >= word_tokens:
            return
    keep = np.array([int(i) not in node.seen for i in got.ids], dtype=bool) if node.seen else slice(None)
    ids, lps = np.asarray(got.ids)[keep], np.asarray(got.logprobs, dtype=np.float64)[keep]
    if len(ids):
        more = len(got.ids) >= node.top + len(node.seen)  # the class may hold more than were returned
        cursor = (_Node(node.length, node.prefix, value, node.top, node.seen), ids, lps, 0, more)
        _push(t, order, value + float(lps[0]), _CURSOR, cursor)


def _step(t: _Text, order: itertools.count, cursor: tuple) -> None:
    """Make a cursor's next child (a node, or a word when it completes a masked word) and move it on."""
    node, ids, lps, at, more = cursor
    child = (*node.prefix, int(ids[at]))
    value = node.value + float(lps[at])
    if node.length and len(child) == node.length:
        _push(t, order, value, _WORD, (child, None))
    else:
        _push(t, order, value, _NODE, _Node(node.length, child, value, node.top))
    if at + 1 < len(ids):
        _push(t, order, node.value + float(lps[at + 1]), _CURSOR, (node, ids, lps, at + 1, more))
    elif more:  # the rest are worth at most this one: ask the node again for four times as many
        seen = node.seen | {int(i) for i in ids}
        again = _Node(node.length, node.prefix, node.value, node.top * 4, frozenset(seen))
        _push(t, order, value, _NODE, again)
