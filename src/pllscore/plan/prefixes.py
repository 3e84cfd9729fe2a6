"""Each distinct prefix once: token sequences packed into rows of prefix trees.

In: token-id sequences and a row capacity (nodes per row).
Out: rows. A row is a forest of prefix trees (tries) over some of the sequences: one node per
distinct prefix, so sequences that start alike (the two sentences of a minimal pair, many
continuations of one context, everything after a shared BOS) share the nodes of their common
prefix. A causal LM computes a row in one pass with a tree attention mask (a node sees its
ancestors and itself) and position ids equal to the node depths; node ``k``'s hidden state is
then the one the plain pass computes at the last position of the prefix ``k`` stands for.

Sequences are packed in lexicographic order, so the sequence with the longest common prefix
with a new one is the one packed just before it. A row is closed when the next sequence's new
nodes would not fit; a sequence longer than the capacity gets a row of its own.

Scores: node ``c`` (not a root) is token ``tokens[c]`` read from the hidden state of its parent;
sequence ``i`` of the row gets, for positions 1 .. n-1, the scores of nodes ``paths[i][1:]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["TreeRow", "ancestor_mask", "common_prefix", "pack_trees"]


@dataclass(frozen=True)
class TreeRow:
    """One row of prefix trees: nodes in creation order (a parent before its children)."""

    items: np.ndarray  # indices of the row's sequences in the input
    tokens: np.ndarray  # token id of each node
    parents: np.ndarray  # parent node of each node, -1 for a root
    depths: np.ndarray  # depth of each node (its position id): 0 for a root
    paths: tuple[np.ndarray, ...]  # per item, the node of each of its positions

    @property
    def size(self) -> int:
        """Number of nodes."""
        return len(self.tokens)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    x, y = np.asarray(a[:n]), np.asarray(b[:n])
    diff = np.flatnonzero(x != y)
    return int(diff[0]) if len(diff) else n


def pack_trees(sequences: Sequence[Sequence[int]], capacity: int) -> list[TreeRow]:
    """Pack ``sequences`` into rows of prefix trees of at most ``capacity`` nodes (see the module doc)."""
    if capacity < 1:
        raise ValueError(f"capacity must be at least 1, got {capacity}")
    seqs = [np.asarray(s, dtype=np.int64) for s in sequences]
    keys = [s.tolist() for s in seqs]
    order = sorted(range(len(seqs)), key=keys.__getitem__)
    rows: list[TreeRow] = []
    builder = _RowBuilder()
    for i in order:
        s = seqs[i]
        shared = _common(builder.last, keys[i]) if builder.items else 0
        if builder.items and builder.size + len(s) - shared > capacity:
            rows.append(builder.build())
            builder = _RowBuilder()
            shared = 0
        builder.add(i, s, keys[i], shared)
    if builder.items:
        rows.append(builder.build())
    return rows


def _common(a: list[int], b: list[int]) -> int:
    """:func:`common_prefix` of two lists: a loop over short ones (most texts), numpy over long ones."""
    n = min(len(a), len(b))
    if n > 64:
        return common_prefix(a, b)
    for k in range(n):
        if a[k] != b[k]:
            return k
    return n


class _RowBuilder:
    def __init__(self) -> None:
        self.items: list[int] = []
        self.tokens: list[int] = []
        self.parents: list[int] = []
        self.depths: list[int] = []
        self.paths: list[np.ndarray] = []
        self.last: list[int] = []

    @property
    def size(self) -> int:
        return len(self.tokens)

    def add(self, item: int, seq: np.ndarray, key: list[int], shared: int) -> None:
        # in lexicographic order, the previous sequence shares the longest prefix with this one; the new nodes
        # (positions shared .. len - 1) form a chain below the last shared node
        start, new = len(self.tokens), len(seq) - shared
        if new:
            self.parents.append(int(self.paths[-1][shared - 1]) if shared else -1)
            self.parents.extend(range(start, start + new - 1))
            self.tokens.extend(key[shared:])
            self.depths.extend(range(shared, len(seq)))
        shared_path = self.paths[-1][:shared] if shared else np.empty(0, dtype=np.int64)
        self.items.append(item)
        self.paths.append(np.concatenate([shared_path, np.arange(start, start + new, dtype=np.int64)]))
        self.last = key

    def build(self) -> TreeRow:
        return TreeRow(
            items=np.asarray(self.items, dtype=np.int64),
            tokens=np.asarray(self.tokens, dtype=np.int64),
            parents=np.asarray(self.parents, dtype=np.int64),
            depths=np.asarray(self.depths, dtype=np.int64),
            paths=tuple(self.paths),
        )


def ancestor_mask(parents: np.ndarray) -> np.ndarray:
    """``mask[a, b]``: node ``b`` is ``a`` or an ancestor of ``a`` (what ``a`` attends to); parents come first."""
    n = len(parents)
    mask = np.zeros((n, n), dtype=bool)
    for a, p in enumerate(parents):
        if p >= 0:
            mask[a] = mask[p]
        mask[a, a] = True
    return mask
