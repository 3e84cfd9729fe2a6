"""Per-token explanation of a sentence's score under every metric (the paper's Figure 2).

:func:`explain` scores texts under several PLL metrics (and optionally a causal LM) and
returns an :class:`Explanation`: a per-token table grouped by word, with word and sentence
totals, as a DataFrame, as text, or as a figure.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pllscore.errors import ModelError
from pllscore.plan.align import owners
from pllscore.results.columns import score_column_name
from pllscore.results.scores import Results, SentenceScore

__all__ = ["Explanation", "explain"]


@dataclass(frozen=True)
class Explanation:
    """Scores of the same texts under several metrics, ready to compare token by token.

    Attributes:
        masked: the masked LM's results, metric-major (see :class:`~pllscore.results.scores.Results`).
        causal: the causal LM's results, or None.
        metrics: the masked metrics, in column order.
    """

    masked: Results
    causal: Results | None
    metrics: tuple[str, ...]

    @property
    def n_texts(self) -> int:
        return len(self.masked) // len(self.metrics)

    def sentence(self, i: int) -> list[SentenceScore]:
        """Text ``i`` under each metric."""
        return [self.masked[k * self.n_texts + i] for k in range(len(self.metrics))]

    def causal_word_scores(self, i: int) -> np.ndarray | None:
        """The causal LM's score of each word of the masked model's text ``i``.

        With the user's words (``words=``), both models have the same words and the causal LM's
        own word scores are used. With the tokenizers' words, a causal token counts towards the
        word in which its first non-space character lies, so words line up even where the two
        tokenizers split text differently (the one rule of :func:`pllscore.plan.align.anchors`). A word none
        of whose causal tokens was scored is NaN, not 0.
        """
        if self.causal is None:
            return None
        ref, c = self.sentence(i)[0], self.causal[i]
        if tuple(c.word_spans) == tuple(ref.word_spans):
            return c.word_scores
        sums = np.zeros(ref.n_words)
        scored = np.zeros(ref.n_words, dtype=bool)
        # an encoder-decoder's </s> is in the total, in no word
        text = ~c.is_special
        for w, lp in zip(owners(c.token_anchors[text].tolist(), ref.word_spans), c.token_scores[text]):
            if not np.isnan(lp):
                sums[w] += lp
                scored[w] = True
        return np.where(scored, sums, np.nan)

    def table(self, i: int) -> Any:
        """Text ``i`` as a DataFrame: one row per token, then a row per multi-token word total
        and a sentence total (``level``: token, word or sentence); ``word`` and ``token`` (a token's piece, or
        what the row totals), then one column per metric (``word_l2r_logprob``; and ``causal_logprob`` for word
        and sentence rows), the names of ``docs/reference/columns.md``."""
        import pandas as pd

        results = self.sentence(i)
        ref = results[0]
        col = {m: score_column_name(m, ref.surprisal, ref.unit) for m in (*self.metrics, "causal")}
        causal = col["causal"]
        causal_words = self.causal_word_scores(i)
        word_scores = [r.word_scores for r in results]
        rows: list[dict[str, Any]] = []
        for w, (a, b) in enumerate(ref.word_spans):
            members = np.flatnonzero(ref.word_index == w)
            if not len(members):  # a user's word with no token of its own (see pllscore.plan.words)
                row = {"word": ref.text[a:b], "token": "(no token)", "level": "word"}
                row.update(dict.fromkeys((col[m] for m in self.metrics), np.nan))
                if causal_words is not None:
                    row[causal] = float(causal_words[w])
                rows.append(row)
            for t in members:
                row = {"word": ref.text[a:b] if t == members[0] else "", "token": ref.pieces[t], "level": "token"}
                row.update({col[m]: float(r.token_scores[t]) for m, r in zip(self.metrics, results)})
                if causal_words is not None:
                    row[causal] = float(causal_words[w]) if len(members) == 1 else np.nan
                rows.append(row)
            if len(members) > 1:
                row = {"word": "", "token": "= word", "level": "word"}
                row.update({col[m]: float(s[w]) for m, s in zip(self.metrics, word_scores)})
                if causal_words is not None:
                    row[causal] = float(causal_words[w])
                rows.append(row)
        total = {"word": "sentence", "token": "total", "level": "sentence"}
        total.update({col[m]: r.total for m, r in zip(self.metrics, results)})
        if self.causal is not None:
            total[causal] = self.causal[i].total
        rows.append(total)
        return pd.DataFrame(rows)

    def render(self, *, digits: int = 2) -> str:
        """The tables of all texts as plain text (each score column headed by its metric's name)."""
        blocks = []
        for i in range(self.n_texts):
            ref = self.sentence(i)[0]
            frame = self.table(i).drop(columns="level")
            shown = {score_column_name(m, ref.surprisal, ref.unit): m for m in (*self.metrics, "causal")}
            frame = frame.rename(columns=shown)
            head = f"{ref.text}\n  {ref.model}" + (f" + causal {self.causal[i].model}" if self.causal else "")
            head += f" | log-probabilities in {ref.unit}; higher = more expected"
            text_cols = {c: frame[c].astype(str).str.len().max() for c in ("word", "token")}
            formatters = {c: (lambda v, n=n: f"{v:<{n}}") for c, n in text_cols.items()}
            body = frame.to_string(
                index=False, na_rep="", float_format=lambda x: f"{x:.{digits}f}", formatters=formatters
            )
            blocks.append(head + "\n" + body)
        return "\n\n".join(blocks)

    def plot(self, path: str | os.PathLike[str]) -> str:
        """Draw the explanation to ``path`` (.png, .svg or .pdf); returns the path."""
        from pllscore.analysis.plotting.explain import plot_explanation

        return plot_explanation(self, path)


def explain(
    texts: str | Iterable[str],
    model: Any,
    *,
    causal_model: Any = None,
    metrics: str | Sequence[str] = "all",
    device: str = "auto",
    dtype: str | None = None,
    plot: str | os.PathLike[str] | None = None,
    words: Any = None,
    word_sep: str = " ",
    mask_by: str | None = None,
) -> Explanation:
    """Score ``texts`` under every metric (and a causal LM) for a token-by-token comparison.

    Args:
        texts: a string or a list of strings.
        model: a masked LM: Hub name, local folder or loaded :class:`~pllscore.MaskedScorer`.
        causal_model: optionally a causal LM to show beside it (per word and sentence), or an encoder-decoder
            LM (each text given the empty source; its closing ``</s>`` counts in its total, in no word).
        metrics: the masked metrics to compare (default all four).
        device, dtype: passed to :func:`pllscore.load` for models given by name.
        plot: also draw the figure to this file (.png, .svg or .pdf).
        words, word_sep: the words the table groups tokens into (default the tokenizer's; ``"whitespace"``
            or a list of words per text), as :meth:`pllscore.MaskedScorer.score` takes them; the causal
            LM is grouped into the same words.
        mask_by: what word-l2r and whole-word mask: ``"tokenizer"`` (default) or the user's ``"words"``.
    """
    from pllscore.metrics import resolve_metrics
    from pllscore.scoring.api import as_scorer

    mlm = as_scorer(model, kind="masked", role="explain", device=device, dtype=dtype)
    chosen = resolve_metrics(metrics)
    masked = mlm.score(texts, metric=list(chosen), words=words, word_sep=word_sep, mask_by=mask_by)
    causal = None
    if causal_model is not None:
        clm = as_scorer(causal_model, device=device, dtype=dtype)
        if clm.kind not in ("causal", "seq2seq"):
            raise ModelError(f"{clm.name!r} is a {clm.kind} LM; --causal-model needs a causal or an encoder-decoder LM")
        # the causal LM gets the masked LM's words: the user's words are the same for both
        causal = clm.score(texts, words=mlm.words if words is None else words, word_sep=word_sep)
    result = Explanation(masked=masked, causal=causal, metrics=chosen)
    if plot is not None:
        result.plot(plot)
    return result
