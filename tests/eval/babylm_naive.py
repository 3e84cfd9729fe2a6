"""An independent, naive reading of the official BabyLM sentence zero-shot pipeline, for the tests.

One forward pass per sentence or per masked copy, full logits, no batching, no deduplication: each
backend's convention written out as the official ``dataset.py`` / ``compute_results.py`` state it.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F


def naive_items(task: str, folder: Path) -> list[tuple[list[str | None], list[str], list[str]]]:
    """(prefixes, sentences, completions) per item, the files in listing order, as the official reader."""
    out = []
    for path in folder.iterdir():
        if path.suffix != ".jsonl":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            if task == "blimp":
                out.append(
                    ([None, None], [d["sentence_good"], d["sentence_bad"]], [d["sentence_good"], d["sentence_bad"]])
                )
            elif task == "ewok":
                s = [d["Context1"] + " " + d["Target1"], d["Context1"] + " " + d["Target2"]]
                out.append(([d["Context1"], d["Context2"]], s, [" " + d["Target1"], " " + d["Target2"]]))
            elif task.startswith("wug"):
                s = d["sentences"].split("\t")
                out.append(([None], s, s))
            elif task == "entity_tracking":
                p = d["input_prefix"]
                out.append(([p] * len(d["options"]), [p + o for o in d["options"]], list(d["options"])))
            elif task == "comps":
                ps = [d["prefix_acceptable"], d["prefix_unacceptable"]]
                out.append((ps, [p + " " + d["property_phrase"] for p in ps], [d["property_phrase"]] * 2))
    return out


def _extra(tok) -> int | None:  # type: ignore[no-untyped-def]
    names = list(getattr(tok, "extra_special_tokens", None) or [])
    return tok.convert_tokens_to_ids(str(names[0])) if names else None


def _lp(logits: torch.Tensor, temps: list[float]) -> torch.Tensor:
    """log_softmax(logits / T) for each T, stacked first."""
    return torch.stack([F.log_softmax(logits / t, dim=-1) for t in temps])


@torch.no_grad()
def naive_score(model, tok, backend: str, prefix, sentence: str, completion: str, t: list[float]) -> list[float]:  # type: ignore[no-untyped-def]
    """The official score of one sentence at each temperature of ``t``."""
    enc = tok(sentence, return_offsets_mapping=True)
    ids, off = enc["input_ids"], enc["offset_mapping"]
    mask = tok.mask_token_id if tok.mask_token_id is not None else _extra(tok)
    if backend == "causal":
        start = len(sentence) - len(completion) + off[0][0]
        logits = model(input_ids=torch.tensor([ids])).logits[0]
        lp = _lp(logits, t)
        return [
            float(sum(lp[k, i - 1, ids[i]] for i in range(1, len(ids)) if off[i][1] > start)) for k in range(len(t))
        ]
    start = len(sentence) - len(completion)
    if backend in ("mlm", "mntp", "enc_dec_mask"):
        total = torch.zeros(len(t), dtype=torch.float64)
        for i in range(len(ids)):
            if off[i][1] <= start:
                continue
            if backend == "mntp" and i == 0 and tok.cls_token_id is None and tok.bos_token_id is None:
                continue
            copy = list(ids)
            copy[i] = mask
            if backend == "enc_dec_mask":
                dec = [tok.bos_token_id, mask] if tok.bos_token_id is not None else [_extra(tok)]
                logits = model(input_ids=torch.tensor([copy]), decoder_input_ids=torch.tensor([dec])).logits[0, -1]
            else:
                logits = model(input_ids=torch.tensor([copy])).logits[0, i - 1 if backend == "mntp" else i]
            total += _lp(logits, t)[:, ids[i]].double()
        return total.tolist()
    # enc_dec_prefix
    source = tok(prefix, add_special_tokens=False)["input_ids"] if prefix is not None else []
    target = tok(completion, add_special_tokens=False)["input_ids"]
    cls = [tok.cls_token_id] if tok.cls_token_id is not None else []
    eos = [tok.eos_token_id] if tok.eos_token_id is not None else []
    bos = tok.bos_token_id if tok.bos_token_id is not None else _extra(tok)
    enc_ids = cls + source + [mask] + eos
    dec = [bos, mask] + target[:-1]
    logits = model(input_ids=torch.tensor([enc_ids]), decoder_input_ids=torch.tensor([dec])).logits[0]
    lp = _lp(logits, t)
    return [float(sum(lp[k, j + 1, target[j]] for j in range(len(target)))) for k in range(len(t))]


def naive_task_scores(model, tok, backend: str, task: str, folder: Path, t: list[float]) -> list[list[list[float]]]:  # type: ignore[no-untyped-def]
    """Per temperature, per item its sentences' official scores (``enc_dec_prefix``: as many sentences as
    prefixes)."""
    out = []
    for prefixes, sentences, completions in naive_items(task, folder):
        if backend == "enc_dec_prefix":
            rows = zip(prefixes, sentences, completions)
        else:
            rows = zip([None] * len(sentences), sentences, completions)
        out.append([naive_score(model, tok, backend, p, s, c, t) for p, s, c in rows])
    return [[[sentence[k] for sentence in item] for item in out] for k in range(len(t))]
