"""Predictions: what a model expects in a slot (:meth:`Predicting.predict`, a method of every scorer).

Three questions, one slot per text (:mod:`pllscore.plan.slots`):

- ``level="word"``: the exact top-k words of up to ``word_tokens`` tokens (:mod:`pllscore.plan.search`
  over the reads of :mod:`pllscore.scoring.slot_sites`, all texts' steps in shared batches);
- ``candidates=[...]``: the log-probability of each given word, of any length, through ``score``
  itself (masked: ``word-l2r`` with the candidate one user word, so that all its tokens fill masks
  whatever the tokenizer's words; causal: the whitespace words from the slot on, ``word_prob="bow"``),
  and the mass they cover; a word given twice is scored once (with a warning);
- ``level="token"``: the top-k tokens at the slot (masked: one mask, the text read as the fill-mask
  pipeline reads it) or next (causal), with the entropy of that distribution: the pipeline's numbers.

A slot glued to the text around it (``un___able``) is refused for words and candidates (no word stands
there on its own); a search cut by its step budget says so (``Prediction.complete``, a warning).

An encoder-decoder LM is refused: its next word depends on a source, which predictions do not take.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from pllscore.engine.slots import SlotEngine
from pllscore.errors import InputError, InputTooLongError
from pllscore.plan.search import Expansion, Request, search
from pllscore.plan.slots import find_slots
from pllscore.results.predictions import LEVELS, PredictedWord, Prediction, Predictions, PredictionWarning
from pllscore.scoring.bow import BowTokens, beginning_marker
from pllscore.scoring.slot_sites import Sites, vocabulary_classes
from pllscore.scoring.text_checks import check_texts

__all__ = ["Predicting", "check_candidates", "top_words"]

Candidates = Sequence[str] | Sequence[Sequence[str]]


class Predicting:
    """The ``predict`` method of a scorer (a mixin of :class:`~pllscore.scoring.base.Scorer`)."""

    def predict(
        self,
        texts: str | Iterable[str],
        *,
        k: int = 10,
        word_tokens: int = 3,
        candidates: Candidates | None = None,
        level: str = "word",
    ) -> Predictions:
        """What the model expects in each text's slot (``___``).

        A masked LM's text holds one slot anywhere; a causal LM's text is the context of the next
        word (a slot, if written, ends it). Log-probabilities are in nats and are the numbers
        ``score`` gives the word there: masked, the ``word-l2r`` chain over all the word's tokens (a word
        of n tokens fills n masks, its tokens left to right, so each length is conditioned on its own
        number of masks): ``score(filled, metric="word-l2r", words=[left, word, right], word_sep="",
        mask_by="words", spans=[slot])``; causal, the word's whitespace-word score with
        ``word_prob="bow"`` (it includes that the next token begins a new word).

        Args:
            texts: a string or a list of strings, each with its slot.
            k: how many words (or tokens) per text.
            word_tokens: the most tokens a word may have (``level="word"``).
            candidates: words to score in every slot (a list), or one list per text (people's cloze
                responses), of any token count; their ``rank`` orders them by log-probability and
                ``covered`` is their mass. ``k`` and ``word_tokens`` do not apply.
            level: ``"word"`` (the exact top-k words) or ``"token"`` (the top-k tokens, with the
                entropy of the distribution).

        Returns:
            One :class:`~pllscore.results.predictions.Prediction` per text.
        """
        scorer: Any = self
        if scorer.kind not in ("masked", "mntp", "causal"):
            raise InputError(
                "predictions take a masked or a causal LM; an encoder-decoder LM's next word depends on its "
                "source, which predict does not take: score the candidates with score(..., source=...)"
            )
        items = check_texts(texts)
        _check_options(k, word_tokens, level)
        if not items:
            return Predictions()
        lists = None if candidates is None else check_candidates(candidates, len(items))
        sites = Sites.build(scorer, find_slots(items, scorer.kind), beginning_marker(scorer.tokenizer))
        if lists is not None:
            sites.check_apart()
            return _candidates(sites, lists)
        if level == "token":
            return _tokens(sites, _engine(scorer, word=False), k)
        return _words(sites, _engine(scorer, word=True), k, word_tokens)


def top_words(
    scorer: Any, texts: Sequence[str], *, k: int, word_tokens: int, shortest: int = 1, max_steps: int | None = None
) -> Predictions:
    """:meth:`Predicting.predict`'s top words, of ``shortest`` to ``word_tokens`` tokens (a search for the
    longer words alone: what the tests check against ``score`` for words of 2 and 3 tokens), under the
    search's step budget (``max_steps``: :func:`~pllscore.plan.search.search`'s)."""
    sites = Sites.build(scorer, find_slots(list(texts), scorer.kind), beginning_marker(scorer.tokenizer))
    return _words(sites, _engine(scorer, word=True), k, word_tokens, shortest, max_steps)


def _check_options(k: Any, word_tokens: Any, level: Any) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer (how many words per text), got {k!r}")
    if isinstance(word_tokens, bool) or not isinstance(word_tokens, int) or word_tokens < 1:
        raise InputError(f"word_tokens must be a positive integer (the most tokens of a word), got {word_tokens!r}")
    if level not in LEVELS:
        raise InputError(f"unknown level {level!r}; choose word (default) or token")


def check_candidates(candidates: Any, n: int) -> list[list[str]]:
    """One list of candidate words per text: ``candidates`` is one list for all ``n`` texts or one per text."""
    if isinstance(candidates, str) or not isinstance(candidates, Sequence) or not len(candidates):
        raise InputError("candidates must be a non-empty list of words, or one list of words per text")
    per_text = all(isinstance(c, Sequence) and not isinstance(c, str) for c in candidates)
    lists = [list(c) for c in candidates] if per_text else [list(candidates)] * n
    if len(lists) != n:
        raise InputError(f"{len(lists)} lists of candidates for {n} texts; give one list per text, or one for all")
    for i, words in enumerate(lists):
        for w in words:
            if not isinstance(w, str) or not w.strip() or "___" in w:
                raise InputError(f"candidate {w!r:.40} of text {i} is not a word; give non-empty strings")
    # a word given twice (" dog " and "dog" among them) is one candidate: it is scored, and covers its mass, once
    unique = [list(dict.fromkeys(w.strip() for w in words)) for words in lists]
    twice = [
        (i, w) for i, words in enumerate(lists) for w in {*words} if [v.strip() for v in words].count(w.strip()) > 1
    ]
    if twice:
        i, w = min(twice)
        n = sum(len(a) - len(b) for a, b in zip(lists, unique))
        warnings.warn(
            f"{n} candidates repeat a word of the same text (text {i}: {w.strip()!r:.40}); each word is scored once",
            PredictionWarning,
            stacklevel=3,
        )
    return unique


def _engine(scorer: Any, *, word: bool) -> SlotEngine:
    size = scorer._vocab_size
    classes = vocabulary_classes(scorer.tokenizer, size, scorer.name).masks if word else {}
    ends = None
    if word and scorer.kind == "causal":
        ends = BowTokens(scorer.tokenizer, size, scorer.name).end_mask()
    options = {**scorer._engine_options, "padding": scorer.padding}
    if scorer.kind == "causal":  # the reads share their prefixes as the scores' passes do
        options["share_prefixes"] = scorer.share_prefixes
    return SlotEngine(scorer.model, causal=scorer.kind == "causal", classes=classes, ends=ends, **options)


def _pieces(sites: Sites, ids: Sequence[int]) -> tuple[str, ...]:
    return tuple(sites.scorer.tokenizer.convert_ids_to_tokens([int(i) for i in ids]))


def _words(
    sites: Sites, engine: SlotEngine, k: int, word_tokens: int, shortest: int = 1, max_steps: int | None = None
) -> Predictions:
    sites.check_apart()
    sites.check_room(word_tokens)
    budget = sites.scorer.max_tokens

    def expand(requests: list[Request]) -> list[Expansion]:
        got = engine.read([sites.read(r) for r in requests], max_tokens=budget)
        return [Expansion(g.ids, g.logprobs, g.end) for g in got]

    found = search(
        sites.frames, expand, sites.accept, k=k, word_tokens=word_tokens, shortest=shortest, max_steps=max_steps
    )
    out = []
    for i, got in enumerate(found):
        ranked = [
            PredictedWord(r + 1, sites.word(f.tokens), f.logprob, _pieces(sites, f.tokens))
            for r, f in enumerate(got.words)
        ]
        out.append(
            Prediction(i, sites.slots[i].text, "word", tuple(ranked), model=sites.scorer.name, complete=got.complete)
        )
    _warn_short(out, k)
    return Predictions(tuple(out))


def _warn_short(found: list[Prediction], k: int) -> None:
    """Say which searches stopped at their step budget short of ``k`` words (the rows say it too: ``complete``)."""
    short = [p for p in found if not p.complete]
    if short:
        p = short[0]
        warnings.warn(
            f"{len(short)} of {len(found)} texts' searches stopped at their step budget before finding {k} words "
            f"(text {p.index} {p.text!r:.50}: {len(p.words)} found); their rows hold the best words found, in order, "
            "and say complete=False",
            PredictionWarning,
            stacklevel=4,
        )


def _tokens(sites: Sites, engine: SlotEngine, k: int) -> Predictions:
    tok = sites.scorer.tokenizer
    got = engine.read([sites.token_read(i, k) for i in range(len(sites.slots))], max_tokens=sites.scorer.max_tokens)
    out = []
    for i, g in enumerate(got):
        pieces = _pieces(sites, g.ids)
        ranked = [
            PredictedWord(r + 1, str(tok.decode([int(t)])).strip(), float(lp), (p,))
            for r, (t, lp, p) in enumerate(zip(g.ids, g.logprobs, pieces))
        ]
        out.append(Prediction(i, sites.slots[i].text, "token", tuple(ranked), g.entropy, sites.scorer.name))
    return Predictions(tuple(out))


def _candidates(sites: Sites, lists: list[list[str]]) -> Predictions:
    scorer = sites.scorer
    pairs = [(i, w) for i, words in enumerate(lists) for w in words]
    filled = [sites.filled(i, w) for i, w in pairs]
    spans = [sites.slots[i].span(w, sites.sep) for i, w in pairs]
    try:
        if sites.causal:
            res = scorer.score(filled, spans=spans, words="whitespace", word_prob="bow")
            values = [sum(w.score for w in r.words if w.span[0] >= s[0]) for r, s in zip(res, spans)]
        else:
            # the candidate is one word, whatever the tokenizer's words ("New York", "dog's"): its n tokens fill
            # n masks, read left to right (word-l2r over the user's words, the text around it the other two)
            words = [[p for p in (sites.slots[i].left, w, sites.slots[i].right) if p] for i, w in pairs]
            res = scorer.score(filled, metric="word-l2r", spans=spans, words=words, word_sep="", mask_by="words")
            values = [r.total for r in res]
    except InputTooLongError as e:
        i, w = pairs[e.index]
        raise InputError(
            f"text {i} with the candidate {w!r:.40} in its slot is {e.n_tokens} tokens long (special tokens "
            f"included) but the model allows at most {e.limit}; shorten the text"
        ) from None
    tokens = [tuple(t.piece for t in r.tokens if t.scored) for r in res]
    out, at = [], 0
    for i, words in enumerate(lists):
        lps = np.array(values[at : at + len(words)], dtype=np.float64)
        order = np.argsort(np.where(np.isnan(lps), np.inf, -lps), kind="stable")
        rank = np.empty(len(words), dtype=np.int64)
        rank[order] = np.arange(1, len(words) + 1)
        ranked = [PredictedWord(int(rank[j]), w, float(lps[j]), tokens[at + j]) for j, w in enumerate(words)]
        out.append(Prediction(i, sites.slots[i].text, "candidates", tuple(ranked), model=scorer.name))
        at += len(words)
    return Predictions(tuple(out))
