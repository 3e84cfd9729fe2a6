"""Masked next-token prediction (MNTP): a masked LM read as GPT-BERT and the BabyLM hybrids are trained.

An MNTP model predicts a masked token from the output one position before it: with token ``i``
masked, its log-probability is read from the logits at position ``i - 1``. Every PLL metric masks
the same copies as the masked kind does (:func:`~pllscore.plan.masks.mask_positions`); only the
read moves one position to the left (:class:`~pllscore.engine.masked.MaskedEngine`'s
``read_offset``). The first token of a text is read from the token before it: the tokenizer's
own (BERT's ``[CLS]``), else a CLS or BOS token put in front, as a causal LM's BOS is.
"""

from __future__ import annotations

from typing import Any

from pllscore.engine.loading import Kind
from pllscore.errors import ModelError
from pllscore.scoring.masked import MaskedScorer

__all__ = ["MntpScorer"]


class MntpScorer(MaskedScorer):
    """Pseudo-log-likelihood scoring of a masked LM trained with masked next-token prediction (GPT-BERT).

    The four PLL metrics mask what they mask for :class:`MaskedScorer`; each masked token is read from
    the output at the position before it. ``predict`` reads a slot's distribution one position before
    its first open mask.
    """

    kind: Kind = "mntp"
    read_offset = 1

    def __init__(self, model: Any, tokenizer: Any, **kwargs: Any) -> None:
        super().__init__(model, tokenizer, **kwargs)
        #: the token put before a text (None: the tokenizer puts its own there)
        self.prefix = self._start_token()

    def _start_token(self) -> int | None:
        """The token put before a text so that its first token has a position to be read from: None when the
        tokenizer puts one there itself (``[CLS]``), else its CLS token, else its BOS token."""
        tok = self.tokenizer
        plain = tok("a", add_special_tokens=False)["input_ids"]
        auto = tok("a", add_special_tokens=True)["input_ids"]
        if auto[: len(plain)] != plain:  # a special token comes before the text
            return None
        start = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
        if start is None:
            raise ModelError(
                f"the tokenizer of {self.name!r} puts no token before a text and has no CLS or BOS token, so an "
                "MNTP reading has no position to read a text's first token from; load it with kind='masked'"
            )
        return start  # type: ignore[no-any-return]

    def _encoding(self) -> tuple[bool, int | None]:
        return True, self.prefix
