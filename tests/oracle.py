"""The naive reference: one unbatched forward pass per masked copy, full logits.

Written straight from the metric definitions; shares no code with pllscore's plan or engine. When the
tests run on another device (``PLLSCORE_TEST_DEVICE``, ``make test-gpu``), each function runs a float64 copy
of the model on the CPU instead (:func:`tests.device.reference`).
"""

from __future__ import annotations

import torch

from tests.device import reference


def mask_set(metric: str, t: int, word_ids: list[int | None]) -> set[int]:
    n = len(word_ids)
    word = {j for j in range(n) if word_ids[j] is not None and word_ids[j] == word_ids[t]}
    if metric == "original":
        return {t}
    if metric == "word-l2r":
        return {t} | {j for j in word if j > t}
    if metric == "whole-word":
        return word
    if metric == "sentence-l2r":
        return set(range(t, n))
    raise ValueError(metric)


def whitespace_groups(text: str, offsets: list[tuple[int, int]]) -> list[int]:
    """Per token (its character offsets), the index of the whitespace-separated word of ``text`` where it starts.

    Written for texts whose tokens each start at a non-space character or a space before their word
    (WordPiece, byte-level BPE with trimmed offsets): the word count up to that character, minus one.
    """
    out = []
    for a, b in offsets:
        while a < b and text[a].isspace():
            a += 1
        out.append(len(text[: a + 1].split()) - 1)
    return out


@torch.inference_mode()
def masked_logprobs(model, tokenizer, text: str, metric: str, groups: list[int] | None = None) -> list[float]:
    """Per non-special token of ``text``, in order: its log-probability under ``metric``.

    ``groups`` (per non-special token, in order, its word) replaces the tokenizer's ``word_ids()``
    as the words that word-l2r and whole-word mask.
    """
    return [lp for lp, _, _ in masked_outputs(model, tokenizer, text, metric, groups)]


@torch.inference_mode()
def causal_logprobs(model, tokenizer, text: str) -> list[float]:
    """Per token of ``text`` after a BOS (the tokenizer's own, else BOS/EOS put in front)."""
    model = reference(model)
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    ids = tokenizer(text)["input_ids"]
    if ids[0] != bos:
        ids = [bos] + tokenizer(text, add_special_tokens=False)["input_ids"]
    logits = model(input_ids=torch.tensor([ids])).logits[0].double()
    return [torch.log_softmax(logits[i - 1], -1)[ids[i]].item() for i in range(1, len(ids))]


def _stats(logits, target: int) -> tuple[float, float, int]:
    """(log-probability, entropy, rank) of ``target`` under one row of logits, from the full softmax in float64."""
    x = logits.double()
    logp = torch.log_softmax(x, -1)
    p = logp.exp()
    entropy = -torch.where(p > 0, p * logp, torch.zeros_like(p)).sum().item()
    rank = 1 + int((x > x[target]).sum().item())
    return logp[target].item(), entropy, rank


@torch.inference_mode()
def masked_outputs(
    model, tokenizer, text: str, metric: str, groups: list[int] | None = None
) -> list[tuple[float, float, int]]:
    """Per non-special token of ``text``: (log-probability, entropy, rank) at its masked position under
    ``metric``; ``groups`` as for :func:`masked_logprobs`."""
    model = reference(model)
    enc = tokenizer(text)
    ids, word_ids = enc["input_ids"], enc.word_ids()
    if groups is not None:
        it = iter(groups)
        word_ids = [None if w is None else next(it) for w in word_ids]
    out = []
    for t in range(len(ids)):
        if word_ids[t] is None:
            continue
        x = torch.tensor([ids])
        x[0, sorted(mask_set(metric, t, word_ids))] = tokenizer.mask_token_id
        out.append(_stats(model(input_ids=x).logits[0, t], ids[t]))
    return out


@torch.inference_mode()
def causal_outputs(model, tokenizer, text: str) -> list[tuple[float, float, int]]:
    """Per token of ``text`` after a BOS (as :func:`causal_logprobs`): (log-probability, entropy, rank)."""
    model = reference(model)
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    ids = tokenizer(text)["input_ids"]
    if ids[0] != bos:
        ids = [bos] + tokenizer(text, add_special_tokens=False)["input_ids"]
    logits = model(input_ids=torch.tensor([ids])).logits[0]
    return [_stats(logits[i - 1], ids[i]) for i in range(1, len(ids))]


@torch.inference_mode()
def masked_window_logprobs(model, tok, text: str, metric: str, limit: int) -> list[float]:
    """Each target masked in its own [CLS] window [SEP] of ``limit`` tokens, centred on it and kept inside the
    text, or the whole text when it fits; one unpadded pass per copy."""
    model = reference(model)
    enc = tok(text)
    ids, wids = enc["input_ids"], enc.word_ids()
    content, cwids = ids[1:-1], wids[1:-1]
    size = min(limit - 2, len(content))
    out = []
    for t in range(len(content)):
        s = min(max(t - size // 2, 0), len(content) - size)
        w_ids = [ids[0], *content[s : s + size], ids[-1]]
        w_wids = [None, *cwids[s : s + size], None]
        target = t - s + 1
        x = torch.tensor([w_ids])
        x[0, sorted(mask_set(metric, target, w_wids))] = tok.mask_token_id
        logits = model(input_ids=x).logits[0, target]
        out.append(torch.log_softmax(logits.double(), -1)[w_ids[target]].item())
    return out


@torch.inference_mode()
def seq2seq_logprobs(model, tokenizer, text: str, source: str = "") -> list[float]:
    """Per label of ``text`` (encoded with its special tokens), its log-probability given ``source``: one
    unbatched, unpadded teacher-forced pass, as ``model(input_ids=source, labels=text)`` computes its loss."""
    model = reference(model)
    src = tokenizer(source)["input_ids"]
    labels = tokenizer(text)["input_ids"]
    logits = model(input_ids=torch.tensor([src]), labels=torch.tensor([labels])).logits[0].double()
    return [torch.log_softmax(logits[i], -1)[labels[i]].item() for i in range(len(labels))]


@torch.inference_mode()
def seq2seq_loss_total(model, tokenizer, text: str, source: str = "") -> float:
    """Minus the model's own summed loss of ``text`` given ``source``."""
    model = reference(model)
    src = tokenizer(source)["input_ids"]
    labels = tokenizer(text)["input_ids"]
    out = model(input_ids=torch.tensor([src]), labels=torch.tensor([labels]))
    return -out.loss.item() * len(labels)
