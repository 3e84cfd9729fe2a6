"""The BabyLM sentence zero-shot tasks (BLiMP and its supplement, EWoK, entity tracking, WUG, COMPS) on one model.

:func:`prepare_zero_shot` reads a task's folder, checks it and tokenises every text once;
:meth:`PreparedTask.run` scores it with a model (each distinct read once, in batches, every temperature in
the same pass) and :meth:`TaskResult.write` writes the official ``best_temperature_report.txt`` and
``predictions.json``. Two conventions:

- ``"babylm"``: the official pipeline's numbers, every item's prediction included (its conventions are in
  :mod:`pllscore.plan.babylm_reads` and :mod:`pllscore.plan.babylm_results`);
- ``"pllscore"``: pllscore's own scores through :class:`~pllscore.scoring.base.Scorer`: each completion given
  its prefix as a context, word-l2r PLL for a masked LM, BOS before a causal LM's text, log P(completion |
  prefix) for an encoder-decoder; the same reports, at temperature 1 whatever temperatures are asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pllscore.engine.babylm_scoring import choose_rows, read_all, sum_rows, temperature_range
from pllscore.engine.loading import max_input_length
from pllscore.errors import InputError, ModelError
from pllscore.eval.babylm.tasks_data import TASKS_SENTENCE, read_task
from pllscore.eval.babylm.zero_shot_pll import pll_scores, pll_texts
from pllscore.plan.babylm_reads import BACKENDS, Item, ReadPlan, Specials, plan_reads
from pllscore.plan.babylm_results import Outcome, best, outcome, predictions_json, report_text

__all__ = [
    "BACKENDS",
    "CONVENTIONS",
    "TASKS_SENTENCE",
    "PreparedTask",
    "TaskResult",
    "prepare_zero_shot",
    "temperature_range",
]

#: "babylm": the official numbers; "pllscore": pllscore's own metrics
CONVENTIONS = ("babylm", "pllscore")
_ENGINE_KIND = {"causal": "causal", "mlm": "masked", "mntp": "masked", "enc_dec_mask": "seq2seq"}
_ENGINE_KIND["enc_dec_prefix"] = "seq2seq"


@dataclass(frozen=True)
class TaskResult:
    """One task's results at its best temperature (and the averages at every temperature)."""

    task: str
    dataset: str
    backend: str
    convention: str
    items: tuple[Item, ...]
    best: Outcome
    averages: dict[float, float]

    @property
    def temperature(self) -> float:
        """The best temperature."""
        return self.best.temperature

    def report(self) -> str:
        """The text of ``best_temperature_report.txt``."""
        return report_text(self.best)

    def predictions(self) -> str:
        """The text of ``predictions.json``."""
        return predictions_json(self.items, self.best)

    def write(self, out_dir: Path) -> None:
        """Write ``best_temperature_report.txt`` and ``predictions.json`` into ``out_dir`` (made if missing):
        ``RESULTS/<model>/<revision>/zero_shot/<backend>/<task>/<dataset>/``."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "best_temperature_report.txt").write_text(self.report(), encoding="utf-8")
        (out_dir / "predictions.json").write_text(self.predictions(), encoding="utf-8")

    def summary(self) -> list[tuple[str, float]]:
        """``(grouping, value)`` rows in the report's units: ``<dataset>/overall``, then (not for WUG)
        ``<dataset>/<grouping>/<value>`` for every line of the report, e.g. ``blimp_fast/field/syntax``."""
        rows = [(f"{self.dataset}/overall", self.best.average)]
        if self.best.probs is None:
            for domain, values in self.best.groups.items():
                rows.extend((f"{self.dataset}/{domain.lower()}/{k}", v) for k, v in values.items())
        return rows


@dataclass(frozen=True)
class PreparedTask:
    """A task read, checked and tokenised: :meth:`run` scores it with a model."""

    task: str
    dataset: str
    backend: str
    convention: str
    items: tuple[Item, ...]
    tokenizer: Any
    plan: ReadPlan | None
    pad_token_id: int

    @property
    def n_items(self) -> int:
        """The task's items (what ``progress`` counts)."""
        return len(self.items)

    def run(self, model: Any, **options: Any) -> TaskResult:
        """Score every item with ``model`` (the backend's transformers class, in eval mode, on its device) at
        each temperature and keep the best. ``options``: those of :meth:`scores` (``temperatures``, logits / T,
        the official ``min``/``max``/``interval`` range being :func:`temperature_range`; ``batch_size``;
        ``max_tokens``; ``progress``)."""
        temps = _check_temperatures(options.pop("temperatures", (1.0,)), self.convention)
        scores = self.scores(model, temperatures=temps, **options)
        # the official choices by torch's own max and softmax (float32), pllscore's float64 scores by numpy
        choose = choose_rows if self.plan is not None else lambda s: None
        outcomes = [outcome(self.items, s, self.task, t, choose(s)) for s, t in zip(scores, temps)]
        chosen = best(outcomes)
        averages = {o.temperature: o.average for o in outcomes}
        return TaskResult(self.task, self.dataset, self.backend, self.convention, self.items, chosen, averages)

    def scores(
        self,
        model: Any,
        *,
        temperatures: Sequence[float] = (1.0,),
        batch_size: int = 64,
        max_tokens: int = 8192,
        progress: Callable[[int], None] | None = None,
    ) -> list[list[np.ndarray]]:
        """Per temperature, per item its sentences' scores: under ``"babylm"`` float32, each the sum of its
        reads' log-probabilities; under ``"pllscore"`` the scorer's totals (float64). ``batch_size``: reads per
        forward pass at most; ``max_tokens``: padded tokens per forward pass at most; ``progress`` is told how
        many items finished."""
        temps = _check_temperatures(temperatures, self.convention)
        if self.plan is None:
            out = [pll_scores(model, self.tokenizer, self.backend, pll_texts(self.items))]
            if progress is not None:
                progress(self.n_items)
            return out
        self._check_lengths(model)
        told = _Progress(self.n_items, len(self.plan.reads), progress)
        values = read_all(
            model,
            self.plan.reads,
            temps,
            kind=_ENGINE_KIND[self.backend],
            pad_token_id=self.pad_token_id,
            max_tokens=max_tokens,
            max_rows=batch_size,
            progress=told,
        )
        told.finish()
        return [self._sums(values, j) for j in range(len(temps))]

    def _sums(self, values: list[np.ndarray], j: int) -> list[np.ndarray]:
        """Per item its sentences' scores at the ``j``-th temperature, each summed as the official code sums it:
        a causal sentence over its tokens in place (zeros where not scored), the others over their reads."""
        assert self.plan is not None
        reads = self.plan.reads
        rows = []
        for sentences in self.plan.sentences:
            for used in sentences:
                if self.backend == "causal" and used:
                    row = np.zeros(len(reads[used[0]].ids) - 1, dtype=np.float32)
                    row[list(reads[used[0]].at)] = values[used[0]][j]
                    rows.append(row)
                else:
                    rows.append(np.concatenate([values[r][j] for r in used]) if used else np.zeros(0, np.float32))
        sums = sum_rows(rows, [w for item in self.plan.widths for w in item])
        bounds = np.cumsum([0] + [len(sentences) for sentences in self.plan.sentences])
        return [sums[bounds[i] : bounds[i + 1]] for i in range(len(self.plan.sentences))]

    def _check_lengths(self, model: Any) -> None:
        """Refuse, naming the item, a read longer than the model's positions (the official code fails there)."""
        assert self.plan is not None
        limit = max_input_length(model.config, None)  # None: relative positions (T5), no limit
        if limit is None:
            return
        sizes = [max(len(r.ids), len(r.decoder or ())) for r in self.plan.reads]
        too_long = {k for k, n in enumerate(sizes) if n > limit}
        for item, sentences in zip(self.items, self.plan.sentences):
            for reads in sentences:
                for k in too_long.intersection(reads):
                    raise InputError(
                        f"{item.where}: a sentence of {sizes[k]} tokens is longer than the "
                        f"model's {limit} positions; shorten it or leave the item out"
                    )


class _Progress:
    """Reads finished -> items finished, told as they pass."""

    def __init__(self, n_items: int, n_reads: int, progress: Callable[[int], None] | None) -> None:
        self.n_items, self.n_reads, self.progress = n_items, max(n_reads, 1), progress
        self.reads = self.told = 0

    def __call__(self, n: int) -> None:
        self.reads += n
        self._tell(self.n_items * self.reads // self.n_reads)

    def finish(self) -> None:
        self._tell(self.n_items)

    def _tell(self, done: int) -> None:
        if self.progress is not None and done > self.told:
            self.progress(done - self.told)
            self.told = done


def _check_temperatures(temperatures: Sequence[float], convention: str) -> list[float]:
    temps = [float(t) for t in temperatures]
    if not temps or any(not t > 0 for t in temps):
        raise InputError(f"temperatures must be positive numbers, got {list(temperatures)!r}")
    # pllscore's metrics have no temperature: a run that asks for a range for both conventions gets the
    # official choice under "babylm" and temperature 1 (its report says so) under "pllscore"
    return [1.0] if convention == "pllscore" else temps


def _specials(tokenizer: Any) -> Specials:
    """The tokenizer's special ids, and its first additional special token (transformers 4 names them
    ``additional_special_tokens``, 5 ``extra_special_tokens``)."""
    extra = None
    ids = getattr(tokenizer, "additional_special_tokens_ids", None)
    if ids:
        extra = int(ids[0])
    else:
        names = getattr(tokenizer, "extra_special_tokens", None)
        names = list(names.values()) if isinstance(names, dict) else list(names or [])
        if names:
            extra = int(tokenizer.convert_tokens_to_ids(str(names[0])))
    return Specials(
        tokenizer.mask_token_id, tokenizer.bos_token_id, tokenizer.cls_token_id, tokenizer.eos_token_id, extra
    )


def _encoders(tokenizer: Any, items: Sequence[Item]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Every text tokenised once (in one call), looked up by the planner."""
    texts = list(dict.fromkeys(t for item in items for t in (*item.sentences, *item.completions)))
    texts += [p for p in dict.fromkeys(p for item in items for p in item.prefixes) if p is not None]
    texts = list(dict.fromkeys(texts))
    full = tokenizer(texts, return_offsets_mapping=True) if texts else {"input_ids": [], "offset_mapping": []}
    plain = tokenizer(texts, add_special_tokens=False) if texts else {"input_ids": []}
    full_of = {
        t: (list(i), [tuple(o) for o in off]) for t, i, off in zip(texts, full["input_ids"], full["offset_mapping"])
    }
    plain_of = {t: (list(i), []) for t, i in zip(texts, plain["input_ids"])}
    return full_of.__getitem__, plain_of.__getitem__


def prepare_zero_shot(
    task: str,
    data_dir: Path,
    tokenizer: Any,
    backend: str,
    *,
    convention: str = "babylm",
    full_sentence_scores: bool = False,
    official_batch_size: int = 64,
) -> PreparedTask:
    """Read, check and tokenise ``task``'s folder ``data_dir`` for ``backend`` under ``convention``.

    ``tokenizer`` is the model's (fast) Hugging Face tokenizer. Bad data raises :class:`InputError` naming
    the file and line; a tokenizer without what the backend needs (offsets, a mask token) :class:`ModelError`.
    ``full_sentence_scores``: the official option of that name (EWoK scores whole sentences).
    ``official_batch_size``: the official ``--batch_size`` whose padded rows the official sums run over
    (``causal``, ``enc_dec_prefix``): it decides near-ties at float32's last digit, nothing else.
    """
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")
    if convention not in CONVENTIONS:
        raise InputError(f"unknown convention {convention!r}; use one of {', '.join(CONVENTIONS)}")
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"{type(tokenizer).__name__} is a slow tokenizer; BabyLM scoring needs a fast one (offsets)")
    items = tuple(read_task(task, Path(data_dir), full_sentence_scores=full_sentence_scores))
    pad = next(
        (i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.cls_token_id) if i is not None), 0
    )
    plan = None
    if convention == "babylm":
        encode, plain = _encoders(tokenizer, items)
        try:
            plan = plan_reads(
                items, backend, encode, plain, _specials(tokenizer), official_batch_size=official_batch_size
            )
        except ValueError as e:
            raise ModelError(f"the {backend} backend needs what this tokenizer lacks: {e}") from None
    return PreparedTask(task, Path(data_dir).name, backend, convention, items, tokenizer, plan, int(pad))
