"""pllscore as an lm-evaluation-harness model, registered as ``pllscore``.

``lm_eval --model pllscore --model_args pretrained=PATH,metric=word-l2r --tasks ...`` (or
``pllscore lm-eval ...``, which imports this module first) runs lm-eval's log-likelihood tasks
on masked LMs through PLL and on causal and encoder-decoder LMs through pllscore's engines:

- ``loglikelihood`` scores each ``(context, continuation)`` with ``convention="lm-eval"``: the
  context is visible and never masked (lm-eval's ``_encode_pair`` split), the continuation is
  scored under ``metric`` (masked LMs) or by its log-likelihood (causal LMs: exactly lm-eval's
  ``hf`` model, prefix token included; encoder-decoder LMs: exactly ``hf`` with ``backend=seq2seq``, the
  context as the encoder's source). Requests are grouped by context, one ``score()`` call
  per context. ``is_greedy``: every scored token has rank 1 in the distribution that scores it
  (the ``rank`` output of the same pass). An empty or whitespace-only continuation is scored alone, so that
  it never fails the others; one that has no token of its own gets 0.0 (and is_greedy), with a note on stderr.
- ``loglikelihood_rolling`` is the full-text score of each text as given (the ``"paper"``
  convention, long texts in windows; an encoder-decoder LM: log P(text | the empty source), EOS
  included, no windows).
- ``generate_until`` is refused: pllscore scores text, it does not generate.

``model_args`` become a :class:`~pllscore.settings.ModelSettings` (checked as ``pllscore score`` checks
them), and requests are scored through the table job of ``pllscore score``
(:class:`pllscore.jobs.table.TableJob`), each context as a context column.

Importing it also keeps lm-eval's index of its built-in tasks in pllscore's cache
(:mod:`pllscore.integrations.lm_eval_tasks`): 12 s less at the start of each run.

This module and :mod:`~pllscore.integrations.lm_eval_tasks` are the only ones that import ``lm_eval`` (the
``pllscore[lm-eval]`` extra).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Any

import lm_eval.models  # noqa: F401  (lm-eval loads its own models only into an empty registry: fill it first)
import numpy as np
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

from pllscore.errors import InputError, ModelError
from pllscore.integrations import lm_eval_tasks
from pllscore.metrics import DEFAULT_METRIC, PLL_KINDS, resolve_metrics
from pllscore.scoring.encoding import NoTokensError

__all__ = ["PllscoreLM"]

lm_eval_tasks.install()

_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


def _flag(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).lower() in _TRUE + _FALSE:
        return str(value).lower() in _TRUE
    raise InputError(f"model_args {name}={value!r}: use true or false")


@register_model("pllscore")
class PllscoreLM(LM):
    """An lm-eval model backed by a pllscore scorer (masked LM: PLL; causal and encoder-decoder LMs: log-likelihood).

    Args (lm-eval's ``model_args``):
        pretrained: a Hub name, a local folder or a GGUF file (what :func:`pllscore.load` takes),
            or a loaded scorer (Python only).
        metric: the PLL metric of a masked LM (default ``word-l2r``); not for causal or encoder-decoder LMs.
        dtype, autocast, device, max_tokens, revision, trust_remote_code, stride: as for :func:`pllscore.load`.
        device_map, max_memory, offload_folder: as for :func:`pllscore.load` (``max_memory`` in its string form,
            ``cuda:0=20GiB;cpu=60GiB``: lm-eval splits model_args at commas, so ``;`` separates the devices).
        long: ``error`` (default) or ``window`` for continuations longer than the model allows.
        greedy: compute ``is_greedy`` (default true; read in the same pass as the scores). With
            ``greedy=false`` every ``is_greedy`` is False, so never use lm-eval's ``acc`` of a
            ``loglikelihood`` task nor ``exact_match`` then.
        batch_size, max_batch_size: lm-eval's; ignored (pllscore batches by ``max_tokens``).
    """

    def __init__(
        self,
        pretrained: Any,
        metric: str = DEFAULT_METRIC,
        kind: str | None = None,
        dtype: str | None = None,
        autocast: bool | str = False,
        device: str | None = None,
        device_map: str | None = None,
        max_memory: str | None = None,
        offload_folder: str | None = None,
        max_tokens: int | str | None = None,
        revision: str | None = None,
        trust_remote_code: bool | str = False,
        long: str = "error",
        stride: int | str | None = None,
        greedy: bool | str = True,
        batch_size: Any = None,
        max_batch_size: Any = None,
        **unknown: Any,
    ) -> None:
        super().__init__()
        if unknown:
            raise InputError(
                f"unknown model_args {', '.join(sorted(unknown))} for pllscore; known: pretrained, metric, kind, "
                "dtype, autocast, device, device_map, max_memory, offload_folder, max_tokens, revision, "
                "trust_remote_code, long, stride, greedy"
            )
        from pllscore.eval.settings import load_scorers
        from pllscore.settings import ModelSettings, TableSettings, TextSettings

        self.settings = ModelSettings(
            model=pretrained,
            kind=kind,
            device=(device or "auto") if device_map is None else "auto",  # lm-eval's --device: the map places it
            dtype=dtype,
            autocast=_flag("autocast", autocast),
            device_map=device_map,
            max_memory=max_memory.replace(";", ",") if isinstance(max_memory, str) else max_memory,
            offload_folder=offload_folder,
            revision=revision,
            trust_remote_code=_flag("trust_remote_code", trust_remote_code),
            max_tokens=int(max_tokens) if max_tokens is not None else None,
            long=long,
            stride=int(stride) if stride is not None else None,
        )
        (self.scorer,) = load_scorers([pretrained], self.settings)
        kind = {"causal": "a causal LM", "seq2seq": "an encoder-decoder LM"}.get(self.scorer.kind)
        if kind is not None and metric != DEFAULT_METRIC:
            raise InputError(f"metric={metric} is a masked-LM (PLL) metric; {self.scorer.name!r} is {kind}")
        self.metric = resolve_metrics(metric)[0] if self.scorer.kind in PLL_KINDS else None
        if self.scorer.kind in PLL_KINDS and len(resolve_metrics(metric)) != 1:
            raise InputError(f"metric={metric}: lm-eval takes one PLL metric per run")
        self.greedy = _flag("greedy", greedy)
        # a request is a row of (context, continuation), read as lm-eval reads it: the continuation after the
        # context as given (an empty one too: lm-eval's prefix token), with its ranks for is_greedy
        metrics = None if self.metric is None else (self.metric,)
        outputs = ("rank",) if self.greedy else ()
        self.text = TextSettings(
            metrics=metrics, context_column="context", sep="", convention="lm-eval", outputs=outputs
        )
        self.rolling = TextSettings(metrics=metrics)
        self.table = TableSettings(level="token")

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        """log P(continuation | context) per request (PLL of the continuation for a masked LM), and is_greedy."""
        by_context: dict[str, list[int]] = defaultdict(list)
        blank: list[int] = []  # empty or whitespace-only continuations ("\n"): each alone, never failing the rest
        for i, req in enumerate(requests):
            context, continuation = req.args
            (by_context[context] if continuation.strip() else blank).append(i)
        out: list[tuple[float, bool]] = [(0.0, False)] * len(requests)
        # a scorer given loaded keeps its own mode for over-long texts
        long = getattr(self.scorer, "long", None) or self.settings.long
        for context, indices in by_context.items():
            try:
                results = self._score([requests[i].args[1] for i in indices], self.text, long, context)
            except InputError:  # e.g. one continuation left with no token of its own by lm-eval's split
                blank.extend(indices)  # ("The ca", "t"): the group's requests one at a time, where a real error
                continue  # (a text too long) is raised again and a token-less one is told apart
            for i, r in zip(indices, results):
                out[i] = (float(r.total), self.greedy and _greedy(r.rank))
        tokenless = []
        for i in blank:
            context, continuation = requests[i].args
            try:
                if not continuation:  # lm-eval itself fails on it (an empty continuation_enc)
                    raise NoTokensError(i, continuation, bool(context))
                r = self._score_one(context, continuation, long)
            except NoTokensError:  # no token to score: log P = log 1, as lm-eval's sum over no token would be
                tokenless.append(i)
                out[i] = (0.0, self.greedy)
            else:
                out[i] = (float(r.total), self.greedy and _greedy(r.rank))
        if tokenless:
            tokenless.sort()
            print(
                f"pllscore: note: {len(tokenless)} continuation(s) have no token of their own under the tokenizer "
                f"of {self.scorer.name!r} and lm-eval's context split (request {', '.join(map(str, tokenless[:5]))}"
                f"{', ...' if len(tokenless) > 5 else ''}); each got log-likelihood 0.0 and is_greedy True",
                file=sys.stderr,
            )
        return out

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        """The full-text score of each text, as given (long texts in windows; none for an encoder-decoder LM)."""
        long = "error" if self.scorer.kind == "seq2seq" else "window"
        results = self._score([req.args[0] for req in requests], self.rolling, long)
        return [float(r.total) for r in results]

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """Refused: pllscore scores text and does not generate."""
        raise ModelError(
            "pllscore scores text and cannot generate; run generate_until tasks with a generative model (lm-eval's hf)"
        )

    def _score_one(self, context: str, continuation: str, long: str) -> Any:
        """The result of one continuation after ``context``, as lm-eval scores it: the scorer itself, since a
        table refuses blank texts (:class:`NoTokensError` where the tokenizer or lm-eval's split leaves it none)."""
        t = self.text
        kwargs: dict[str, Any] = {"outputs": t.outputs} if t.outputs else {}
        if self.metric is not None:
            kwargs["metric"] = [self.metric]
        encodings = self.scorer.encode([continuation], context=context, sep=t.sep, convention=t.convention, long=long)
        return self.scorer.score(encodings, **kwargs)[0]

    def _score(self, texts: list[str], text: Any, long: str, context: str | None = None) -> Any:
        """The results of ``texts`` (after ``context``) through the table job of ``pllscore score``: the
        settings checked and bound to the scorer, every text checked, then scored."""
        from pllscore.io.readers import read_input
        from pllscore.jobs.table import ScoreOptions

        table = read_input(texts)
        if context is not None:
            table.frame["context"] = context  # one context per call, as a context column: an empty one too
        prepared = ScoreOptions.from_settings(text, self.table, long=long).prepare(self.scorer)
        return prepared.table(table).score(0, len(texts))


def _greedy(rank: Any) -> bool:
    """Every scored token is the model's top prediction where it is scored (rank 1; NaN: not scored).

    A tie for the top counts as greedy (the rank counts strictly larger logits); lm-eval's argmax
    counts it only when the target is the first of the tied tokens.
    """
    scored = rank[~np.isnan(rank)]
    return bool(scored.size) and bool(np.all(scored == 1))
