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
from pllscore.engine.loading import (
    Kind,
    check_token_types,
    detect_kind,
    encode_text,
    literal_specials,
    load_pretrained,
    max_input_length,
    resolve_dtype,
    special_ids,
    text_only_tokenizer,
)
from pllscore.engine.masked import MaskedEngine
from pllscore.errors import InputError, InputTooLongError, ModelError, NonFiniteError
from pllscore.metrics import DEFAULT_METRIC, resolve_metrics
from pllscore.plan.align import Alignment, Span, align, only, restrict
from pllscore.plan.masks import build_plan
from pllscore.plan.windows import causal_windows, centred_starts
from pllscore.results import Results, SentenceScore

__all__ = ["CausalScorer", "MaskedScorer", "Scorer", "as_scorer", "load", "score"]

# padded tokens per batch when the caller gives none. On a CPU, 1024 keeps a layer's
# activations in the last-level cache; larger batches made scoring 5-10% slower (BENCHMARKS.md).
_DEFAULT_MAX_TOKENS = {"cuda": 32768, "mps": 8192, "cpu": 1024}


@dataclass(frozen=True)
class _Encoded:
    ids: list[int]
    pieces: list[str]
    offsets: list[Span]
    alignment: Alignment
    word_ids: list[int | None]


_LONG = ("error", "window")


def _model_kind(model: Any) -> Kind | None:
    name = type(model).__name__
    if name.endswith("ForMaskedLM"):
        return "masked"
    if name.endswith(("ForCausalLM", "LMHeadModel")):
        return "causal"
    return detect_kind(model.config)


def _check_long(long: str) -> str:
    if long not in _LONG:
        raise InputError(f"unknown long-input mode {long!r}; use 'error' (default) or 'window'")
    return long


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
        long: str = "error",
        dtype: str | torch.dtype | None = None,
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
        self.max_tokens = max_tokens or _DEFAULT_MAX_TOKENS.get(dev.type, _DEFAULT_MAX_TOKENS["cpu"])
        self._pad_id = next(
            (i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id) if i is not None), 0
        )
        self._vocab_size = int(model.config.vocab_size)
        self.long = _check_long(long)
        self.dtype = resolve_dtype(dtype)
        # weights in a reduced type are used as they are; float32 weights get autocast to `dtype`
        self._autocast = None if self.dtype == torch.float32 else self.dtype

    @property
    def device(self) -> torch.device:
        """The device the model runs on."""
        return next(self.model.parameters()).device

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, device={self.device}, max_tokens={self.max_tokens})"

    def _tokenize(
        self, texts: list[str], *, add_special_tokens: bool, prefix: int | None = None, allow_long: bool = False
    ) -> list[_Encoded]:
        # a text is scored as given: a literal "[MASK]" or "<|endoftext|>" in it is text, not a special
        # token (split_special_tokens); a vocabulary that lists special tokens as pieces gets a copy
        # that cannot read them from text; a text that still yields one is refused
        specials = special_ids(self.tokenizer)
        enc = encode_text(self.tokenizer, texts, add_special_tokens)
        if any(literal_specials(enc["input_ids"][i], enc.word_ids(i), specials) for i in range(len(texts))):
            alt = text_only_tokenizer(self.tokenizer)
            enc = enc if alt is None else encode_text(alt, texts, add_special_tokens)
        check_token_types(enc.get("token_type_ids"), self.name)
        out = []
        for i, text in enumerate(texts):
            ids = list(enc["input_ids"][i])
            literal = literal_specials(ids, enc.word_ids(i), specials)
            if literal:
                a, b = enc["offset_mapping"][i][literal[0]]
                raise InputError(
                    f"text {i} contains {text[a:b]!r}, which the tokenizer of {self.name!r} reads only as its special "
                    f"token {self.tokenizer.convert_ids_to_tokens(ids[literal[0]])!r}; pllscore scores text as given, "
                    "so reword or remove it"
                )
            pieces = list(enc.tokens(i))
            offsets = [tuple(o) for o in enc["offset_mapping"][i]]
            word_ids: list[int | None] = list(enc.word_ids(i))
            if prefix is not None:
                ids, pieces = [prefix, *ids], [self.tokenizer.convert_ids_to_tokens(prefix), *pieces]
                offsets, word_ids = [(0, 0), *offsets], [None, *word_ids]
            if self.max_length is not None and len(ids) > self.max_length and not allow_long:
                raise InputTooLongError(i, len(ids), self.max_length)
            al = align(word_ids, offsets, text, pieces)  # type: ignore[arg-type]
            if not al.positions:
                raise InputError(f"text {i} ({text!r:.40}) has no tokens after tokenization; remove it")
            out.append(_Encoded(ids, pieces, offsets, al, word_ids))  # type: ignore[arg-type]
        return out

    def check(self, texts: str | Iterable[str], *, long: str | None = None) -> int:
        """Raise the error that scoring ``texts`` would raise, without scoring; return the token count."""
        items = _check_texts(texts)
        if not items:
            return 0
        windowed = _check_long(long or self.long) == "window"
        add = self.kind == "masked" or self._adds_bos
        enc = self._tokenize(items, add_special_tokens=add, prefix=self._prefix, allow_long=windowed)
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

    def _check_finite(self, index: int, values: np.ndarray, read: np.ndarray | None) -> None:
        """Raise :class:`NonFiniteError` if a token the engine scored (``read``; None: all) got NaN or inf.

        NaN also marks a token that was not scored (outside ``spans``, a causal LM's first token
        without BOS); those are left out of the check, the tokens the engine read are not.
        """
        checked = values if read is None else values[read]
        bad = ~np.isfinite(checked)
        if bad.any():
            weights = next(self.model.parameters()).dtype
            dtype = self.dtype if self.dtype != torch.float32 else weights
            raise NonFiniteError(index, float(checked[bad][0]), str(dtype).removeprefix("torch."))

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
            model,
            mask_token_id=tokenizer.mask_token_id,
            pad_token_id=self._pad_id,
            vocab_size=self._vocab_size,
            autocast=self._autocast,
        )

    def score(
        self,
        texts: str | Iterable[str],
        *,
        metric: str | Sequence[str] | None = None,
        progress: bool | None = None,
        spans: Sequence[Span | None] | None = None,
        long: str | None = None,
    ) -> Results:
        """Score texts under one or more PLL metrics.

        Args:
            texts: a string or a list of strings.
            metric: ``"word-l2r"`` (default), ``"original"``, ``"whole-word"``, ``"sentence-l2r"``,
                a list of them, or ``"all"``. ``None`` means the scorer's own metric.
            progress: show a progress bar (``None``: only when stderr is a terminal).
            spans: per text, a character span ``(start, stop)`` (or None for all): only the tokens
                overlapping it are scored, the rest of the text is context; others are NaN.
            long: ``"error"`` (default: the scorer's) refuses texts longer than the model allows;
                ``"window"`` scores each of their tokens in a window of the model's length centred
                on it (see :mod:`pllscore.plan.windows`).

        Returns:
            One :class:`SentenceScore` per (metric, text), metric-major. Scores are in nats.
        """
        metrics = self.metric if metric is None else resolve_metrics(metric)
        items = _check_texts(texts)
        if not items:
            return Results()
        windowed = _check_long(long or self.long) == "window"
        encoded = self._tokenize(items, add_special_tokens=True, allow_long=windowed)
        keeps = self._targets(encoded, spans)
        entries: list[tuple[list[int], Alignment]] = []
        stitch: list[list[tuple[int, np.ndarray]]] = []  # per text: (entry, indices of its scored tokens)
        for e, keep in zip(encoded, keeps):
            targets = np.arange(len(e.alignment.positions)) if keep is None else np.flatnonzero(keep)
            pieces = []
            for ids, al, picked in self._windows(e, targets):
                pieces.append((len(entries), picked))
                entries.append((ids, al))
            stitch.append(pieces)
        plan = build_plan([ids for ids, _ in entries], [al for _, al in entries], metrics)
        reads = self.engine.run(plan, max_tokens=self.max_tokens, progress=progress)
        results = []
        for k, m in enumerate(metrics):
            for i, e in enumerate(encoded):
                values = np.full(len(e.alignment.positions), np.nan)
                for entry, picked in stitch[i]:
                    values[picked] = reads[plan.block(k, entry, len(entries))]
                self._check_finite(i, values, keeps[i])
                results.append(self._result(i, items[i], e, m, values))
        return Results(tuple(results))

    def _windows(self, e: _Encoded, targets: np.ndarray) -> list[tuple[list[int], Alignment, np.ndarray]]:
        """(token ids, alignment scoring only its targets, target indices) per window of a text.

        A text that fits is one window: itself. A longer one gets a window of the model's length
        per distinct centred start; special tokens at the ends are kept in every window.
        """
        al = e.alignment
        positions = np.asarray(al.positions)
        if self.max_length is None or len(e.ids) <= self.max_length:
            return [(e.ids, only(al, positions[targets]), targets)]
        lead = next(i for i, w in enumerate(e.word_ids) if w is not None)
        trail = len(e.ids) - 1 - max(i for i, w in enumerate(e.word_ids) if w is not None)
        n_content = len(e.ids) - lead - trail
        size = self.max_length - lead - trail
        starts = np.asarray(centred_starts(n_content, size, (positions[targets] - lead).tolist()))
        out = []
        for start in dict.fromkeys(starts.tolist()):
            picked = targets[starts == start]
            keep = (
                list(range(lead))
                + list(range(lead + start, lead + start + size))
                + list(range(len(e.ids) - trail, len(e.ids)))
            )
            sub = align([e.word_ids[j] for j in keep], [e.offsets[j] for j in keep], "", [e.pieces[j] for j in keep])
            where = {j: new for new, j in enumerate(keep)}
            out.append(([e.ids[j] for j in keep], only(sub, [where[int(p)] for p in positions[picked]]), picked))
        return out


class CausalScorer(Scorer):
    """Log-likelihood scoring with a causal LM (GPT-2, Llama-family, ...).

    With ``bos=True`` (default) the BOS token (else EOS, as for GPT-2's ``<|endoftext|>``)
    is put before the text unless the tokenizer adds one itself, and every token of the text
    is scored. With ``bos=False`` the first token has no context and is left unscored (NaN).
    """

    kind: Kind = "causal"

    def __init__(
        self, model: Any, tokenizer: Any, *, bos: bool = True, stride: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(model, tokenizer, **kwargs)
        self.bos = bool(bos)
        limit = self.max_length or 0
        self.stride = stride if stride is not None else max(limit // 2, 1)
        if limit and not 1 <= self.stride < limit:
            raise InputError(f"stride must be between 1 and {limit - 1} (the model's length - 1), got {stride}")
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
        self.engine = CausalEngine(
            model, pad_token_id=self._pad_id, vocab_size=self._vocab_size, autocast=self._autocast
        )

    def score(
        self,
        texts: str | Iterable[str],
        *,
        metric: str | None = None,
        progress: bool | None = None,
        spans: Sequence[Span | None] | None = None,
        long: str | None = None,
    ) -> Results:
        """Score texts by their log-likelihood (nats); ``metric`` must be left out (or ``"causal"``).

        ``spans`` works as for :meth:`MaskedScorer.score`: only tokens overlapping the span are scored.
        ``long="window"`` scores a text longer than the model allows in windows of the model's
        length that advance by ``stride`` tokens, each token conditioned on at least
        ``max_length - stride`` tokens before it.
        """
        if metric not in (None, "causal"):
            raise InputError(
                f"metric {metric!r} is a masked-LM (PLL) metric; a causal LM's score is its log-likelihood, "
                "so leave metric out"
            )
        items = _check_texts(texts)
        if not items:
            return Results()
        windowed = _check_long(long or self.long) == "window"
        encoded = self._tokenize(items, add_special_tokens=self._adds_bos, prefix=self._prefix, allow_long=windowed)
        keeps = self._targets(encoded, spans)
        windows = [
            [(0, len(e.ids), 1)]
            if self.max_length is None or len(e.ids) <= self.max_length
            else causal_windows(len(e.ids), self.max_length, self.stride)
            for e in encoded
        ]
        flat = [e.ids[b:end] for e, ws in zip(encoded, windows) for b, end, _ in ws]
        runs = iter(self.engine.run(flat, max_tokens=self.max_tokens, progress=progress))
        per_seq = []
        for e, ws in zip(encoded, windows):
            lp = np.full(max(len(e.ids) - 1, 0), np.nan)  # lp[j] scores position j + 1
            for b, end, first in ws:
                lp[first - 1 : end - 1] = next(runs)[first - b - 1 : end - b - 1]
            per_seq.append(lp)
        results = []
        for i, (e, lp) in enumerate(zip(encoded, per_seq)):
            pos = np.asarray(e.alignment.positions)
            # lp[j] scores position j + 1; position 0 has no context
            values = np.where(pos > 0, lp[np.maximum(pos - 1, 0)] if len(lp) else np.nan, np.nan)
            read = pos > 0 if keeps[i] is None else (pos > 0) & keeps[i]
            self._check_finite(i, values, read)
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
    long: str = "error",
    stride: int | None = None,
) -> MaskedScorer | CausalScorer:
    """Load a model by Hub name or local folder and return the scorer for its kind.

    Args:
        name_or_path: e.g. ``"bert-base-cased"``, ``"gpt2"`` or a folder with config and weights.
        device: ``"auto"`` (cuda, then mps, then cpu), or any torch device string.
        dtype: ``None``/``"float32"`` (exact), or ``"bfloat16"``/``"float16"``: autocast over float32
            weights (matrix products in that type; normalisation and log-softmax in float32). Faster,
            approximate: see BENCHMARKS.md for the error.
        revision: a Hub branch, tag or commit.
        kind: ``"masked"`` or ``"causal"``; by default read from the model's config.
        trust_remote_code: allow model code from the Hub.
        max_tokens: padded tokens per batch; a default suits the device.
        metric: default metric of a masked scorer.
        bos: whether a causal scorer conditions the first token on BOS.
        long: ``"error"`` refuses texts longer than the model allows; ``"window"`` scores them in windows.
        stride: a causal scorer's window step in ``"window"`` mode (default: half the model's length).
    """
    loaded = load_pretrained(
        name_or_path, device=device, dtype=dtype, revision=revision, kind=kind, trust_remote_code=trust_remote_code
    )
    common: dict[str, Any] = {
        "name": loaded.name,
        "revision": loaded.revision,
        "max_tokens": max_tokens,
        "long": long,
        "dtype": dtype,
    }
    if loaded.kind == "masked":
        return MaskedScorer(loaded.model, loaded.tokenizer, metric=metric, **common)
    return CausalScorer(loaded.model, loaded.tokenizer, bos=bos, stride=stride, **common)


def as_scorer(
    model: Any, *, kind: Kind | None = None, role: str = "this", **load_kwargs: Any
) -> MaskedScorer | CausalScorer:
    """A scorer from a Hub name or a folder (loaded with ``load_kwargs``), or a scorer given as is.

    With ``kind``, a scorer of the other kind is refused: "<name> is a causal LM; <role> needs a
    masked LM".
    """
    scorer = load(model, **load_kwargs) if isinstance(model, (str, os.PathLike)) else model
    if kind is not None and scorer.kind != kind:
        raise ModelError(f"{scorer.name!r} is a {scorer.kind} LM; {role} needs a {kind} LM")
    return scorer  # type: ignore[no-any-return]


def score(
    texts: str | Iterable[str],
    model: str | os.PathLike[str] | Scorer,
    *,
    metric: str | Sequence[str] | None = None,
    **load_kwargs: Any,
) -> Results:
    """One call: load ``model`` (unless it is already a scorer) and score ``texts``."""
    return as_scorer(model, **load_kwargs).score(texts, metric=metric)  # type: ignore[arg-type]
