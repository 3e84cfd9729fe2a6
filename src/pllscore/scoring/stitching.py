"""Encoded texts -> the sequences the engines run, and their outputs -> per-token scores.

Masked LMs (:class:`MaskedWork`): a text that fits is one entry of the mask plan; a longer
one gets a window of the model's length per distinct centred start (special tokens kept at both
ends of every window), each window scoring only the targets it is centred for.

Causal LMs (:class:`CausalWork`): a text that fits is one sequence; a longer one is cut into
windows of the model's length advancing by ``stride``, and each token is read from the one
window that scores it. The window arithmetic itself is in :mod:`pllscore.plan.windows`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from pllscore.plan.align import Grouping, group, only
from pllscore.plan.masks import MaskPlan
from pllscore.plan.windows import causal_windows, centred_starts
from pllscore.scoring.encoding import Encoded

__all__ = ["CausalWork", "MaskedWork", "causal_values", "masked_windows"]


def _fits(e: Encoded, max_length: int | None) -> bool:
    return max_length is None or len(e.ids) <= max_length


def masked_windows(
    e: Encoded, targets: np.ndarray, max_length: int | None
) -> list[tuple[Sequence[int], Grouping, np.ndarray]]:
    """(token ids, grouping scoring only its targets, target indices) per window of a text.

    ``targets`` are indices into the text's scored positions. A text that fits is one window:
    itself. A longer one gets a window of the model's length per distinct centred start;
    special tokens at the ends are kept in every window.
    """
    al = e.grouping
    positions = np.asarray(al.positions)
    if _fits(e, max_length):
        return [(e.ids, only(al, positions[targets]), targets)]
    assert max_length is not None
    lead, trail = e.lead, e.trail
    n_content = len(e.ids) - lead - trail
    size = max_length - lead - trail
    starts = np.asarray(centred_starts(n_content, size, (positions[targets] - lead).tolist()))
    out = []
    for start in dict.fromkeys(starts.tolist()):
        picked = targets[starts == start]
        keep = (
            list(range(lead))
            + list(range(lead + start, lead + start + size))
            + list(range(len(e.ids) - trail, len(e.ids)))
        )
        sub = group([e.word_ids[j] for j in keep])
        where = {j: new for new, j in enumerate(keep)}
        out.append(([e.ids[j] for j in keep], only(sub, [where[int(p)] for p in positions[picked]]), picked))
    return out


@dataclass
class MaskedWork:
    """The mask-plan entries (token ids, alignment) for a batch of texts, and how to stitch them back."""

    encoded: Sequence[Encoded]
    entries: list[tuple[Sequence[int], Grouping]]
    stitch: list[list[tuple[int, np.ndarray]]]  # per text: (entry, indices of its scored tokens)

    @classmethod
    def build(
        cls, encoded: Sequence[Encoded], keeps: Sequence[np.ndarray | None], max_length: int | None
    ) -> MaskedWork:
        entries: list[tuple[Sequence[int], Grouping]] = []
        stitch: list[list[tuple[int, np.ndarray]]] = []
        for e, keep in zip(encoded, keeps):
            targets = np.arange(len(e.positions)) if keep is None else np.flatnonzero(keep)
            pieces = []
            for ids, al, picked in masked_windows(e, targets, max_length):
                pieces.append((len(entries), picked))
                entries.append((ids, al))
            stitch.append(pieces)
        return cls(encoded, entries, stitch)

    @property
    def sequences(self) -> list[Sequence[int]]:
        return [ids for ids, _ in self.entries]

    @property
    def alignments(self) -> list[Grouping]:
        return [al for _, al in self.entries]

    def values(self, plan: MaskPlan, reads: np.ndarray, metric_index: int, text: int) -> np.ndarray:
        """Per scored position of text ``text``, its score under metric ``metric_index`` (NaN: not a target)."""
        values = np.full(len(self.encoded[text].positions), np.nan)
        for entry, picked in self.stitch[text]:
            values[picked] = reads[plan.block(metric_index, entry, len(self.entries))]
        return values


@dataclass
class CausalWork:
    """The sequences a causal LM runs for a batch of texts (windows for long ones), and how to stitch them back."""

    encoded: Sequence[Encoded]
    windows: list[list[tuple[int, int, int]]]  # per text: (begin, end, first scored)

    @classmethod
    def build(cls, encoded: Sequence[Encoded], max_length: int | None, stride: int) -> CausalWork:
        windows = [
            [(0, len(e.ids), 1)] if _fits(e, max_length) else causal_windows(len(e.ids), max_length, stride)  # type: ignore[arg-type]
            for e in encoded
        ]
        return cls(encoded, windows)

    @property
    def sequences(self) -> list[Sequence[int]]:
        return [e.ids[b:end] for e, ws in zip(self.encoded, self.windows) for b, end, _ in ws]

    def logprobs(self, runs: Sequence[np.ndarray]) -> Iterator[np.ndarray]:
        """Per text, ``lp`` with ``lp[j]`` the log-probability of position ``j + 1``, from the engine's runs."""
        it = iter(runs)
        for e, ws in zip(self.encoded, self.windows):
            yield _stitch(len(e.ids), ws, [next(it) for _ in ws])

    def outputs(self, runs: Sequence[dict[str, np.ndarray]]) -> Iterator[dict[str, np.ndarray]]:
        """Per text, every output of :meth:`~pllscore.engine.causal.CausalEngine.run_outputs` stitched as
        :meth:`logprobs` stitches ``logprob``: ``[j]`` is read at position ``j`` (predicting ``j + 1``) in
        the window that scores ``j + 1``. ``set`` has one value more, the distribution after the last
        token, read from the last window."""
        it = iter(runs)
        for e, ws in zip(self.encoded, self.windows):
            mine = [next(it) for _ in ws]
            out = {k: _stitch(len(e.ids), ws, [r[k][: len(r["logprob"])] for r in mine]) for k in mine[0]}
            if "set" in out:
                out["set"] = np.append(out["set"], mine[-1]["set"][-1])
            yield out


def _stitch(n: int, ws: list[tuple[int, int, int]], runs: list[np.ndarray]) -> np.ndarray:
    if len(ws) == 1 and ws[0] == (0, n, 1) and len(runs[0]) == n - 1:  # a text that fits: its run, as it is
        return runs[0]
    lp = np.full(max(n - 1, 0), np.nan)
    for (b, end, first), run in zip(ws, runs):
        lp[first - 1 : end - 1] = run[first - b - 1 : end - b - 1]
    return lp


def causal_values(e: Encoded, lp: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Per scored position of ``e``, its score from ``lp`` and whether it has context (None: every one has).

    Position 0 has no context: it is NaN and not read. Any output stitched like ``lp`` (entropy,
    rank) maps to the scored positions the same way. Scored positions in one run after position 0
    (a text after BOS) are a slice of ``lp``, taken as it is.
    """
    first, last = e.positions[0], e.positions[-1]
    if first > 0 and last - first + 1 == len(e.positions) and last <= len(lp):
        return lp[first - 1 : last], None
    pos = np.asarray(e.positions)
    values = np.where(pos > 0, lp[np.maximum(pos - 1, 0)] if len(lp) else np.nan, np.nan)
    return values, pos > 0
