"""Masking plans: the unique masked copies a set of metrics needs, and what each one serves.

In: token-id sequences with their :class:`~pllscore.plan.align.Grouping` (an alignment's words), and metric names.
Out: :class:`MaskPlan`.

A masked copy is a token sequence with some positions replaced by the mask token. It is
identified by (token ids, masked positions), so identical copies (a one-token word under
``original``, ``word-l2r`` and ``whole-word``; a repeated sentence) are computed once, and
every target they serve is read from that one computation. Masked positions are stored
as half-open runs, never as dense masks, so a plan is small even for long texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pllscore.plan.align import Grouping, Span

__all__ = ["MaskPlan", "build_plan", "mask_positions"]


def mask_positions(metric: str, target: int, word: Sequence[int], length: int) -> tuple[int, ...]:
    """Positions masked when ``target`` (a position in ``word``) is scored under ``metric``.

    Args:
        metric: one of ``original``, ``word-l2r``, ``whole-word``, ``sentence-l2r``.
        target: the position being scored.
        word: the positions of the target's word, ascending.
        length: the sequence length, special tokens included.
    """
    if metric == "original":
        return (target,)
    if metric == "word-l2r":
        return tuple(p for p in word if p >= target)
    if metric == "whole-word":
        return tuple(word)
    if metric == "sentence-l2r":
        return tuple(range(target, length))
    raise ValueError(f"unknown metric {metric!r}")


def _runs(metric: str, target: int, word: Sequence[int], length: int) -> tuple[Span, ...]:
    # the same sets as mask_positions, written as runs without listing every position
    if metric == "sentence-l2r":
        return ((target, length),)
    return _to_runs(mask_positions(metric, target, word, length))


def _to_runs(positions: Sequence[int]) -> tuple[Span, ...]:
    runs: list[Span] = []
    for p in positions:
        if runs and runs[-1][1] == p:
            runs[-1] = (runs[-1][0], p + 1)
        else:
            runs.append((p, p + 1))
    return tuple(runs)


@dataclass(frozen=True)
class MaskPlan:
    """The unique masked copies for a request, and where each requested score is read.

    A *read* is one (copy, position) pair: the model's log-probability of the original token
    at ``position`` in that copy. Reads are grouped by copy: copy ``c`` serves reads
    ``read_ptr[c]:read_ptr[c + 1]``.

    Attributes:
        sequences: the distinct token-id sequences.
        copy_seq: per copy, the index of its sequence.
        copy_runs: per copy, its masked positions as half-open runs.
        read_ptr: CSR offsets of each copy's reads (length n_copies + 1).
        read_pos: per read, the position scored.
        slots: per requested score, the read that answers it; requested scores are laid out
            metric-major, then text, then scored position (see ``block_ptr``).
        block_ptr: offsets into ``slots`` of block (metric m, text i) at ``m * n_texts + i``.
        metrics: the metric names, in block order.
    """

    sequences: tuple[tuple[int, ...], ...]
    copy_seq: np.ndarray
    copy_runs: tuple[tuple[Span, ...], ...]
    read_ptr: np.ndarray
    read_pos: np.ndarray
    slots: np.ndarray
    block_ptr: np.ndarray
    metrics: tuple[str, ...]

    @property
    def n_copies(self) -> int:
        return len(self.copy_runs)

    @property
    def n_reads(self) -> int:
        return len(self.read_pos)

    def copy_lengths(self) -> np.ndarray:
        """Per copy, its number of positions."""
        lengths = np.array([len(s) for s in self.sequences], dtype=np.int64)
        return lengths[self.copy_seq] if len(self.copy_seq) else np.zeros(0, dtype=np.int64)

    def block(self, metric_index: int, text_index: int, n_texts: int) -> np.ndarray:
        """Read indices answering the scored positions of one text under one metric."""
        b = metric_index * n_texts + text_index
        return self.slots[self.block_ptr[b] : self.block_ptr[b + 1]]


def build_plan(sequences: Sequence[Sequence[int]], alignments: Sequence[Grouping], metrics: Sequence[str]) -> MaskPlan:
    """Plan the unique masked copies that score every text under every metric."""
    if len(sequences) != len(alignments):
        raise ValueError(f"{len(sequences)} sequences but {len(alignments)} alignments")
    seq_index: dict[tuple[int, ...], int] = {}
    copy_index: dict[tuple[int, tuple[Span, ...]], int] = {}
    read_index: dict[tuple[int, int], int] = {}
    read_copy: list[int] = []
    read_pos: list[int] = []
    slots: list[int] = []
    block_ptr = [0]
    for metric in metrics:
        for ids, al in zip(sequences, alignments):
            key = tuple(ids)
            s = seq_index.setdefault(key, len(seq_index))
            for pos, w in zip(al.positions, al.word_of):
                c = copy_index.setdefault((s, _runs(metric, pos, al.words[w], al.length)), len(copy_index))
                r = read_index.setdefault((c, pos), len(read_index))
                if r == len(read_copy):
                    read_copy.append(c)
                    read_pos.append(pos)
                slots.append(r)
            block_ptr.append(len(slots))
    copies = list(copy_index)
    # group reads by copy, keeping creation order within a copy, and renumber the slots
    order = np.argsort(np.asarray(read_copy, dtype=np.int64), kind="stable")
    new_id = np.empty(len(order), dtype=np.int64)
    new_id[order] = np.arange(len(order))
    counts = np.bincount(np.asarray(read_copy, dtype=np.int64), minlength=len(copies))
    return MaskPlan(
        sequences=tuple(seq_index),
        copy_seq=np.array([s for s, _ in copies], dtype=np.int64),
        copy_runs=tuple(runs for _, runs in copies),
        read_ptr=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        read_pos=np.asarray(read_pos, dtype=np.int64)[order],
        slots=new_id[np.asarray(slots, dtype=np.int64)] if slots else np.zeros(0, dtype=np.int64),
        block_ptr=np.asarray(block_ptr, dtype=np.int64),
        metrics=tuple(metrics),
    )
