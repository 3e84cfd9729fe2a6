"""Log P(text | source) with an encoder-decoder LM (T5, BART, Marian, Pegasus, ...): the seq2seq kind's hooks.

Encoded texts, each with its source (:attr:`~pllscore.scoring.encoding.Encoded.source`) ->
:class:`~pllscore.engine.seq2seq.Seq2SeqEngine` (the encoder once per distinct source, the decoder
teacher-forced) -> per text the log-probability of each of its tokens.

Two conventions (``convention=``):

- ``"paper"`` (default): the model's own loss. The source is the context encoded with the
  tokenizer's special tokens (no context: ``tokenizer("")``, e.g. T5's lone ``</s>``); the scored
  tokens are the text encoded with its special tokens, i.e. the labels of
  ``model(input_ids=source, labels=tokenizer(text).input_ids)`` (T5: the text and ``</s>``; BART:
  ``<s>``, the text and ``</s>``), so the total is minus the model's summed loss. The special
  tokens are listed among the results' tokens (``special``, word -1); ``eos=False`` leaves them
  out of the total (the decoder still reads them).
- ``"lm-eval"``: lm-evaluation-harness 0.4's ``HFLM(backend="seq2seq").loglikelihood``. The
  context's trailing whitespace moves to the continuation (``sep + text``); the context is encoded
  with special tokens, the continuation without (nothing special scored); an empty context is the
  single prefix token (the tokenizer's BOS, else EOS), while a whitespace-only one (``" "``, ``"\\n"``) is
  ``""`` encoded with the tokenizer's special tokens (BART: ``<s></s>``; T5: ``</s>``), as lm-eval's
  ``_encode_pair`` reads it.

``sep`` joins context and text only under ``"lm-eval"``; the model reads the source apart from the text.
Texts and sources longer than the model allows are refused (there are no windows for this kind).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from pllscore.engine.loading import Kind, encode_text
from pllscore.engine.padding import Batching
from pllscore.engine.seq2seq import Seq2SeqEngine
from pllscore.errors import InputError, InputTooLongError, ModelError
from pllscore.scoring.base import Scorer
from pllscore.scoring.encoding import Encoded, encode
from pllscore.scoring.outputs import wants_for
from pllscore.scoring.run import Batch, Scored

__all__ = ["SEQ2SEQ_PADDED", "Seq2SeqScorer"]

#: encoder-decoder architectures whose padded batches equal one text per pass (the matrix proves it)
SEQ2SEQ_PADDED = frozenset({"t5", "mt5", "umt5", "bart", "mbart", "marian", "pegasus", "m2m_100", "nllb-moe"})


class Seq2SeqScorer(Scorer):
    """Log P(text | source) by teacher forcing with an encoder-decoder LM (T5, Flan-T5, mT5, BART, mBART, Marian,
    Pegasus, ...).

    :meth:`score` gives each text's log-probability given its ``context`` (the source; none: the empty
    source) in nats; ``metric`` is left out (or ``"seq2seq"``). With ``eos=True`` (default) the text's
    special tokens (the closing EOS; BART's leading BOS too) count in the total, as in the model's loss.
    """

    kind: Kind = "seq2seq"
    one_score = "an encoder-decoder LM's score is log P(text | source)"

    def __init__(self, model: Any, tokenizer: Any, *, eos: bool = True, **kwargs: Any) -> None:
        super().__init__(model, tokenizer, **kwargs)
        if self.long == "window":
            raise InputError(self._no_windows())
        self.eos = bool(eos)
        self.engine = Seq2SeqEngine(model, padding=self.padding, **self._engine_options)

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, eos={self.eos})"

    def _no_windows(self) -> str:
        return (
            f"long='window' is not available for encoder-decoder models ({self.name!r}): a text is scored given its "
            "whole source; shorten or split the texts, and leave long out"
        )

    def _batching(self) -> Batching:
        arch = getattr(self.model.config, "model_type", None)
        if arch in SEQ2SEQ_PADDED:
            return "pad"
        print(
            f"pllscore: note: {arch} is not on pllscore's proven list of encoder-decoder models and runs one text "
            "per pass (slower)",
            file=sys.stderr,
        )
        return "single"

    def _encoding(self) -> tuple[bool, int | None]:
        return True, None

    def _lm_eval_encoding(self, contexts: Sequence[str] | None, n: int) -> tuple[bool, int | None | list[int | None]]:
        return False, None

    def _made_by(self) -> str:
        return f"{super()._made_by()[:-1]}, eos={self.eos})"

    def _prefix(self) -> int:
        """lm-eval's prefix token, the source of an empty context: BOS, else EOS."""
        tok = self.tokenizer
        start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        if start is None:
            raise ModelError(f"the tokenizer of {self.name!r} has neither a BOS nor an EOS token for lm-eval's prefix")
        return int(start)

    def _encode(self, texts: list[str], **options: Any) -> list[Encoded]:
        """The texts as the decoder's labels, each with its source (see the module's docstring)."""
        if options.pop("allow_long"):
            raise InputError(self._no_windows())
        contexts = options.pop("contexts") or [""] * len(texts)
        lm_eval, sep, limit = options.pop("lead_sep"), options.pop("sep"), options["max_length"]
        sources: list[str | None]
        if lm_eval:  # the continuation is the context's trailing whitespace, sep and the text
            leads = [c[len(c.rstrip()) :] + sep for c in contexts]
            # an empty context is lm-eval's prefix token (None); a whitespace-only one is tokenizer("")
            sources = [c.rstrip() if c else None for c in contexts]
        else:
            leads, sources = [""] * len(texts), list(contexts)
        out: list[Any] = [None] * len(texts)
        for lead in dict.fromkeys(leads):
            rows = [i for i, x in enumerate(leads) if x == lead]
            group = [texts[i] for i in rows]
            encoded = encode(self.tokenizer, group, **options, allow_long=True, lead_sep=bool(lead), sep=lead)
            for i, e in zip(rows, encoded):
                out[i] = e
        ids = self._source_ids(sources)
        for i, (e, src) in enumerate(zip(out, ids)):
            for what, n in (("text", len(e.ids)), ("source", len(src))):
                if limit is not None and n > limit:
                    raise InputTooLongError(i, n, limit, part=what, windows=False)
            specials = self._specials(e) if self.eos and not lm_eval else ()
            out[i] = replace(e, source=tuple(src), specials=specials)
        return out

    def _source_ids(self, sources: list[str | None]) -> list[list[int]]:
        """Per text, the encoder's ids: its source with the tokenizer's special tokens (``""`` too: BART's
        ``<s></s>``), or lm-eval's prefix token for None (lm-eval's empty context)."""
        distinct = list(dict.fromkeys(s for s in sources if s is not None))
        enc = encode_text(self.tokenizer, distinct, True)["input_ids"] if distinct else []
        ids = {s: list(e) for s, e in zip(distinct, enc)}
        return [ids[s] if s is not None else [self._prefix()] for s in sources]

    @staticmethod
    def _specials(e: Encoded) -> tuple[int, ...]:
        """The positions of the labels' special tokens (before and after the text's)."""
        text = set(e.positions)
        first, last = min(text), max(text)
        return tuple(p for p in range(len(e.ids)) if p not in text and (p < first or p > last))

    def _run(self, batch: Batch) -> Iterator[Scored]:
        encoded, keeps, asked = batch.encoded, batch.keeps, batch.asked
        wants = wants_for(asked) if asked else None
        sources = [e.source or () for e in encoded]
        outs = self.engine.run(
            sources, [e.ids for e in encoded], max_tokens=self.max_tokens, wants=wants, progress=batch.progress
        )
        for i, (e, out) in enumerate(zip(encoded, outs)):
            text = list(e.positions)
            order = sorted([*text, *e.specials])
            values = out["logprob"][order]
            read = None
            if keeps[i] is not None:  # a token outside the span is NaN, and not checked; so is a special token
                kept = {p for p, k in zip(text, keeps[i]) if k}
                read = np.array([p in kept for p in order], dtype=bool)
                values = np.where(read, values, np.nan)
            extra = {n: np.where(np.isnan(values), np.nan, out[n][order]) for n in asked if n in out}
            yield Scored("seq2seq", i, values, read, extra)
