"""A suite's sentences scored, on the local engine or on Ray actors, by the same functions.

:func:`score_suite` scores a suite's distinct sentences through the table job of ``pllscore score``
(:meth:`pllscore.eval.settings.EvalSettings.prepare`: the metrics, the convention, the mode for over-long
texts) and keeps what regions need: per metric and sentence, the character of the sentence each token stands
on and their log-probabilities. With ``final_eos`` (causal LMs) it adds, per sentence, log P(EOS | sentence):
the tokenizer's EOS token scored after the sentence's tokens as the model read them (BOS and the
convention's reading included), by one more forward pass over ``ids + [eos]``. :class:`Local` calls it on a
scorer loaded here; :class:`OnRay` on actors that each load the model (:class:`~pllscore.jobs.ray_calls.ModelPool`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pllscore.errors import InputError, NonFiniteError
from pllscore.eval.folder import Identity, identity
from pllscore.eval.settings import EvalSettings, load_scorers
from pllscore.settings import RaySettings

__all__ = [
    "Described", "Local", "OnRay", "SuiteScores", "TokenScores", "check_final_eos", "describe", "final_eos_logprobs",
    "score_suite",
]  # fmt: skip


@dataclass(frozen=True)
class TokenScores:
    """One sentence under one metric: per token the character of the sentence it stands on
    (:func:`pllscore.plan.align.anchors`) and its log-probability (nats, NaN when not scored); ``eos``:
    log P(EOS | sentence) in nats with ``final_eos``, else None."""

    anchors: tuple[int, ...]
    logprobs: np.ndarray
    eos: float | None = None


@dataclass(frozen=True)
class SuiteScores:
    """Per metric, the :class:`TokenScores` of a suite's distinct sentences in first-seen order."""

    metrics: tuple[str, ...]
    scores: dict[str, list[TokenScores]]

    def for_metric(self, metric: str) -> list[TokenScores]:
        return self.scores[metric]


@dataclass(frozen=True)
class Described:
    """What a run records of its model before scoring: identity, provenance record, metrics as resolved."""

    ident: Identity
    record: dict[str, Any]
    metrics: tuple[str, ...]


def describe(scorer: Any, settings: EvalSettings) -> Described:
    """The :class:`Described` of a loaded scorer under ``settings``."""
    from pllscore.io.provenance import model_record

    return Described(identity(scorer), model_record(scorer), settings.prepare(scorer).metrics)


def check_final_eos(kind: str, name: str) -> None:
    """Refuse ``final_eos`` for a model that is neither a causal nor an encoder-decoder LM."""
    if kind not in ("causal", "seq2seq"):
        raise InputError(
            f"--final-eos adds a causal or encoder-decoder LM's end-of-sentence surprisal; {name!r} is {kind}"
        )


def _text_part(score: Any) -> tuple[tuple[int, ...], np.ndarray, float | None]:
    """A result's tokens of the sentence itself (anchors, log-probabilities) and the log-probability of the
    closing special token an encoder-decoder scores (its EOS; None when it lists none). Special tokens are in
    no region: a BART's leading ``<s>`` is left out, its EOS goes to ``--final-eos`` only."""
    special = score.is_special
    anchors = tuple(int(a) for a in score.token_anchors[~special])
    logprobs = np.asarray(score.logprobs)
    closing = float(logprobs[-1]) if special.size and special[-1] else None
    return anchors, logprobs[~special], closing


def _seq2seq_eos(results: Any, name: str) -> list[float]:
    """Per sentence, an encoder-decoder's log P(EOS | sentence), the closing special token it scored."""
    out = []
    for r in results.for_metric(results.metrics[0]):
        closing = _text_part(r)[2]
        if closing is None:
            raise InputError(
                f"--final-eos reads an encoder-decoder's scored EOS; {name!r} has eos=False: drop --no-eos"
            )
        out.append(closing)
    return out


def final_eos_logprobs(prepared: Any, sentences: Sequence[str]) -> list[float]:
    """Per sentence, log P(EOS | sentence) in nats: the tokenizer's EOS after the sentence's ids as scored."""
    scorer, options = prepared.scorer, prepared.options
    check_final_eos(scorer.kind, scorer.name)
    eos = getattr(getattr(scorer, "tokenizer", None), "eos_token_id", None)
    if eos is None:
        raise InputError(f"the tokenizer of {scorer.name!r} has no EOS token; drop --final-eos")
    encodings = scorer.encode(list(sentences), long=options.long, convention=options.text.convention)
    sequences = []
    for sentence, e in zip(sentences, encodings.encoded):
        sequence = [*e.ids[: len(e.ids) - e.trail], eos]  # after the content, before any special token it adds
        if scorer.max_length is not None and len(sequence) > scorer.max_length:
            raise InputError(
                f"sentence {sentence!r:.80} with its EOS is {len(sequence)} tokens, more than the model's "
                f"{scorer.max_length}; drop --final-eos"
            )
        sequences.append(sequence)
    runs = scorer.engine.run(sequences, max_tokens=scorer.max_tokens)
    return [float(lp[-1]) for lp in runs]


def score_suite(
    prepared: Any, name: str, sentences: Sequence[str], final_eos: bool, progress: bool | None
) -> SuiteScores:
    """The :class:`SuiteScores` of suite ``name``'s distinct ``sentences`` (every sentence checked first)."""
    from pllscore.io.readers import read_input

    try:
        results = prepared.table(read_input(list(sentences))).score(0, len(sentences), progress=progress)
        seq2seq = getattr(prepared.scorer, "kind", None) == "seq2seq"
        eos: list[Any] = [None] * len(sentences)
        if final_eos:
            eos = _seq2seq_eos(results, prepared.scorer.name) if seq2seq else final_eos_logprobs(prepared, sentences)
    except NonFiniteError as e:
        where = f"suite {name}: sentence {sentences[e.index]!r:.80}"
        raise NonFiniteError(e.index, e.value, e.dtype, where=where) from None
    except InputError as e:
        raise InputError(f"suite {name}: {e}") from None
    for i, value in enumerate(eos):
        if value is not None and not math.isfinite(value):
            dtype = str(getattr(prepared.scorer, "dtype", "float32")).removeprefix("torch.")
            raise NonFiniteError(i, value, dtype, where=f"suite {name}: the final EOS of {sentences[i]!r:.80}")
    scores = {
        m: [TokenScores(*_text_part(s)[:2], lp) for s, lp in zip(results.for_metric(m), eos)] for m in results.metrics
    }
    return SuiteScores(tuple(results.metrics), scores)


def _score_task(scorer: Any, task: tuple[EvalSettings, str, list[str], bool]) -> SuiteScores:
    """:func:`score_suite` on a Ray actor's scorer."""
    settings, name, sentences, final_eos = task
    return score_suite(settings.prepare(scorer), name, sentences, final_eos, False)


class Local:
    """The local engine: the model loaded (or taken as given) here, suites scored one after another."""

    def __init__(self, scorer: Any, settings: EvalSettings, progress: bool | None) -> None:
        (self.scorer,) = load_scorers([scorer], settings.model)
        self.settings, self.progress = settings, progress
        self.prepared = settings.prepare(self.scorer)

    def describe(self) -> Described:
        return describe(self.scorer, self.settings)

    def scores(self, suites: Sequence[tuple[str, list[str]]], final_eos: bool) -> Iterator[SuiteScores]:
        for name, sentences in suites:
            yield score_suite(self.prepared, name, sentences, final_eos, self.progress)

    def close(self) -> None:
        pass


class OnRay:
    """The Ray engine: actors that each load the model by name or path; suites spread over them."""

    def __init__(self, scorer: Any, settings: EvalSettings, ray: RaySettings | None, tasks: int) -> None:
        from pllscore.jobs.ray_calls import ModelPool

        self.settings = settings
        self.pool = ModelPool(settings.model.replace(model=scorer), ray or RaySettings(), tasks)

    def describe(self) -> Described:
        return self.pool.call(describe, self.settings)

    def scores(self, suites: Sequence[tuple[str, list[str]]], final_eos: bool) -> Iterator[SuiteScores]:
        return self.pool.map(_score_task, [(self.settings, n, s, final_eos) for n, s in suites])

    def close(self) -> None:
        self.pool.close()
