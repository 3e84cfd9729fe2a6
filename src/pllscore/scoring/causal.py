"""Log-likelihood scoring with a causal LM: the causal kind's hooks of the scoring template.

Encoded texts -> sequences (windows for long ones, :class:`~pllscore.scoring.stitching.CausalWork`)
-> :class:`~pllscore.engine.causal.CausalEngine` -> per text the chain-rule log-probability of each
of its tokens, and the word-beginning correction of ``word_prob="bow"`` (:mod:`pllscore.scoring.bow`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from pllscore.engine.causal import CausalEngine
from pllscore.engine.loading import Kind
from pllscore.errors import InputError, ModelError
from pllscore.scoring.base import Batch, Scored, Scorer
from pllscore.scoring.bow import BowTokens, bow_adjust
from pllscore.scoring.outputs import wants_for
from pllscore.scoring.stitching import CausalWork, causal_values

__all__ = ["CausalScorer"]


class CausalScorer(Scorer):
    """Log-likelihood scoring with a causal LM (GPT-2, Llama-family, ...).

    With ``bos=True`` (default) the BOS token (else EOS, as for GPT-2's ``<|endoftext|>``)
    is put before the text unless the tokenizer adds one itself, and every token of the text
    is scored. With ``bos=False`` the first token has no context and is left unscored (NaN).
    :meth:`score` gives log P(text) (or log P(text | context)) in nats; ``metric`` is left out.
    """

    kind: Kind = "causal"
    one_score = "a causal LM's score is its log-likelihood (metrics are masked-LM PLL metrics)"

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
        self._bow: BowTokens | None = None
        self._prefix = None
        self._adds_bos = False
        if self.bos:
            start = self._start_token("; pass bos=False")
            plain, auto = self._around_a()
            self._adds_bos = auto[:1] == [start] and plain[:1] != [start]
            self._prefix = None if self._adds_bos else start
        self.engine = CausalEngine(
            model, share_prefixes=self.share_prefixes, padding=self.padding, **self._engine_options
        )

    def _start_token(self, fix: str) -> int:
        """The token put before a text: BOS, else EOS (GPT-2's ``<|endoftext|>``); ``fix``: what the error advises."""
        tok = self.tokenizer
        start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        if start is None:
            raise ModelError(f"the tokenizer of {self.name!r} has neither a BOS nor an EOS token{fix}")
        return start  # type: ignore[no-any-return]

    def _around_a(self) -> tuple[list[int], list[int]]:
        """The ids of ``"a"`` without and with the tokenizer's own special tokens: what it adds around a text."""
        tok = self.tokenizer
        return tok("a", add_special_tokens=False)["input_ids"], tok("a", add_special_tokens=True)["input_ids"]

    def _outputs(self, outputs: str | Sequence[str] | None, word_prob: str | None) -> tuple[str, ...]:
        asked = super()._outputs(outputs, word_prob)
        if "word_correction" in asked:
            self._bow_tokens()  # a tokenizer without word-beginning tokens fails before any encoding
        return asked

    def _bow_tokens(self) -> BowTokens:
        if self._bow is None:
            self._bow = BowTokens(self.tokenizer, self._vocab_size, self.name)
        return self._bow

    def _encoding(self) -> tuple[bool, int | None]:
        return self._adds_bos, self._prefix

    def _lm_eval_encoding(self, contexts: Sequence[str] | None, n: int) -> tuple[bool, int | None | list[int | None]]:
        # lm-eval's TemplateLM.loglikelihood: an empty context is [prefix_token_id] (HFLM: BOS, else EOS)
        # before tok_encode(continuation, add_special_tokens=False); a context goes through _encode_pair,
        # whose tok_encode adds the tokenizer's own special tokens and no prefix
        if not self.bos:
            raise InputError("convention='lm-eval' conditions a text on lm-eval's prefix token (BOS); drop bos=False")
        start = self._start_token(" for lm-eval's prefix")
        plain, auto = self._around_a()
        if auto == [start, *plain]:  # the tokenizer adds the prefix token itself, with a context or without
            return True, None
        if auto != plain:
            raise ModelError(
                f"the tokenizer of {self.name!r} adds {auto[: -len(plain) or None]} around a text; "
                "convention='lm-eval' is implemented for tokenizers that add nothing or only the BOS token"
            )
        return False, [None if c else start for c in (contexts or [""] * n)]

    def _run(self, batch: Batch) -> Iterator[Scored]:
        encoded, keeps, asked, progress = batch.encoded, batch.keeps, batch.asked, batch.progress
        bow = self._bow_tokens() if "word_correction" in asked else None
        work = CausalWork.build(encoded, self.max_length, self.stride)
        # the bar counts what the engine runs: windows when some text is cut into several
        unit = "window" if any(len(ws) > 1 for ws in work.windows) else "text"
        run_kw: dict[str, Any] = {"max_tokens": self.max_tokens, "progress": progress, "unit": unit}
        if asked:
            wants = wants_for(asked, None if bow is None else bow.end_mask())
            per_text = list(work.outputs(self.engine.run_outputs(work.sequences, wants, **run_kw)))
        else:
            runs = self.engine.run(work.sequences, **run_kw)
            per_text = [{"logprob": lp} for lp in work.logprobs(runs)]
        for i, (e, out) in enumerate(zip(encoded, per_text)):
            values, read = causal_values(e, out["logprob"])
            keep = keeps[i]
            if keep is not None:  # a token outside the span is NaN, and not checked
                read, values = keep if read is None else read & keep, np.where(keep, values, np.nan)
            extra = {n: np.where(np.isnan(values), np.nan, causal_values(e, out[n])[0]) for n in asked if n in out}
            if bow is not None:
                adjust = bow_adjust(e.ids, e.positions, e.lead, e.trail, out["set"], bow)
                extra["word_correction"] = np.where(np.isnan(values), np.nan, adjust)
            yield Scored("causal", i, values, read, extra)
