"""Scorers: text -> tokens and alignment -> plan -> engine -> :class:`~pllscore.results.Results`.

:class:`MaskedScorer` gives pseudo-log-likelihoods under the four PLL metrics;
:class:`CausalScorer` gives chain-rule log-likelihoods. :func:`load` picks the right one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from pllscore.engine.causal import CausalEngine
from pllscore.engine.loading import Kind, detect_kind, load_pretrained, max_input_length
from pllscore.engine.masked import MaskedEngine
from pllscore.errors import InputError, InputTooLongError, ModelError
from pllscore.metrics import DEFAULT_METRIC, resolve_metrics
from pllscore.plan.align import Alignment, Span, align, restrict
from pllscore.plan.masks import build_plan
from pllscore.results import Results, SentenceScore

__all__ = ["CausalScorer", "MaskedScorer", "Scorer", "load", "score"]

# padded tokens per batch when the caller gives none
_DEFAULT_MAX_TOKENS = {"cuda": 32768, "mps": 8192, "cpu": 4096}


@dataclass(frozen=True)
class _Encoded:
    ids: list[int]
    pieces: list[str]
    offsets: list[Span]
    alignment: Alignment


def _model_kind(model: Any) -> Kind | None:
    name = type(model).__name__
    if name.endswith("ForMaskedLM"):
        return "masked"
    if name.endswith(("ForCausalLM", "LMHeadModel")):
        return "causal"
    return detect_kind(model.config)


def _check_texts(texts: str | Iterable[str]) -> list[str]:
    if isinstance(texts, str):
        texts = [texts]
    elif isinstance(texts, (bytes, bytearray)) or not isinstance(texts, Iterable):
        raise InputError(f"texts must be a string or a list of strings, got {type(texts).__name__}")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise InputError(
                f"text {i} is a {type(t).__name__} ({t!r:.40}), not a string; convert it with str() or drop it"
            )
        if not t.strip():
            what = "empty" if not t else "whitespace only"
            raise InputError(f"text {i} is {what}; remove it or give it some words")
    return out


class Scorer:
    """Common ground of the masked and causal scorers: tokenization, checks, settings."""

    kind: Kind

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        name: str | None = None,
        revision: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        actual = _model_kind(model)
        if actual is not None and actual != self.kind:
            raise ModelError(
                f"{type(model).__name__} is a {actual} LM, but {type(self).__name__} needs a {self.kind} one; "
                f"use {'MaskedScorer' if actual == 'masked' else 'CausalScorer'} or pllscore.load()"
            )
        if not getattr(tokenizer, "is_fast", False):
            raise ModelError(
                f"{type(tokenizer).__name__} is a slow tokenizer; pllscore needs a fast one (word ids and offsets)"
            )
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name or getattr(model.config, "_name_or_path", "") or type(model).__name__
        self.revision = revision
        self.max_length = max_input_length(model.config, tokenizer)
        dev = next(model.parameters()).device
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            raise InputError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        self.max_tokens = max_tokens or _DEFAULT_MAX_TOKENS.get(dev.type, 4096)
        self._pad_id = next(
            (i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id) if i is not None), 0
        )
        self._vocab_size = int(model.config.vocab_size)

    @property
    def device(self) -> torch.device:
        """The device the model runs on."""
        return next(self.model.parameters()).device

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, device={self.device}, max_tokens={self.max_tokens})"

    def _tokenize(self, texts: list[str], *, add_special_tokens: bool, prefix: int | None = None) -> list[_Encoded]:
        enc = self.tokenizer(
            texts, add_special_tokens=add_special_tokens, return_offsets_mapping=True, verbose=False
        )  # verbose=False: over-long input is reported by pllscore, in one line
        out = []
        for i, text in enumerate(texts):
            ids = list(enc["input_ids"][i])
            pieces = list(enc.tokens(i))
            offsets = [tuple(o) for o in enc["offset_mapping"][i]]
            word_ids: list[int | None] = list(enc.word_ids(i))
            if prefix is not None:
                ids, pieces = [prefix, *ids], [self.tokenizer.convert_ids_to_tokens(prefix), *pieces]
                offsets, word_ids = [(0, 0), *offsets], [None, *word_ids]
            if self.max_length is not None and len(ids) > self.max_length:
                raise InputTooLongError(i, len(ids), self.max_length)
            al = align(word_ids, offsets, text, pieces)  # type: ignore[arg-type]
            if not al.positions:
                raise InputError(f"text {i} ({text!r:.40}) has no tokens after tokenization; remove it")
            out.append(_Encoded(ids, pieces, offsets, al))  # type: ignore[arg-type]
        return out

    def check(self, texts: str | Iterable[str]) -> int:
        """Raise the error that scoring ``texts`` would raise, without scoring; return the token count."""
        items = _check_texts(texts)
        if not items:
            return 0
        enc = self._tokenize(items, add_special_tokens=self.kind == "masked" or self._adds_bos, prefix=self._prefix)
        return sum(len(e.ids) for e in enc)

    # set by CausalScorer; a masked scorer never prepends
    _prefix: int | None = None
    _adds_bos: bool = False

    def _targets(self, encoded: list[_Encoded], spans: Sequence[Span | None] | None) -> list[np.ndarray | None]:
        """Per text, which of its tokens to score (None: all), from character spans."""
        if spans is None:
            return [None] * len(encoded)
        if len(spans) != len(encoded):
            raise InputError(f"{len(spans)} spans for {len(encoded)} texts; give one span (or None) per text")
        out: list[np.ndarray | None] = []
        for i, (e, span) in enumerate(zip(encoded, spans)):
            if span is None:
                out.append(None)
                continue
            keep = np.asarray(restrict(e.alignment, (int(span[0]), int(span[1])))[1], dtype=bool)
            if not keep.any():
                raise InputError(
                    f"span {tuple(span)} of text {i} covers none of its tokens; check the character offsets"
                )
            out.append(keep)
        return out

    def _result(self, index: int, text: str, enc: _Encoded, metric: str, logprobs: np.ndarray) -> SentenceScore:
        al = enc.alignment
        return SentenceScore(
            index=index,
            text=text,
            metric=metric,
            model=self.name,
            pieces=tuple(enc.pieces[p] for p in al.positions),
            offsets=tuple(al.token_spans[p] for p in al.positions),
            word_index=np.asarray(al.word_of, dtype=np.int64),
            word_spans=al.word_spans,
            logprobs=np.asarray(logprobs, dtype=np.float64),
        )


class MaskedScorer(Scorer):
    """Pseudo-log-likelihood scoring with a masked LM (BERT, RoBERTa, ELECTRA, XLM-R, ModernBERT, ...)."""

    kind: Kind = "masked"

    def __init__(
        self, model: Any, tokenizer: Any, *, metric: str | Sequence[str] = DEFAULT_METRIC, **kwargs: Any
    ) -> None:
        super().__init__(model, tokenizer, **kwargs)
        if tokenizer.mask_token_id is None:
            raise ModelError(f"the tokenizer of {self.name!r} has no mask token, so it cannot be used for PLL scoring")
        self.metric = resolve_metrics(metric)
        self.engine = MaskedEngine(
            model, mask_token_id=tokenizer.mask_token_id, pad_token_id=self._pad_id, vocab_size=self._vocab_size
        )

    def score(
        self,
        texts: str | Iterable[str],
        *,
        metric: str | Sequence[str] | None = None,
        progress: bool | None = None,
        spans: Sequence[Span | None] | None = None,
    ) -> Results:
        """Score texts under one or more PLL metrics.

        Args:
            texts: a string or a list of strings.
            metric: ``"word-l2r"`` (default), ``"original"``, ``"whole-word"``, ``"sentence-l2r"``,
                a list of them, or ``"all"``. ``None`` means the scorer's own metric.
            progress: show a progress bar (``None``: only when stderr is a terminal).
            spans: per text, a character span ``(start, stop)`` (or None for all): only the tokens
                overlapping it are scored, the rest of the text is context; others are NaN.

        Returns:
            One :class:`SentenceScore` per (metric, text), metric-major. Scores are in nats.
        """
        metrics = self.metric if metric is None else resolve_metrics(metric)
        items = _check_texts(texts)
        if not items:
            return Results()
        encoded = self._tokenize(items, add_special_tokens=True)
        keeps = self._targets(encoded, spans)
        alignments = [
            e.alignment if k is None else restrict(e.alignment, spans[i])[0]
            for i, (e, k) in enumerate(zip(encoded, keeps))
        ]  # type: ignore[index]
        plan = build_plan([e.ids for e in encoded], alignments, metrics)
        reads = self.engine.run(plan, max_tokens=self.max_tokens, progress=progress)
        n = len(items)
        results = []
        for k, m in enumerate(metrics):
            for i in range(n):
                values = reads[plan.block(k, i, n)]
                if keeps[i] is not None:
                    full = np.full(len(keeps[i]), np.nan)  # type: ignore[arg-type]
                    full[keeps[i]] = values
                    values = full
                results.append(self._result(i, items[i], encoded[i], m, values))
        return Results(tuple(results))


class CausalScorer(Scorer):
    """Log-likelihood scoring with a causal LM (GPT-2, Llama-family, ...).

    With ``bos=True`` (default) the BOS token (else EOS, as for GPT-2's ``<|endoftext|>``)
    is put before the text unless the tokenizer adds one itself, and every token of the text
    is scored. With ``bos=False`` the first token has no context and is left unscored (NaN).
    """

    kind: Kind = "causal"

    def __init__(self, model: Any, tokenizer: Any, *, bos: bool = True, **kwargs: Any) -> None:
        super().__init__(model, tokenizer, **kwargs)
        self.bos = bool(bos)
        self._prefix = None
        self._adds_bos = False
        if self.bos:
            start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
            if start is None:
                raise ModelError(f"the tokenizer of {self.name!r} has neither a BOS nor an EOS token; pass bos=False")
            plain = tokenizer("a", add_special_tokens=False)["input_ids"]
            auto = tokenizer("a", add_special_tokens=True)["input_ids"]
            self._adds_bos = auto[:1] == [start] and plain[:1] != [start]
            self._prefix = None if self._adds_bos else start
        self.engine = CausalEngine(model, pad_token_id=self._pad_id, vocab_size=self._vocab_size)

    def score(
        self,
        texts: str | Iterable[str],
        *,
        metric: str | None = None,
        progress: bool | None = None,
        spans: Sequence[Span | None] | None = None,
    ) -> Results:
        """Score texts by their log-likelihood (nats); ``metric`` must be left out (or ``"causal"``).

        ``spans`` works as for :meth:`MaskedScorer.score`: only tokens overlapping the span are scored.
        """
        if metric not in (None, "causal"):
            raise InputError(
                f"metric {metric!r} is a masked-LM (PLL) metric; a causal LM's score is its log-likelihood, "
                "so leave metric out"
            )
        items = _check_texts(texts)
        if not items:
            return Results()
        encoded = self._tokenize(items, add_special_tokens=self._adds_bos, prefix=self._prefix)
        keeps = self._targets(encoded, spans)
        per_seq = self.engine.run([e.ids for e in encoded], max_tokens=self.max_tokens, progress=progress)
        results = []
        for i, (e, lp) in enumerate(zip(encoded, per_seq)):
            pos = np.asarray(e.alignment.positions)
            # lp[j] scores position j + 1; position 0 has no context
            values = np.where(pos > 0, lp[np.maximum(pos - 1, 0)] if len(lp) else np.nan, np.nan)
            if keeps[i] is not None:
                values = np.where(keeps[i], values, np.nan)
            results.append(self._result(i, items[i], e, "causal", values))
        return Results(tuple(results))


def load(
    name_or_path: str | os.PathLike[str],
    device: str | torch.device = "auto",
    dtype: str | torch.dtype | None = None,
    revision: str | None = None,
    kind: Kind | None = None,
    trust_remote_code: bool = False,
    *,
    max_tokens: int | None = None,
    metric: str | Sequence[str] = DEFAULT_METRIC,
    bos: bool = True,
) -> MaskedScorer | CausalScorer:
    """Load a model by Hub name or local folder and return the scorer for its kind.

    Args:
        name_or_path: e.g. ``"bert-base-cased"``, ``"gpt2"`` or a folder with config and weights.
        device: ``"auto"`` (cuda, then mps, then cpu), or any torch device string.
        dtype: ``None``/``"float32"`` (exact), ``"bfloat16"`` or ``"float16"``.
        revision: a Hub branch, tag or commit.
        kind: ``"masked"`` or ``"causal"``; by default read from the model's config.
        trust_remote_code: allow model code from the Hub.
        max_tokens: padded tokens per batch; a default suits the device.
        metric: default metric of a masked scorer.
        bos: whether a causal scorer conditions the first token on BOS.
    """
    loaded = load_pretrained(
        name_or_path, device=device, dtype=dtype, revision=revision, kind=kind, trust_remote_code=trust_remote_code
    )
    common: dict[str, Any] = {"name": loaded.name, "revision": loaded.revision, "max_tokens": max_tokens}
    if loaded.kind == "masked":
        return MaskedScorer(loaded.model, loaded.tokenizer, metric=metric, **common)
    return CausalScorer(loaded.model, loaded.tokenizer, bos=bos, **common)


def score(
    texts: str | Iterable[str],
    model: str | os.PathLike[str] | Scorer,
    *,
    metric: str | Sequence[str] | None = None,
    **load_kwargs: Any,
) -> Results:
    """One call: load ``model`` (unless it is already a scorer) and score ``texts``."""
    scorer = model if isinstance(model, Scorer) else load(model, **load_kwargs)
    return scorer.score(texts, metric=metric)  # type: ignore[union-attr]
