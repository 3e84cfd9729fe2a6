"""Predictions: top-10 words (up to 3 tokens) and top-10 tokens for EventsAdapt frames, against the fill-mask pipeline.

Each EventsAdapt sentence becomes a frame with its critical word (the last word, the event's patient or agent)
replaced by the slot: "The raider caught the ___.". Two model shapes: the trained tiny BERT beside the repository
and a BERT of bert-base's shape (12 layers, 768 wide) with random weights and the same tokenizer (timing only: a
random model's flat distributions make the exact word search read far more prefixes than a trained model's).
The token level and the pipeline run on the same frames in one run; the pipeline is timed at its default batch
size (1) and at 32.

    .venv/bin/python benchmarks/predict.py --frames 500 --out benchmarks/predict-last-run.md

``--causal-frames N``: also top-10 words (up to 3 tokens) of a causal LM (tiny-gpt2) for N frames whose slot ends
the context ("The raider caught the ___"), with its reads packed into prefix trees (the default) and each read
run in full (``share_prefixes=False``), on the same frames in one run, the best of 3 runs each;
``--skip-masked`` runs only that.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import pandas as pd
import torch
from transformers import BertConfig, BertForMaskedLM, pipeline

import pllscore
from pllscore import MaskedScorer

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def frames(n: int) -> list[str]:
    sentences = pd.read_csv(SHARED / "data" / "eventsadapt" / "EventsAdapt.csv")["Sentence"].tolist()[:n]
    return [s.rsplit(" ", 1)[0] + " ___." for s in sentences]


def timed(f, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def scorers() -> dict[str, MaskedScorer]:
    tiny = pllscore.load(SHARED / "models" / "tiny-bert-cased", device="cpu")
    torch.manual_seed(0)
    base = BertForMaskedLM(BertConfig(vocab_size=len(tiny.tokenizer))).eval()
    return {"tiny-bert-cased": tiny, "bert-base shape (random)": MaskedScorer(base, tiny.tokenizer, name="bert-base")}


def causal_lines(n: int) -> list[str]:
    """Top-10 causal words for ``n`` frames with tiny-gpt2, prefix trees against full reads."""
    sentences = pd.read_csv(SHARED / "data" / "eventsadapt" / "EventsAdapt.csv")["Sentence"].tolist()[:n]
    texts = [s.rsplit(" ", 1)[0] + " ___" for s in sentences]
    lines = [
        "",
        "| model | what | frames | seconds | frames/s |",
        "|---|---|---|---|---|",
    ]
    got = {}
    for share in (False, True):
        scorer = pllscore.load(SHARED / "models" / "tiny-gpt2", device="cpu", share_prefixes=share)
        scorer.predict(texts[:8], k=10, word_tokens=3)  # warm
        seconds = timed(lambda: got.__setitem__(share, scorer.predict(texts, k=10, word_tokens=3)), repeat=3)
        what = "prefix trees (default)" if share else "share_prefixes=False (every read in full)"
        lines.append(
            f"| tiny-gpt2 | top-10 words of up to 3 tokens, {what} | {n} | {seconds:.2f} | {n / seconds:.1f} |"
        )
        print(lines[-1], flush=True)
    worst = max(
        abs(a.logprob - b.logprob) for p, q in zip(got[False], got[True]) for a, b in zip(p.words, q.words, strict=True)
    )
    same = all([w.word for w in p.words] == [w.word for w in q.words] for p, q in zip(got[False], got[True]))
    lines += ["", f"Same words in both runs: {same}; largest logprob difference {worst:.1e} nats."]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=500)
    parser.add_argument("--word-frames-base", type=int, default=50, help="frames of the word search on bert-base")
    parser.add_argument("--causal-frames", type=int, default=0, help="frames of the causal word search (tiny-gpt2)")
    parser.add_argument("--skip-masked", action="store_true", help="run only the causal word search")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.skip_masked:
        text = "\n".join(causal_lines(args.causal_frames)) + "\n"
        print(text)
        if args.out is not None:
            args.out.write_text(text)
        return
    texts = frames(args.frames)
    lines = [
        "# Predictions: last run",
        "",
        f"`.venv/bin/python benchmarks/predict.py --frames {args.frames} --word-frames-base {args.word_frames_base}` on {platform.processor() or platform.machine()}, "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, CPU. EventsAdapt frames, critical word -> `___`.",
        "",
        "| model | what | frames | seconds | frames/s | vs pipeline (batch 1) | vs pipeline (batch 32) |",
        "|---|---|---|---|---|---|---|",
    ]
    models = scorers()
    for name, scorer in models.items():
        masked = [t.replace("___", scorer.tokenizer.mask_token) for t in texts]
        fill = pipeline("fill-mask", model=scorer.model, tokenizer=scorer.tokenizer, top_k=10, device="cpu")
        scorer.predict(texts[:8], level="token", k=10)  # warm
        fill(masked[:8])
        ours = timed(lambda: scorer.predict(texts, level="token", k=10))
        p1 = timed(lambda: fill(masked, batch_size=1))
        p32 = timed(lambda: fill(masked, batch_size=32))
        n = len(texts)
        lines.append(f"| {name} | fill-mask pipeline, batch 1 | {n} | {p1:.2f} | {n / p1:.0f} | | |")
        lines.append(f"| {name} | fill-mask pipeline, batch 32 | {n} | {p32:.2f} | {n / p32:.0f} | | |")
        lines.append(
            f"| {name} | predict, level=token, k=10 | {n} | {ours:.2f} | {n / ours:.0f} | {p1 / ours:.1f}x | {p32 / ours:.1f}x |"
        )
        w = n if name.startswith("tiny") else min(n, args.word_frames_base)
        words = timed(lambda: scorer.predict(texts[:w], k=10, word_tokens=3))
        lines.append(f"| {name} | predict, top-10 words of up to 3 tokens | {w} | {words:.2f} | {w / words:.1f} | | |")
        print("\n".join(lines[-4:]), flush=True)
    sample = models["tiny-bert-cased"].predict(texts[:3], k=5)
    lines += ["", "Top words (tiny-bert-cased) of the first frames:", ""]
    lines += [f"- {p.text} {', '.join(f'{x.word} ({x.prob:.3f})' for x in p.words)}" for p in sample]
    if args.causal_frames:
        lines += causal_lines(args.causal_frames)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
