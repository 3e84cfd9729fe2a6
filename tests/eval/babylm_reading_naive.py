"""The BabyLM reading convention written naively from the official pipeline's definition: one unbatched
forward pass per token read, full logits, the word's probability the product of its chained reads.

Shares no code with pllscore's plan or engine; the tests compare ``prepare_reading(...).run(model)`` with it.
Also pllscore's convention for a causal LM: the BOW-corrected word probability of Pimentel & Meister (2024),
one pass per sentence after BOS.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import torch

MASKS = 3


def _ids(tok, text: str) -> list[int]:
    return tok(text, add_special_tokens=False)["input_ids"]


def _extra(tok) -> list[str]:
    return list(getattr(tok, "additional_special_tokens", None) or getattr(tok, "extra_special_tokens", None) or [])


@torch.inference_mode()
def next_token_probs(backend: str, model, tok, context: str) -> torch.Tensor:
    """The float32 distribution the backend reads after ``context`` (one forward pass)."""
    if backend == "causal":
        ids = tok(context)["input_ids"]
        return torch.softmax(model(input_ids=torch.tensor([ids])).logits[0, -1].float(), -1)
    if backend in ("mlm", "mntp"):
        ids = tok(context + tok.mask_token * MASKS)["input_ids"]
        back = MASKS if ids[-1] == tok.mask_token_id else MASKS + 1
        if backend == "mntp":
            back += 1
        return torch.softmax(model(input_ids=torch.tensor([ids])).logits[0, -back].float(), -1)
    extra = _extra(tok)
    mask = tok.mask_token_id if tok.mask_token is not None else tok.convert_tokens_to_ids(extra[0])
    start = tok.bos_token if tok.bos_token is not None else extra[0]
    ids = ([tok.cls_token_id] if tok.cls_token is not None else []) + _ids(tok, context) + [mask]
    ids += [tok.eos_token_id] if tok.eos_token_id is not None else []
    dec = _ids(tok, start)
    out = model(
        input_ids=torch.tensor([ids]),
        attention_mask=torch.ones(1, len(ids), dtype=torch.long),
        decoder_input_ids=torch.tensor([dec]),
    )
    return torch.softmax(out.logits[0, 0].float(), -1)


@functools.cache
def word_probability(backend: str, model, tok, context: str, word: str) -> float:
    """The official get_p2: the first token after ``context``; each later one after the context with the decoded
    tokens before it glued on, its target the first token of its decoded text. Cached: a row's previous word is
    the row before's word, read once."""
    target = _ids(tok, word)
    ps = [next_token_probs(backend, model, tok, context)[target[0]].item()]
    s = context + tok.decode(target[0])
    for t in target[1:]:
        piece = tok.decode(t)
        ps.append(next_token_probs(backend, model, tok, s)[_ids(tok, piece)[0]].item())
        s += piece
    return float(np.prod(ps))


def official_surprisals(csv_path, backend: str, model, tok) -> tuple[list[float], list[float]]:
    """Per row, -log p of its word and of its previous word (NaN without a previous context), as run.py loops."""
    df = pd.read_csv(csv_path, dtype={"item": str})
    df["item"] = df["item"].fillna("None")
    pred, prev = [], []
    for _, row in df.iterrows():
        pred.append(-math.log(word_probability(backend, model, tok, row["item"], row["word"])))
        if isinstance(row["prev_item"], str):
            prev.append(-math.log(word_probability(backend, model, tok, row["prev_item"], row["prev_word"])))
        else:
            prev.append(float("nan"))
    return pred, prev


@torch.inference_mode()
def bow_word_logprobs(model, tok, words: list[str]) -> list[float]:
    """Per word of the sentence ``words`` (joined by spaces), log p(word | words before) after BOS with the BOW
    correction: its tokens, plus log P(next token begins a word or is EOS), minus that before the word (not
    for the first word)."""
    bos = tok.bos_token_id
    pieces = [_ids(tok, w if k == 0 else " " + w) for k, w in enumerate(words)]
    ids = [bos] + [t for p in pieces for t in p]
    logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
    vocab = tok.convert_ids_to_tokens(list(range(logp.shape[-1])))
    ends = torch.tensor([str(v).startswith("Ġ") for v in vocab])
    ends[tok.eos_token_id] = True
    p_end = torch.logsumexp(logp[:, ends], -1)  # per position: log P(E | tokens up to it)
    out, pos = [], 1
    for k, p in enumerate(pieces):
        lp = sum(logp[pos + j - 1, t].item() for j, t in enumerate(p))
        lp += p_end[pos + len(p) - 1].item()
        if k:
            lp -= p_end[pos - 1].item()
        out.append(lp)
        pos += len(p)
    return out
