"""What a rescoring run returns and writes: :class:`RescoreSummary`, :class:`RescoreResult`, the output file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pllscore.errors import InputError

__all__ = ["RescoreResult", "RescoreSummary", "write_rescored"]


@dataclass
class RescoreSummary:
    """What a :func:`rescore` run did: settings, counts and the evaluation per split."""

    model: str
    metric: str  # the LM's: a PLL metric, or "causal"
    lam: float
    beta: float
    tuned: bool
    n_utterances: int
    n_hypotheses: int
    n_texts: int  # distinct hypothesis texts scored
    eval_metric: str | None = None  # "wer" or "bleu"; None without references
    # per split ("all", or "dev" and "test"): {"n_utterances", "before", "after", and "oracle" for WER}
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    output: str | None = None
    lm_scores: str | None = None
    seconds: float = 0.0
    grid: Any = None  # the tuning grid (DataFrame: lam, beta, value on dev), when tuned

    def lines(self) -> list[str]:
        """The summary for the terminal, one line per split."""
        how = "tuned on dev" if self.tuned else "given"
        out = [
            f"rescored {self.n_hypotheses} hypotheses of {self.n_utterances} utterances with {self.model} "
            f"({self.metric}): lambda={self.lam:g} beta={self.beta:g} ({how}) in {self.seconds:.1f} s"
        ]
        for split, s in self.scores.items():
            if self.eval_metric == "wer":
                oracle = f", oracle {s['oracle']:.1%}" if "oracle" in s else ""
                text = f"WER {s['before']:.1%} -> {s['after']:.1%}{oracle}"
            else:
                text = f"BLEU {s['before']:.2f} -> {s['after']:.2f}"
            out.append(f"{split}: {text} (first pass -> rescored; {int(s['n_utterances'])} utterances)")
        if self.output:
            out.append(f"-> {self.output}")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready fields, without the tuning grid (a DataFrame; the frame file holds the run)."""
        return {k: v for k, v in self.__dict__.items() if k != "grid"}


class RescoreResult(NamedTuple):
    """The rescored table (input columns, ``lm_logprob``, ``n_tokens``, ``combined``, ``chosen``) and its summary."""

    frame: Any
    summary: RescoreSummary


def write_rescored(frame: Any, path: str, fmt: str, summary: RescoreSummary) -> None:
    """Write the rescored table with the summary as its metadata, and the summary again beside it as JSON."""
    import json

    from pllscore.io.provenance import now
    from pllscore.io.writers import meta_path, write_json, write_part

    meta: Mapping[str, Any] = {"command": "rescore", "finished": now(), **summary.to_dict()}
    try:
        write_part(path, frame, fmt, metadata={"pllscore": json.dumps(meta, default=str)})
        write_json(meta_path(path), meta)
    except OSError as e:
        raise InputError(f"cannot write {path!r}: {e.strerror}; choose another output path") from None
