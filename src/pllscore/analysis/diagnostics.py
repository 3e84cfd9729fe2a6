"""The paper's metric diagnostics: sentence length, word frequency, agreement with a causal LM, OOV ratio.

In: sentences, a masked scorer (all its metrics) and optionally a causal scorer.
Out: DataFrames, one row per system (column ``metric``: a masked metric, or ``causal``), with Pearson r, its 95%
confidence interval and n; and the per-item data behind each figure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pllscore.analysis.stats import pearson
from pllscore.engine.progress import model_stage, stage

__all__ = ["CONTEXTS", "FREQUENCY_MEASURE", "agreement", "distinct_words", "length", "oov_ratio", "word_frequency"]

#: neutral contexts for word scores; ``{}`` is the target word (its tokens are the only ones scored)
CONTEXTS = {
    "my-word": "My word is {}",
    "dictionary": "I opened a dictionary and randomly picked a word. It was {}",
    "none": "{}",
}
FREQUENCY_MEASURE = "wordfreq zipf_frequency(word, 'en'): log10 of occurrences per billion words + 9 (Zipf scale)"


def _systems(masked: Any, causal: Any | None) -> dict[str, np.ndarray]:
    """System name -> sentence totals (nats), in input order."""
    out = {m: masked.for_metric(m).totals for m in masked.metrics}
    if causal is not None:
        out["causal"] = causal.totals
    return out


def length(
    masked: Any,
    causal: Any | None = None,
    *,
    norms: Sequence[str] = ("sum",),
    unigram: Any = None,
    causal_unigram: Any = None,
) -> tuple[Any, Any]:
    """Pearson r between a sentence's number of tokens and its negative score, per system and norm.

    Returns (summary, data): data has one row per sentence, system (column ``metric``) and norm with
    ``n_tokens`` and ``surprisal`` (the negative score, nats). Tokens are counted by each system's own
    tokenizer. The analysis is ``length`` for the summed score and ``length:<norm>`` for a normalised one
    (``norms``, see :data:`pllscore.results.norms.NORMS`; ``unigram``/``causal_unigram`` for ``slor`` and ``norm-lp``):
    a norm that corrects for length brings r towards 0.
    """
    import pandas as pd

    from pllscore.results.norms import norm_values

    rows, data = [], []
    for name in _systems(masked, causal):
        source = causal if name == "causal" else masked.for_metric(name)
        uni = causal_unigram if name == "causal" else unigram
        n_tokens = np.array([r.n_tokens for r in source], dtype=np.float64)
        values = [norm_values(r, norms, uni) for r in source]
        for norm in norms:
            neg = -np.array([v[norm] for v in values], dtype=np.float64)
            analysis = "length" if norm == "sum" else f"length:{norm}"
            rows.append({"analysis": analysis, "metric": name, **pearson(n_tokens, neg)})
            data.append(pd.DataFrame({"metric": name, "norm": norm, "n_tokens": n_tokens, "surprisal": neg}))
    return pd.DataFrame(rows), pd.concat(data, ignore_index=True)


def agreement(masked: Any, causal: Any) -> tuple[Any, Any]:
    """Pearson r between each masked metric's sentence scores and the causal LM's."""
    import pandas as pd

    rows, data = [], []
    for metric in masked.metrics:
        mlm = masked.for_metric(metric).totals
        rows.append({"analysis": "agreement", "metric": metric, **pearson(mlm, causal.totals)})
        data.append(pd.DataFrame({"metric": metric, "logprob": mlm, "causal_logprob": causal.totals}))
    return pd.DataFrame(rows), pd.concat(data, ignore_index=True)


_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


def distinct_words(sentences: Sequence[str]) -> list[str]:
    """The distinct alphabetic words of the sentences, lower-cased, in order of first use."""
    return list(dict.fromkeys(w.lower() for s in sentences for w in _WORD.findall(s)))


def word_frequency(
    words: Sequence[str],
    masked_scorer: Any,
    causal_scorer: Any | None = None,
    *,
    metrics: str | Sequence[str] = "all",
    progress: bool | None = None,
) -> tuple[Any, Any]:
    """Score each word in each neutral context (only its tokens scored) and correlate with frequency.

    Returns (summary, data): summary has one row per system and context with Pearson r between
    word score and Zipf frequency (words unknown to wordfreq are left out); data has one row per
    word, context and system.
    """
    import pandas as pd
    from wordfreq import zipf_frequency

    freq = {w: zipf_frequency(w, "en") for w in words}
    texts, spans, meta = [], [], []
    for ctx, template in CONTEXTS.items():
        before = template.index("{}")
        for w in words:
            texts.append(template.format(w))
            spans.append((before, before + len(w)))
            meta.append((ctx, w))
    systems = {}
    n = 1 if causal_scorer is None else 2
    with stage(model_stage(1, n, Path(masked_scorer.name).name, "words")):
        masked = masked_scorer.score(texts, metric=metrics, spans=spans, progress=progress)
    for m in masked.metrics:
        systems[m] = masked.for_metric(m).totals
    if causal_scorer is not None:
        with stage(model_stage(2, n, Path(causal_scorer.name).name, "words")):
            systems["causal"] = causal_scorer.score(texts, spans=spans, progress=progress).totals
    data = pd.DataFrame(
        [
            {"metric": name, "context": ctx, "word": w, "zipf": freq[w], "logprob": float(totals[i])}
            for name, totals in systems.items()
            for i, (ctx, w) in enumerate(meta)
        ]
    )
    known = data[data["zipf"] > 0]
    rows = [
        {"analysis": f"frequency:{ctx}", "metric": name, **pearson(g["zipf"], g["logprob"])}
        for (name, ctx), g in known.groupby(["metric", "context"], sort=False)
    ]
    return pd.DataFrame(rows), data


def oov_ratio(tokenizer: Any, sentences: Sequence[str]) -> dict[str, float]:
    """Share of word tokens, and of word types, that the tokenizer splits into two or more tokens.

    Words are the tokenizer's own ``word_ids()`` groups that contain a letter (punctuation left out).
    """
    from pllscore.engine.loading import encode_text

    enc = encode_text(tokenizer, list(sentences), add_special_tokens=False)  # "[MASK]" in a text is text
    tokens = split = 0
    types: dict[str, bool] = {}
    for i, text in enumerate(sentences):
        spans: dict[int, list[int]] = {}
        for (a, b), w in zip(enc["offset_mapping"][i], enc.word_ids(i)):
            if w is not None:
                spans.setdefault(w, [a, b])[1] = b
        counts = np.bincount([w for w in enc.word_ids(i) if w is not None]) if spans else np.zeros(0, dtype=int)
        for w, (a, b) in spans.items():
            word = text[a:b].strip()
            if not any(c.isalpha() for c in word):
                continue
            tokens += 1
            split += int(counts[w] >= 2)
            types[word] = counts[w] >= 2
    return {
        "word_tokens": tokens,
        "word_tokens_split": split,
        "token_ratio": split / tokens if tokens else np.nan,
        "word_types": len(types),
        "word_types_split": int(sum(types.values())),
        "type_ratio": float(sum(types.values()) / len(types)) if types else np.nan,
    }
