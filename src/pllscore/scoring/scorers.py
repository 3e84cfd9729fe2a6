"""Scorers: text -> tokens and alignment -> plan -> engine -> :class:`~pllscore.results.scores.Results`.

:class:`MaskedScorer` gives pseudo-log-likelihoods under the four PLL metrics;
:class:`CausalScorer` gives chain-rule log-likelihoods. :func:`load` picks the right one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch

from pllscore.engine.causal import CausalEngine
from pllscore.engine.loading import Kind, load_pretrained
from pllscore.engine.masked import MaskedEngine
from pllscore.errors import InputError, ModelError
from pllscore.metrics import DEFAULT_METRIC, resolve_metrics
from pllscore.plan.align import Span
from pllscore.plan.masks import build_plan
from pllscore.results.scores import Results
from pllscore.scoring.base import Scorer, Words
from pllscore.scoring.bow import BowTokens, bow_adjust
from pllscore.scoring.encoding import targets
from pllscore.scoring.outputs import check_outputs, wants_for
from pllscore.scoring.stitching import CausalWork, MaskedWork, causal_values

__all__ = ["CausalScorer", "MaskedScorer", "Scorer", "as_scorer", "load", "score"]


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
        context: str | Sequence[str] | None = None,
        sep: str = " ",
        words: Words | None = None,
        word_sep: str = " ",
        mask_by: str | None = None,
        outputs: Sequence[str] = (),
        word_prob: str | None = None,
        convention: str = "paper",
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
            context: a string before every text, or one string per text (``""``: none). Each text is
                scored given its context: the model reads ``context + sep + text``, the context is never
                masked and only the text's tokens are scored (``sentence-l2r`` masks to the right within
                the text). Tokens, words and spans of the results are the text's own.
            sep: what joins a context and its text (default one space).
            words: what the results call words (``None``: the scorer's, ``"tokenizer"`` by default):
                ``"tokenizer"`` (the tokenizer's ``word_ids()`` groups), ``"whitespace"`` (runs of
                non-whitespace: "dog." is one word), or per text a list of words that, joined by
                ``word_sep``, are the text exactly. A token belongs to the word where it starts (see
                :mod:`pllscore.plan.words`); a word with no token of its own scores NaN.
            word_sep: what joins the words of a list into its text (default one space; ``""`` for
                text written without spaces).
            mask_by: what ``word-l2r`` and ``whole-word`` mask (``None``: the scorer's):
                ``"tokenizer"`` (default, the paper's definition: the tokenizer's words) or ``"words"``
                (the user's words: word-l2r masks the target and the later tokens of its user word,
                whole-word the whole user word).
            outputs: per-token outputs besides the log-probability: ``"entropy"`` (nats) of the
                model's distribution at the masked position and ``"rank"`` of the original token
                there, under each metric (see :mod:`pllscore.scoring.outputs`).
            word_prob: ``"sum"`` (default); ``"bow"`` is for causal LMs and is refused here.
            convention: ``"paper"`` (default) scores the text as given; ``"lm-eval"`` as
                lm-evaluation-harness scores a continuation of an empty context: ``sep + text``
                (for a byte-level BPE the first token is ``" The"``, not ``"The"``). Tokens, words
                and spans still index into the text.

        Returns:
            One :class:`SentenceScore` per (metric, text), metric-major. Scores are in nats.
        """
        metrics = self.metric if metric is None else resolve_metrics(metric)
        asked = check_outputs(outputs, word_prob, self.kind)
        items, encoded = self._encode(
            texts, long, context, sep, words=words, word_sep=word_sep, mask_by=mask_by, convention=convention
        )
        if not items:
            return Results()
        keeps = targets(encoded, spans)
        work = MaskedWork.build(encoded, keeps, self.max_length)
        plan = build_plan(work.sequences, work.alignments, metrics)
        if asked:
            got = self.engine.run_outputs(plan, wants_for(asked), max_tokens=self.max_tokens, progress=progress)
            reads = got["logprob"]
        else:
            reads = self.engine.run(plan, max_tokens=self.max_tokens, progress=progress)
        results = []
        for k, m in enumerate(metrics):
            for i, e in enumerate(encoded):
                values = work.values(plan, reads, k, i)
                self._check_finite(i, values, keeps[i])
                extra = {n: work.values(plan, got[n], k, i) for n in asked}
                results.append(self._result(i, items[i], e, m, values, **extra))
        return Results(tuple(results))

    def _encoding(self) -> tuple[bool, int | None]:
        return True, None


class CausalScorer(Scorer):
    """Log-likelihood scoring with a causal LM (GPT-2, Llama-family, ...).

    With ``bos=True`` (default) the BOS token (else EOS, as for GPT-2's ``<|endoftext|>``)
    is put before the text unless the tokenizer adds one itself, and every token of the text
    is scored. With ``bos=False`` the first token has no context and is left unscored (NaN).
    """

    kind: Kind = "causal"

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        bos: bool = True,
        stride: int | None = None,
        share_prefixes: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(model, tokenizer, **kwargs)
        self.bos = bool(bos)
        self.share_prefixes = bool(share_prefixes)
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
            model,
            pad_token_id=self._pad_id,
            vocab_size=self._vocab_size,
            autocast=self._autocast,
            share_prefixes=self.share_prefixes,
        )

    def score(
        self,
        texts: str | Iterable[str],
        *,
        metric: str | None = None,
        progress: bool | None = None,
        spans: Sequence[Span | None] | None = None,
        long: str | None = None,
        context: str | Sequence[str] | None = None,
        sep: str = " ",
        words: Words | None = None,
        word_sep: str = " ",
        mask_by: str | None = None,
        outputs: Sequence[str] = (),
        word_prob: str | None = None,
        convention: str = "paper",
    ) -> Results:
        """Score texts by their log-likelihood (nats); ``metric`` must be left out (or ``"causal"``).

        ``spans`` works as for :meth:`MaskedScorer.score`: only tokens overlapping the span are scored.
        ``long="window"`` scores a text longer than the model allows in windows of the model's
        length that advance by ``stride`` tokens, each token conditioned on at least
        ``max_length - stride`` tokens before it.
        ``context`` (one string for all texts, or one per text) conditions each text: the model reads
        ``context + sep + text`` (after BOS) and only the text's tokens are scored, log P(text | context).
        ``words`` and ``word_sep`` say what the results call words, as for :meth:`MaskedScorer.score`
        (``"whitespace"``: the words of reading-time studies); ``mask_by`` is accepted and does nothing
        (a causal LM masks nothing).
        ``outputs``: ``"entropy"`` and/or ``"rank"`` per token (:mod:`pllscore.scoring.outputs`).
        ``word_prob="bow"`` corrects word scores for a word-beginning-marking tokenizer
        (:mod:`pllscore.scoring.bow`); token scores and totals are unchanged.
        ``convention="lm-eval"`` follows lm-evaluation-harness's HFLM exactly: a text without a context
        is ``sep + text`` after lm-eval's prefix token (BOS, else EOS), and a text with a context is
        ``context + sep + text`` with only the tokenizer's own special tokens before it (GPT-2: none).
        """
        if metric not in (None, "causal"):
            raise InputError(
                f"metric {metric!r} is a masked-LM (PLL) metric; a causal LM's score is its log-likelihood, "
                "so leave metric out"
            )
        asked = check_outputs(outputs, word_prob, self.kind)
        bow = self._bow_tokens() if "word_correction" in asked else None
        items, encoded = self._encode(
            texts, long, context, sep, words=words, word_sep=word_sep, mask_by=mask_by, convention=convention
        )
        if not items:
            return Results()
        keeps = targets(encoded, spans)
        work = CausalWork.build(encoded, self.max_length, self.stride)
        if asked:
            wants = wants_for(asked, None if bow is None else bow.end_mask())
            run_kw: dict[str, Any] = {"max_tokens": self.max_tokens, "progress": progress}
            per_text = list(work.outputs(self.engine.run_outputs(work.sequences, wants, **run_kw)))
        else:
            runs = self.engine.run(work.sequences, max_tokens=self.max_tokens, progress=progress)
            per_text = [{"logprob": lp} for lp in work.logprobs(runs)]
        results = []
        for i, (e, out) in enumerate(zip(encoded, per_text)):
            values, read = causal_values(e, out["logprob"])
            if keeps[i] is not None:
                read = read & keeps[i]
            self._check_finite(i, values, read)
            if keeps[i] is not None:
                values = np.where(keeps[i], values, np.nan)
            extra = {n: np.where(np.isnan(values), np.nan, causal_values(e, out[n])[0]) for n in asked if n in out}
            if bow is not None:
                adjust = bow_adjust(e.ids, e.alignment.positions, e.lead, e.trail, out["set"], bow)
                extra["word_correction"] = np.where(np.isnan(values), np.nan, adjust)
            results.append(self._result(i, items[i], e, "causal", values, **extra))
        return Results(tuple(results))

    def _bow_tokens(self) -> BowTokens:
        if getattr(self, "_bow", None) is None:
            self._bow = BowTokens(self.tokenizer, self._vocab_size, self.name)
        return self._bow

    def _encoding(self) -> tuple[bool, int | None]:
        return self._adds_bos, self._prefix

    def _lm_eval_encoding(self, contexts: Sequence[str] | None, n: int) -> tuple[bool, int | None | list[int | None]]:
        # lm-eval's TemplateLM.loglikelihood: an empty context is [prefix_token_id] (HFLM: BOS, else EOS)
        # before tok_encode(continuation, add_special_tokens=False); a context goes through _encode_pair,
        # whose tok_encode adds the tokenizer's own special tokens and no prefix
        tok = self.tokenizer
        if not self.bos:
            raise InputError("convention='lm-eval' conditions a text on lm-eval's prefix token (BOS); drop bos=False")
        start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        if start is None:
            raise ModelError(f"the tokenizer of {self.name!r} has neither a BOS nor an EOS token for lm-eval's prefix")
        plain = tok("a", add_special_tokens=False)["input_ids"]
        auto = tok("a", add_special_tokens=True)["input_ids"]
        if auto == [start, *plain]:  # the tokenizer adds the prefix token itself, with a context or without
            return True, None
        if auto != plain:
            raise ModelError(
                f"the tokenizer of {self.name!r} adds {auto[: -len(plain) or None]} around a text; "
                "convention='lm-eval' is implemented for tokenizers that add nothing or only the BOS token"
            )
        return False, [None if c else start for c in (contexts or [""] * n)]


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
    words: str = "tokenizer",
    mask_by: str = "tokenizer",
    share_prefixes: bool = True,
    compile: bool = False,
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
        words: the scorer's default words, ``"tokenizer"`` or ``"whitespace"`` (see :meth:`MaskedScorer.score`).
        mask_by: a masked scorer's default for what word-l2r and whole-word mask: ``"tokenizer"`` or ``"words"``.
        share_prefixes: a causal scorer computes each distinct prefix of a batch's texts once (prefix
            trees), where the model family supports it exactly; ``False`` runs every text in full.
        compile: ``torch.compile`` the model's layers (opt-in: tens of seconds to compile, pays on
            long runs; see BENCHMARKS.md).
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
        "words": words,
        "mask_by": mask_by,
        "compile": compile,
    }
    if loaded.kind == "masked":
        return MaskedScorer(loaded.model, loaded.tokenizer, metric=metric, **common)
    return CausalScorer(loaded.model, loaded.tokenizer, bos=bos, stride=stride, share_prefixes=share_prefixes, **common)


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
    context: str | Sequence[str] | None = None,
    sep: str = " ",
    words: Words | None = None,
    word_sep: str = " ",
    mask_by: str | None = None,
    outputs: Sequence[str] = (),
    word_prob: str | None = None,
    convention: str = "paper",
    **load_kwargs: Any,
) -> Results:
    """One call: load ``model`` (unless it is already a scorer) and score ``texts``; the options are those of
    :meth:`MaskedScorer.score` and :meth:`CausalScorer.score`."""
    return as_scorer(model, **load_kwargs).score(  # type: ignore[call-arg]
        texts,
        metric=metric,
        context=context,
        sep=sep,
        words=words,
        word_sep=word_sep,
        mask_by=mask_by,
        outputs=outputs,
        word_prob=word_prob,
        convention=convention,
    )
