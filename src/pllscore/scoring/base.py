"""The common ground of the masked and causal scorers: model and tokenizer checks, settings, encoding, results."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch

from pllscore.engine.compiling import compile_layers
from pllscore.engine.loading import Kind, detect_kind, max_input_length, resolve_dtype
from pllscore.errors import InputError, ModelError, NonFiniteError
from pllscore.plan.words import check_mask_by, check_words
from pllscore.results.scores import SentenceScore
from pllscore.scoring.encoding import Encoded, check_contexts, check_convention, check_long, check_texts, encode

#: what ``words=`` may be: a named mode, or one list of words per text
Words = str | Sequence[Sequence[str]]

__all__ = ["Scorer"]

# padded tokens per batch when the caller gives none. On a CPU, 1024 keeps a layer's
# activations in the last-level cache; larger batches made scoring 5-10% slower (BENCHMARKS.md).
_DEFAULT_MAX_TOKENS = {"cuda": 32768, "mps": 8192, "cpu": 1024}


def _model_kind(model: Any) -> Kind | None:
    name = type(model).__name__
    if name.endswith("ForMaskedLM"):
        return "masked"
    if name.endswith(("ForCausalLM", "LMHeadModel")):
        return "causal"
    return detect_kind(model.config)


class Scorer:
    """Common ground of the masked and causal scorers: tokenization, checks, settings.

    A subclass says how its texts are encoded by :meth:`_encoding` (special tokens, a prefix).
    """

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
        words: str = "tokenizer",
        mask_by: str = "tokenizer",
        compile: bool = False,
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
        self.long = check_long(long)
        if not isinstance(words, str):
            raise InputError("a scorer's default words must be 'tokenizer' or 'whitespace'; give lists to score()")
        self.words = check_words(words, 0)
        self.mask_by = check_mask_by(mask_by)
        self.dtype = resolve_dtype(dtype)
        # weights in a reduced type are used as they are; float32 weights get autocast to `dtype`
        self._autocast = None if self.dtype == torch.float32 else self.dtype
        # opt-in: torch.compile of the model's layers, in place (pays only on long runs)
        self.compiled = bool(compile)
        if self.compiled:
            compile_layers(self.model)

    @property
    def device(self) -> torch.device:
        """The device the model runs on."""
        return next(self.model.parameters()).device

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, device={self.device}, max_tokens={self.max_tokens})"

    def _encoding(self) -> tuple[bool, int | None]:
        """(whether the tokenizer adds its special tokens, the token id put before a text or None)."""
        raise NotImplementedError

    def _lm_eval_encoding(self, contexts: Sequence[str] | None, n: int) -> tuple[bool, int | None | list[int | None]]:
        """As :meth:`_encoding`, under the ``"lm-eval"`` convention (the prefix may be one per text)."""
        return self._encoding()

    def _encode(
        self,
        given: str | Iterable[str],
        long: str | None,
        context: str | Sequence[str] | None = None,
        sep: str = " ",
        *,
        words: Words | None = None,
        word_sep: str = " ",
        mask_by: str | None = None,
        convention: str = "paper",
    ) -> tuple[list[str], list[Encoded]]:
        """The texts ``given`` (checked) and each encoded, after its ``context``, as this scorer scores
        it; no texts: nothing is encoded. ``long``, ``words`` and ``mask_by`` (None: the scorer's) as
        :meth:`MaskedScorer.score` takes them (one string given: one list of strings is its words);
        ``convention``: see :mod:`pllscore.scoring.encoding`."""
        texts = check_texts(given)
        if not texts:
            return texts, []
        contexts = check_contexts(context, len(texts), sep)
        chosen = check_words(self.words if words is None else words, len(texts), single=isinstance(given, str))
        if not isinstance(word_sep, str):
            raise InputError(f"word_sep must be a string (what joins the words of a text), got {word_sep!r:.40}")
        lm_eval = check_convention(convention) == "lm-eval"
        add, prefix = self._lm_eval_encoding(contexts, len(texts)) if lm_eval else self._encoding()
        windowed = check_long(long or self.long) == "window"
        return texts, encode(
            self.tokenizer,
            texts,
            name=self.name,
            max_length=self.max_length,
            add_special_tokens=add,
            prefix=prefix,
            allow_long=windowed,
            contexts=contexts,
            sep=sep,
            words=chosen,
            word_sep=word_sep,
            mask_by=check_mask_by(self.mask_by if mask_by is None else mask_by),
            lead_sep=lm_eval,
        )

    def check(
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
    ) -> int:
        """Raise the error that scoring ``texts`` would raise, without scoring; return the token count
        (contexts included)."""
        items, encoded = self._encode(
            texts, long, context, sep, words=words, word_sep=word_sep, mask_by=mask_by, convention=convention
        )
        if not items:
            check_contexts(context, 0, sep)
            check_convention(convention)
        return sum(len(e.ids) for e in encoded)

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

    def _result(
        self, index: int, text: str, enc: Encoded, metric: str, logprobs: np.ndarray, **extra: np.ndarray
    ) -> SentenceScore:
        """The :class:`SentenceScore`; ``extra``: optional per-token arrays (entropy, rank, word_correction)."""
        al = enc.reported
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
            **{k: np.asarray(v, dtype=np.float64) for k, v in extra.items()},
        )
