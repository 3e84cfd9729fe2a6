"""The scoring template every model kind shares: texts -> encode once -> the kind's run -> :class:`Results`.

:class:`Scorer` checks the model and tokenizer, holds the settings, and writes :meth:`Scorer.score`
once; a model kind is one subclass that fills the hooks :meth:`Scorer._metrics`,
:meth:`Scorer._encoding` and :meth:`Scorer._run` (and, where it differs, :meth:`Scorer._outputs` and
:meth:`Scorer._lm_eval_encoding`). See :mod:`pllscore.scoring.masked` and
:mod:`pllscore.scoring.causal`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import torch

from pllscore.engine.compiling import compile_layers
from pllscore.engine.loading import Kind, max_input_length
from pllscore.engine.models import class_kind, compute_types, model_kind
from pllscore.engine.padding import Batching, batching_for
from pllscore.engine.placement import input_device, placement_record
from pllscore.errors import InputError, ModelError, NonFiniteError
from pllscore.plan.align import Span
from pllscore.plan.words import check_mask_by, check_words
from pllscore.results.lazy import lazy_score
from pllscore.results.scores import Results, SentenceScore
from pllscore.scoring.encoded import special_flags, token_fields
from pllscore.scoring.encoding import (
    Encoded,
    Encodings,
    check_contexts,
    check_convention,
    check_long,
    check_texts,
    encode,
    targets,
)
from pllscore.scoring.outputs import check_outputs
from pllscore.scoring.predict import Predicting
from pllscore.scoring.run import Batch, Scored

#: what ``words=`` may be: a named mode, or one list of words per text
Words = str | Sequence[Sequence[str]]

__all__ = ["Batch", "Scored", "Scorer", "Words", "class_kind"]  # Batch, Scored, class_kind: re-exported

# padded tokens per batch when the caller gives none. On a CPU, 1024 keeps a layer's
# activations in the last-level cache; larger batches made scoring 5-10% slower (BENCHMARKS.md).
_DEFAULT_MAX_TOKENS = {"cuda": 32768, "mps": 8192, "cpu": 1024}


# the scorer class of each kind, named in the error for a model of another kind
_SCORER_OF = {"masked": "MaskedScorer", "causal": "CausalScorer", "seq2seq": "Seq2SeqScorer"}


class Scorer(Predicting):
    """What every scorer shares: model and tokenizer checks, settings, and the one scoring path.

    A model kind is a subclass with a ``kind`` and the hooks :meth:`_metrics`, :meth:`_encoding` and
    :meth:`_run` (see the module's docstring).
    """

    kind: Kind
    one_score = ""  # a kind with one score, named after it: what the score is (a metric's error)
    placement: dict[str, Any] | None = None  #: where a device map put the model (provenance)

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
        words: str = "tokenizer",
        mask_by: str = "tokenizer",
        compile: bool = False,
    ) -> None:
        actual = class_kind(model)
        if actual is not None and actual != model_kind(self.kind):
            raise ModelError(
                f"{type(model).__name__} is a {actual} LM, but {type(self).__name__} needs a {model_kind(self.kind)} "
                f"one; use {_SCORER_OF[actual]} or pllscore.load()"
            )
        if not getattr(tokenizer, "is_fast", False):
            raise ModelError(
                f"{type(tokenizer).__name__} is a slow tokenizer; pllscore needs a fast one (word ids and offsets)"
            )
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.placement = placement_record(model)
        self.name = name or getattr(model.config, "_name_or_path", "") or type(model).__name__
        self.revision = revision
        self.max_length = max_input_length(model.config, tokenizer)
        dev = input_device(model)
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            raise InputError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        self.max_tokens = max_tokens or _DEFAULT_MAX_TOKENS.get(dev.type, _DEFAULT_MAX_TOKENS["cpu"])
        self._pad_id = next(
            (i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id) if i is not None), 0
        )
        self._vocab_size = int(model.config.vocab_size)
        self.padding = self._batching()  # padded batches only where exact
        self.long = check_long(long)
        if not isinstance(words, str):
            raise InputError("a scorer's default words must be 'tokenizer' or 'whitespace'; give lists to score()")
        self.words = check_words(words, 0)
        self.mask_by = check_mask_by(mask_by)
        # the weights are used as they are: float32 weights with a reduced dtype are autocast to it (autocast=True
        # of pllscore.load); weights in a reduced type compute in it (dtype None: the weights' type)
        weights = getattr(model, "dtype", None)
        weights = weights if isinstance(weights, torch.dtype) else next(model.parameters()).dtype
        self.dtype, self._autocast = compute_types(dtype, weights)
        # opt-in: torch.compile of the model's layers, in place (pays only on long runs)
        self.compiled = bool(compile)
        if self.compiled:
            compile_layers(self.model)

    @property
    def _engine_options(self) -> dict[str, Any]:
        """What every engine is built with besides the model: the padding id, the vocabulary size, autocast."""
        return {"pad_token_id": self._pad_id, "vocab_size": self._vocab_size, "autocast": self._autocast}

    @property
    def autocast(self) -> bool:
        """Whether the model's float32 weights are autocast to :attr:`dtype` while scoring."""
        return self._autocast is not None

    @property
    def device(self) -> torch.device:
        """The device the model runs on (a model spread by ``device_map``: the device its inputs go to)."""
        return input_device(self.model)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, device={self.device}, max_tokens={self.max_tokens})"

    # -- the hooks a model kind fills ------------------------------------------------------------

    def _batching(self) -> Batching:
        """How the model must be batched to score exactly (:func:`~pllscore.engine.padding.batching_for`)."""
        return batching_for(self.model, self.tokenizer, self._pad_id)

    def _encode(self, texts: list[str], **options: Any) -> list[Encoded]:
        """Encode checked ``texts`` (:func:`~pllscore.scoring.encoding.encode`'s options); a kind whose model
        reads the texts otherwise (an encoder-decoder's source) overrides it."""
        return encode(self.tokenizer, texts, **options)

    def _metrics(self, metric: str | Sequence[str] | None) -> tuple[str, ...]:
        """The metrics ``score(metric=...)`` asks for, checked (None: the scorer's own); a kind with many
        (masked) overrides this, the kinds with one score (named after the kind) keep it."""
        if metric not in (None, self.kind):
            raise InputError(f"metric {metric!r} does not apply: {self.one_score}, so leave metric out")
        return (self.kind,)

    def _outputs(self, outputs: str | Sequence[str] | None, word_prob: str | None) -> tuple[str, ...]:
        """The per-token arrays :meth:`_run` must fill besides the scores (:func:`check_outputs`)."""
        return check_outputs(outputs, word_prob, self.kind)

    def _encoding(self) -> tuple[bool, int | None]:
        """(whether the tokenizer adds its special tokens, the token id put before a text or None)."""
        raise NotImplementedError

    def _lm_eval_encoding(self, contexts: Sequence[str] | None, n: int) -> tuple[bool, int | None | list[int | None]]:
        """As :meth:`_encoding`, under the ``"lm-eval"`` convention (the prefix may be one per text)."""
        return self._encoding()

    def _run(self, batch: Batch) -> Iterator[Scored]:
        """Run the model on ``batch``; yield one :class:`Scored` per (metric, text), metric-major."""
        raise NotImplementedError

    # -- the one path from texts to results ------------------------------------------------------

    def encode(
        self,
        texts: str | Iterable[str],
        *,
        long: str | None = None,
        context: str | Sequence[str] | None = None,
        sep: str = " ",
        words: Words | None = None,
        word_sep: str = " ",
        mask_by: str | None = None,
        convention: str = "paper",
    ) -> Encodings:
        """Check ``texts`` and encode each, after its ``context``, as this scorer scores it.

        The options are those of :meth:`score` (None: the scorer's); ``score(encodings)`` then scores
        them without encoding them again. Raises the error that scoring ``texts`` would raise.
        """
        options = {"long": long, "context": context, "sep": sep, "words": words, "word_sep": word_sep}
        out = self._encodings(texts, **options, mask_by=mask_by, convention=convention)
        if not out.texts:
            check_contexts(context, 0, sep)
            check_convention(convention)
        return out

    def check(self, texts: str | Iterable[str], **options: Any) -> int:
        """Raise the error that scoring ``texts`` would raise, without scoring; return the token count
        (contexts included). ``options``: the encoding options of :meth:`encode` (``long``, ``context``,
        ``sep``, ``words``, ``word_sep``, ``mask_by``, ``convention``)."""
        return self.encode(texts, **options).n_tokens

    def score(
        self,
        texts: str | Iterable[str] | Encodings,
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
        """Score texts: masked LMs by their pseudo-log-likelihood under one or more PLL metrics, causal
        LMs by their log-likelihood. Scores are in nats.

        Args:
            texts: a string, a list of strings, or :class:`~pllscore.scoring.encoding.Encodings` from
                :meth:`encode` (then ``long``, ``context``, ``sep``, ``words``, ``word_sep``, ``mask_by``
                and ``convention`` were given to :meth:`encode` and must be left out here).
            metric: a masked LM's ``"word-l2r"`` (default), ``"original"``, ``"whole-word"``,
                ``"sentence-l2r"``, a list of them, or ``"all"``; ``None`` means the scorer's own
                metric. A causal LM's score is its log-likelihood: leave ``metric`` out (or ``"causal"``).
            progress: show a progress bar (``None``: only when stderr is a terminal).
            spans: per text, a character span ``(start, stop)`` (or None for all): a token is scored when
                its anchor, the first non-space character at or after its start (else the text's last one),
                is in ``start <= anchor < stop``, not when it merely overlaps; others are NaN (context).
            long: ``"error"`` (default: the scorer's) refuses texts longer than the model allows;
                ``"window"`` scores them in windows of the model's length: a masked LM scores each
                token in a window centred on it (see :mod:`pllscore.plan.windows`); a causal LM's
                windows advance by ``stride`` tokens, each token conditioned on at least
                ``max_length - stride`` tokens before it.
            context: a string before every text, or one string per text (``""``: none). Each text is
                scored given its context: the model reads ``context + sep + text`` (a causal LM after
                BOS), the context is never masked and only the text's tokens are scored (``sentence-l2r``
                masks to the right within the text; a causal LM gives log P(text | context)). Tokens,
                words and spans of the results are the text's own.
            sep: what joins a context and its text (default one space).
            words: what the results call words (``None``: the scorer's, ``"tokenizer"`` by default):
                ``"tokenizer"`` (the tokenizer's ``word_ids()`` groups), ``"whitespace"`` (runs of
                non-whitespace: "dog." is one word; the words of reading-time studies), or per text a
                list of words that, joined by ``word_sep``, are the text exactly. A token belongs to the
                word where it starts (see :mod:`pllscore.plan.words`); a word with no token of its own
                scores NaN.
            word_sep: what joins the words of a list into its text (default one space; ``""`` for
                text written without spaces).
            mask_by: what a masked LM's ``word-l2r`` and ``whole-word`` mask (``None``: the scorer's):
                ``"tokenizer"`` (default, the paper's definition: the tokenizer's words) or ``"words"``
                (the user's words: word-l2r masks the target and the later tokens of its user word,
                whole-word the whole user word). A causal LM masks nothing: accepted, does nothing.
            outputs: per-token outputs besides the log-probability: ``"entropy"`` (nats) of the
                model's distribution that scores the token (a masked LM's at the masked position,
                under each metric) and ``"rank"`` of the token there (see :mod:`pllscore.scoring.outputs`).
            word_prob: ``"sum"`` (default); ``"bow"`` corrects a causal LM's word scores for a
                word-beginning-marking tokenizer (:mod:`pllscore.scoring.bow`; token scores and totals
                are unchanged) and is refused for a masked LM.
            convention: ``"paper"`` (default) scores the text as given; ``"lm-eval"`` as
                lm-evaluation-harness scores a continuation of an empty context: ``sep + text``
                (for a byte-level BPE the first token is ``" The"``, not ``"The"``); a causal LM follows
                lm-eval's HFLM exactly: a text without a context comes after lm-eval's prefix token
                (BOS, else EOS), a text with a context after only the tokenizer's own special tokens
                (GPT-2: none), split from it as ``_encode_pair`` splits (a token across the join is
                scored only after as many tokens as the context has alone). A text may then be
                whitespace only (lm-eval's ``"\\n"``). Tokens, words and spans still index into the text.

        Returns:
            One :class:`SentenceScore` per (metric, text), metric-major.
        """
        metrics = self._metrics(metric)
        asked = self._outputs(outputs, word_prob)
        options = {"long": long, "context": context, "sep": sep, "words": words, "word_sep": word_sep}
        encodings = self._encoded(texts, {**options, "mask_by": mask_by, "convention": convention})
        return self._results(encodings, metrics, asked, spans, progress) if encodings.texts else Results()

    # -- the steps of that path --------------------------------------------------------------------

    def _encoded(self, texts: str | Iterable[str] | Encodings, options: dict[str, Any]) -> Encodings:
        """``texts`` encoded with the encoding ``options`` of :meth:`score`, or given encoded (then with none)."""
        if not isinstance(texts, Encodings):
            return self._encodings(texts, **options)
        defaults = {"long": None, "context": None, "sep": " ", "words": None, "word_sep": " ", "mask_by": None}
        defaults["convention"] = "paper"
        again = [k for k, v in options.items() if not (v is None if defaults[k] is None else v == defaults[k])]
        if again:
            raise InputError(
                f"the texts are already encoded; give {', '.join(again)} to encode() with them, not to score()"
            )
        if texts.made_by != self._made_by():
            raise InputError(
                f"these encodings were made by {texts.made_by or 'another scorer'}, not by {self._made_by()}; "
                "encode the texts with the scorer that scores them"
            )
        return texts

    def _encodings(
        self,
        given: str | Iterable[str],
        *,
        long: str | None,
        context: str | Sequence[str] | None,
        sep: str,
        words: Words | None,
        word_sep: str,
        mask_by: str | None,
        convention: str,
    ) -> Encodings:
        """:meth:`encode` without its checks of the options when there are no texts (``score([])`` is empty)."""
        texts = check_texts(given, blank=convention == "lm-eval")  # lm-eval scores a continuation of whitespace
        chosen: Words = self.words if words is None else words
        made = {"long": long or self.long, "sep": sep, "word_sep": word_sep, "convention": convention}
        made.update(mask_by=self.mask_by if mask_by is None else mask_by, made_by=self._made_by())
        if not texts:
            return Encodings(texts, [], words=chosen, **made)
        contexts = check_contexts(context, len(texts), sep)
        chosen = check_words(chosen, len(texts), single=isinstance(given, str))
        if not isinstance(word_sep, str):
            raise InputError(f"word_sep must be a string (what joins the words of a text), got {word_sep!r:.40}")
        lm_eval = check_convention(convention) == "lm-eval"
        add, prefix = self._lm_eval_encoding(contexts, len(texts)) if lm_eval else self._encoding()
        windowed = check_long(made["long"]) == "window"
        mask = check_mask_by(made["mask_by"])
        model: dict[str, Any] = {
            "name": self.name,
            "max_length": self.max_length,
            "add_special_tokens": add,
            "prefix": prefix,
        }
        text: dict[str, Any] = {
            "contexts": contexts,
            "sep": sep,
            "words": chosen,
            "word_sep": word_sep,
            "mask_by": mask,
        }
        encoded = self._encode(texts, allow_long=windowed, lead_sep=lm_eval, **model, **text)
        return Encodings(texts, encoded, context=contexts, words=chosen, **made)

    def _results(
        self,
        encodings: Encodings,
        metrics: tuple[str, ...],
        asked: tuple[str, ...],
        spans: Sequence[Span | None] | None,
        progress: bool | None,
    ) -> Results:
        """Score ``encodings`` (at least one text) through the kind's :meth:`_run`; check every score is finite."""
        items, encoded = encodings.texts, encodings.encoded
        keeps = targets(encoded, spans, items)
        results = []
        for row in self._run(Batch(encoded, keeps, metrics, asked, progress)):
            i = row.index
            self._check_finite(i, row.values, row.read)
            results.append(self._result(i, items[i], encoded[i], row.metric, row.values, **row.extra))
        return Results(tuple(results))

    def _made_by(self) -> str:
        """What an :class:`Encodings` of this scorer depends on besides its options."""
        return f"{type(self).__name__}({self.name!r}, max_length={self.max_length}, encoding={self._encoding()})"

    def _check_finite(self, index: int, values: np.ndarray, read: np.ndarray | None) -> None:
        """Raise :class:`NonFiniteError` if a token the engine scored (``read``; None: all) got NaN or inf.

        NaN also marks a token that was not scored (outside ``spans``, a causal LM's first token
        without BOS); those are left out of the check, the tokens the engine read are not.
        """
        checked = values if read is None else values[read]
        bad = ~np.isfinite(checked)
        if bad.any():
            raise NonFiniteError(index, float(checked[bad][0]), str(self.dtype).removeprefix("torch."))

    def _result(
        self, index: int, text: str, enc: Encoded, metric: str, logprobs: np.ndarray, **extra: np.ndarray
    ) -> SentenceScore:
        """The :class:`SentenceScore`; ``extra``: optional per-token arrays (entropy, rank, word_correction).

        Its tokens are the text's and, in sequence order among them, the special tokens the kind scores
        (:attr:`Encoded.specials`: word -1, an empty span at the text's start or end). What it lists per
        token and word (pieces, spans, words, anchors) is made when first read (:mod:`pllscore.results.lazy`).
        """
        return lazy_score(
            token_fields,
            (text, enc),
            n_words=enc.n_words,
            index=index,
            text=text,
            metric=metric,
            model=self.name,
            logprobs=np.asarray(logprobs, dtype=np.float64),
            special=special_flags(enc),
            **{k: np.asarray(v, dtype=np.float64) for k, v in extra.items()},
        )
