"""Shared decoder prefixes ("stems") of an encoder-decoder batch: which items to run from one cached stem.

In: per item, the decoder's input ids and the index of its source. Out: :class:`StemPlan`, groups of
two or more items with the same source whose decoder inputs share a prefix; the prefix runs once (its
last position read for each member's next label), and each member continues from its cached keys and
values. Items in no group run whole.

Groups are cut from each source's items sorted by their ids: neighbours stay together while their
common prefix is at least ``tau`` tokens long; ``tau`` is chosen per source to save the most decoder
tokens. Two levels only (a stem, then the members), which is where most of the saving is on minimal
pairs and n-best lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["StemPlan", "plan_stems"]


@dataclass(frozen=True)
class StemPlan:
    """Groups of items that run from one cached stem.

    Attributes:
        stems: per group, the stem's ids (a prefix of every member's decoder input; a member's whole input
            may be the stem).
        members: per group, its items (two or more).
        alone: the items in no group.
        saved: decoder tokens the groups save (each stem runs once instead of once per member).
    """

    stems: list[np.ndarray]
    members: list[np.ndarray]
    alone: np.ndarray
    saved: int


def _common(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


def _cut(order: list[int], lcp: list[int], tau: int) -> list[tuple[list[int], int]]:
    """Runs of ``order`` whose neighbours share at least ``tau`` tokens, each with its common prefix length."""
    runs, start = [], 0
    for k in range(1, len(order) + 1):
        if k == len(order) or lcp[k - 1] < tau:
            if k - start >= 2:
                runs.append((order[start:k], min(lcp[start : k - 1])))
            start = k
    return runs


def plan_stems(sequences: Sequence[np.ndarray], sources: Sequence[int], *, min_shared: int = 2) -> StemPlan:
    """The :class:`StemPlan` of ``sequences`` (decoder inputs), items grouped only with their own source's.

    A group's stem, the common prefix of its members, has at least ``min_shared`` tokens.
    """
    seqs = [np.asarray(s, dtype=np.int64) for s in sequences]
    by_source: dict[int, list[int]] = {}
    for i, s in enumerate(sources):
        by_source.setdefault(int(s), []).append(i)
    stems, members, grouped, saved = [], [], set(), 0
    for items in by_source.values():
        order = sorted(items, key=lambda i: tuple(seqs[i]))
        lcp = [_common(seqs[a], seqs[b]) for a, b in zip(order, order[1:])]
        best: list[tuple[list[int], int]] = []
        best_saved = 0
        for tau in sorted(set(x for x in lcp if x >= min_shared)):
            runs = _cut(order, lcp, tau)
            gain = sum((len(run) - 1) * shared for run, shared in runs)
            if gain > best_saved:
                best, best_saved = runs, gain
        for run, shared in best:
            stems.append(seqs[run[0]][:shared])
            members.append(np.asarray(run, dtype=np.int64))
            grouped.update(run)
        saved += best_saved
    alone = np.asarray([i for i in range(len(seqs)) if i not in grouped], dtype=np.int64)
    return StemPlan(stems, members, alone, saved)
