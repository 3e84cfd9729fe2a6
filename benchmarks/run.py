"""pllscore vs minicons vs a naive per-copy loop, side by side in one process, on the same model and text.

Run it in the benchmark's own environment (minicons 0.3.39 works with transformers 5), or any with
pllscore, minicons and psutil:

    make -C benchmarks venv
    benchmarks/.venv/bin/python benchmarks/run.py --eventsadapt 1564 --brown 1000      # the full workloads
    benchmarks/.venv/bin/python benchmarks/run.py --eventsadapt 100 --brown 40         # a quick subset
    benchmarks/.venv/bin/python benchmarks/run.py --bf16-only                          # bfloat16 vs float32 alone

Models have bert-base-cased and GPT-2-small dimensions with random weights (seeded); the
tokenizers are trained on the Brown stimuli (cased WordPiece with 28,996 pieces; byte-level
BPE) so that words split realistically. Before timing, the systems' scores are checked to
agree. Prints a Markdown report; nothing here is part of the test suite.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import torch

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
CACHE = Path(__file__).resolve().parent / ".cache"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_systems import machine, machine_lines  # noqa: E402


# --- workloads ------------------------------------------------------------------------
def brown_sentences() -> list[str]:
    return pd.read_csv(SHARED / "brown" / "brown_stimuli.csv")["sentence"].tolist()


def wordpiece_tokenizer():
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertTokenizerFast

    path = CACHE / "wordpiece-28996"
    if not (path / "tokenizer.json").exists():
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        trainer = trainers.WordPieceTrainer(vocab_size=28996, special_tokens=specials, show_progress=False)
        tok.train_from_iterator(brown_sentences(), trainer)
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
        )
        tok.decoder = decoders.WordPiece()
        fast = BertTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                 sep_token="[SEP]", mask_token="[MASK]")  # fmt: skip
        fast.save_pretrained(path)
    return BertTokenizerFast.from_pretrained(path)


def bpe_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import GPT2TokenizerFast

    path = CACHE / "bpe-brown"
    if not (path / "tokenizer.json").exists():
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
        trainer = trainers.BpeTrainer(vocab_size=50257, special_tokens=["<|endoftext|>"],
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)  # fmt: skip
        tok.train_from_iterator(brown_sentences(), trainer)
        fast = GPT2TokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                 unk_token="<|endoftext|>")  # fmt: skip
        fast.save_pretrained(path)
    return GPT2TokenizerFast.from_pretrained(path)


def bert_base(tok):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    return BertForMaskedLM(BertConfig(vocab_size=len(tok), pad_token_id=tok.pad_token_id)).eval()


def gpt2_small(tok):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    return GPT2LMHeadModel(
        GPT2Config(vocab_size=len(tok), bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    ).eval()


# --- measuring ---------------------------------------------------------------------------
class PeakRSS:
    """Peak resident memory of this process while the block runs (sampled every 10 ms)."""

    def __enter__(self):
        self.proc, self.peak, self.stop = psutil.Process(), 0, threading.Event()
        self.base = self.proc.memory_info().rss

        def sample():
            while not self.stop.is_set():
                self.peak = max(self.peak, self.proc.memory_info().rss)
                time.sleep(0.01)

        self.thread = threading.Thread(target=sample, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)


def timed(fn):
    gc.collect()
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - t0
    return out, seconds, mem.peak / 2**30


def gemm_peak(dtype=torch.float32, n=2048, k=768, m=3072, reps=20) -> float:
    """Best FLOP/s of a large matrix product on this machine, in GFLOP/s."""
    a, b = torch.randn(n, k, dtype=dtype), torch.randn(k, m, dtype=dtype)
    best = 0.0
    with torch.inference_mode():
        for _ in range(3):
            a @ b
        for _ in range(reps):
            t0 = time.perf_counter()
            a @ b
            best = max(best, 2 * n * k * m / (time.perf_counter() - t0))
    return best / 1e9


def matmul_flops(fn) -> float:
    """Matrix-multiply FLOPs that ``fn`` performs (torch's FLOP counter, one extra run)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return float(counter.get_total_flops())


def ntok(tok, texts) -> int:
    """Tokens scored by a masked LM: all but the two special tokens."""
    return sum(len(tok(t)["input_ids"]) - 2 for t in texts)


# --- systems -------------------------------------------------------------------------------
def naive_pll(model, tok, texts, metric):
    """One unbatched forward pass per masked copy, full logits (the test suite's oracle, as a system)."""
    totals = []
    with torch.inference_mode():
        for text in texts:
            enc = tok(text)
            ids, wids = enc["input_ids"], enc.word_ids()
            total = 0.0
            for t, w in enumerate(wids):
                if w is None:
                    continue
                word = [j for j, x in enumerate(wids) if x == w]
                masked = {"original": [t], "word-l2r": [j for j in word if j >= t]}[metric]
                x = torch.tensor([ids])
                x[0, masked] = tok.mask_token_id
                logits = model(input_ids=x).logits[0, t]
                total += torch.log_softmax(logits, -1)[ids[t]].item()
            totals.append(total)
    return np.array(totals)


def minicons_compat(tok) -> None:
    """minicons 0.3.39's MaskedLMScorer calls ``tokenizer.batch_encode_plus``, which transformers 5 removed.

    For a list of texts it was the tokenizer's ``__call__``, so the harness aliases it; the agreement
    check still compares minicons' scores with pllscore's and the naive loop's before timing.
    """
    cls = type(tok)
    if "batch_encode_plus" not in dir(cls):
        cls.batch_encode_plus = cls.__call__


def minicons_pll(scorer, texts, metric, batch):
    name = {"original": "original", "word-l2r": "within_word_l2r"}[metric]
    out = []
    for i in range(0, len(texts), batch):
        out += scorer.sequence_score(texts[i : i + batch], PLL_metric=name, reduction=lambda x: x.sum(0).item())
    return np.array(out)


def minicons_ll(scorer, texts, batch):
    out = []
    for i in range(0, len(texts), batch):
        out += scorer.sequence_score(texts[i : i + batch], bos_token=True, reduction=lambda x: x.sum(0).item())
    return np.array(out)


def long_text_only() -> None:
    """Score one text of 510 tokens + 2 specials (the most bert-base takes) under word-l2r; print time and peak RSS."""
    import pllscore

    wp = wordpiece_tokenizer()
    bert = bert_base(wp)
    ids = wp(" ".join(brown_sentences()[:60]))["input_ids"][1:511]
    text510 = wp.decode(ids)
    n510 = len(wp(text510)["input_ids"])
    t0 = time.perf_counter()
    pllscore.MaskedScorer(bert, wp).score(text510, metric="word-l2r", progress=False)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"one text of {n510} tokens (special tokens included), word-l2r, in a fresh process: {seconds:.1f} s, "
          f"peak RSS of the whole process (model included) {peak:.2f} GiB")  # fmt: skip


def bf16_compare(bert, wp, texts: list[str], repeats: int = 2) -> str:
    """bfloat16 autocast against float32 (word-l2r): speed on this CPU and the per-token error, one line."""
    import pllscore

    ours = pllscore.MaskedScorer(bert, wp)
    bf16 = pllscore.MaskedScorer(bert, wp, dtype="bfloat16")  # autocast over the same float32 weights
    t32 = t16 = float("inf")
    for _ in range(repeats):  # interleaved, best of each: the least disturbed run
        exact, t, _ = timed(lambda: ours.score(texts, metric="word-l2r", progress=False))
        approx, t_, _ = timed(lambda: bf16.score(texts, metric="word-l2r", progress=False))
        t32, t16 = min(t32, t), min(t16, t_)
    err = np.concatenate([np.abs(a.logprobs - b.logprobs) for a, b in zip(exact, approx)])
    sent = np.abs(exact.totals - approx.totals)
    cap = torch.backends.cpu.get_cpu_capability()
    return (
        f"bfloat16 autocast vs float32, {len(texts)} EventsAdapt sentences, word-l2r, CPU capability {cap}: "
        f"**{t32 / t16:.2f}x** the float32 speed ({t16:.1f} s vs {t32:.1f} s, best of {repeats}); per-token |error| "
        f"mean {err.mean():.4f} nats, 95th percentile {np.quantile(err, 0.95):.4f}, max {err.max():.4f}; "
        f"per-sentence max {sent.max():.4f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--eventsadapt", type=int, default=1564, help="EventsAdapt sentences (all: 1564)")
    ap.add_argument("--brown", type=int, default=1000, help="Brown sentences (a seeded sample)")
    ap.add_argument("--naive", type=int, default=8, help="sentences for the naive loop (it is slow)")
    ap.add_argument("--minicons-batch", type=int, default=16, help="sentences per minicons call")
    ap.add_argument("--subset", type=int, default=200,
                    help="sentences for the FLOP rate and the whole-word and all-four timings")  # fmt: skip
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--bf16", type=int, default=100, help="EventsAdapt sentences for the bfloat16 comparison")
    ap.add_argument("--skip-long", action="store_true", help="skip the 510-token text (about 6 minutes on 2 cores)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "last-run.md")
    ap.add_argument("--bf16-only", action="store_true", help="only the bfloat16 vs float32 comparison")
    ap.add_argument("--long-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.bf16_only:  # the reduced-precision comparison alone: no minicons, a few minutes
        torch.set_num_threads(args.threads)
        wp = wordpiece_tokenizer()
        ea = pd.read_csv(SHARED / "eventsadapt" / "EventsAdapt.csv")["Sentence"].tolist()[: args.bf16]
        print("\n".join([*machine_lines(machine()), "", bf16_compare(bert_base(wp), wp, ea)]))
        return
    if args.long_only:
        torch.set_num_threads(args.threads)
        long_text_only()
        return
    torch.set_num_threads(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import transformers
    from minicons import scorer as mscorer

    import pllscore

    wp, bpe = wordpiece_tokenizer(), bpe_tokenizer()
    bert, gpt = bert_base(wp), gpt2_small(bpe)
    ea = pd.read_csv(SHARED / "eventsadapt" / "EventsAdapt.csv")["Sentence"].tolist()[: args.eventsadapt]
    rng = np.random.default_rng(0)
    brown_all = brown_sentences()
    brown = [brown_all[i] for i in sorted(rng.choice(len(brown_all), size=1000, replace=False))][: args.brown]
    workloads = {"EventsAdapt": ea, "Brown": brown}

    ours = pllscore.MaskedScorer(bert, wp)
    minicons_compat(wp)
    theirs = mscorer.MaskedLMScorer(bert, "cpu", tokenizer=wp)
    peak = gemm_peak()
    lines = [
        *machine_lines(machine()),
        f"* {psutil.cpu_count(logical=False)} cores; transformers {transformers.__version__} in this run",
        f"* measured fp32 GEMM peak: {peak:.1f} GFLOP/s",
        "",
        "| workload | metric | system | sentences | s | sentences/s | tokens/s | vs minicons | peak RSS GiB | GFLOP/s (% of peak) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def row(wl, metric, system, n, seconds, tokens, ratio, rss, gflops=None):
        g = f"{gflops:.1f} ({100 * gflops / peak:.0f}%)" if gflops else ""
        r = f"{ratio:.2f}x" if ratio else ""
        lines.append(
            f"| {wl} | {metric} | {system} | {n} | {seconds:.1f} | {n / seconds:.2f} | {tokens / seconds:.0f} | {r} | {rss:.2f} | {g} |"
        )
        print(lines[-1], flush=True)

    print("\n".join(lines), flush=True)
    agreement: list[str] = []
    causal_notes: list[str] = []
    for wl, texts in workloads.items():
        tokens = ntok(wp, texts)
        # agreement first, on a few sentences
        k = min(8, len(texts))
        for metric in ("original", "word-l2r"):
            a = ours.score(texts[:k], metric=metric).totals
            b = minicons_pll(theirs, texts[:k], metric, args.minicons_batch)
            c = naive_pll(bert, wp, texts[: min(k, args.naive)], metric)
            d_naive, d_minicons = np.abs(a[: len(c)] - c).max(), np.abs(a - b).max()
            # exact: within 1e-4 nats per sentence of the naive loop (float32)
            assert d_naive < 1e-4 and d_minicons < 1e-3, (metric, d_naive, d_minicons)
            agreement.append(f"agreement, {wl} {metric}, first {k}: max |pllscore - naive| {d_naive:.1e}, "
                             f"|pllscore - minicons| {d_minicons:.1e} nats per sentence")  # fmt: skip
            print(agreement[-1], flush=True)
        for metric in ("original", "word-l2r"):
            _, t_m, rss_m = timed(lambda: minicons_pll(theirs, texts, metric, args.minicons_batch))
            res, t_o, rss_o = timed(lambda: ours.score(texts, metric=metric, progress=False))
            row(wl, metric, "minicons", len(texts), t_m, tokens, None, rss_m)
            row(wl, metric, "pllscore", len(texts), t_o, tokens, t_m / t_o, rss_o)
            nn = min(args.naive, len(texts))
            _, t_n, rss_n = timed(lambda: naive_pll(bert, wp, texts[:nn], metric))
            row(wl, metric, f"naive (first {nn})", nn, t_n, ntok(wp, texts[:nn]), None, rss_n)
        # cost of the other metrics, and the FLOP rate, on the first --subset sentences
        sub = texts[: args.subset]
        times, flops = {}, {}
        for metric in ("word-l2r", "whole-word", "all"):
            _, times[metric], rss = timed(lambda: ours.score(sub, metric=metric, progress=False))
            flops[metric] = matmul_flops(lambda: ours.score(sub, metric=metric, progress=False))
            name = "all four" if metric == "all" else metric
            row(wl, name, f"pllscore (first {len(sub)})", len(sub), times[metric], ntok(wp, sub), None, rss,
                flops[metric] / times[metric] / 1e9)  # fmt: skip
        theirs_flops = matmul_flops(lambda: minicons_pll(theirs, sub, "word-l2r", args.minicons_batch))
        lines.append(f"\n{wl}, first {len(sub)} sentences: all four metrics / word-l2r alone = "
                     f"{times['all'] / times['word-l2r']:.2f}; whole-word / word-l2r = "
                     f"{times['whole-word'] / times['word-l2r']:.2f}; matmul FLOPs of word-l2r, "
                     f"minicons / pllscore = {theirs_flops / flops['word-l2r']:.2f}\n")  # fmt: skip
        print(lines[-1], flush=True)

    # causal LL
    clm_ours = pllscore.CausalScorer(gpt, bpe)
    clm_theirs = mscorer.IncrementalLMScorer(gpt, "cpu", tokenizer=bpe)
    for wl, texts in workloads.items():
        tokens = sum(len(bpe(t)["input_ids"]) for t in texts)
        a, b = clm_ours.score(texts[:8]).totals, minicons_ll(clm_theirs, texts[:8], args.minicons_batch)
        assert np.abs(a - b).max() < 1e-3, a - b
        _, t_m, rss_m = timed(lambda: minicons_ll(clm_theirs, texts, args.minicons_batch))
        _, t_o, rss_o = timed(lambda: clm_ours.score(texts, progress=False))
        sub = texts[: args.subset]
        _, t_sub, _ = timed(lambda: clm_ours.score(sub, progress=False))
        flops = matmul_flops(lambda: clm_ours.score(sub, progress=False))
        row(wl, "causal LL", "minicons", len(texts), t_m, tokens, None, rss_m)
        row(wl, "causal LL", "pllscore", len(texts), t_o, tokens, t_m / t_o, rss_o)
        row(wl, "causal LL", f"pllscore (first {len(sub)})", len(sub), t_sub,
            sum(len(bpe(t)["input_ids"]) for t in sub), None, rss_o, flops / t_sub / 1e9)  # fmt: skip
        theirs_flops = matmul_flops(lambda: minicons_ll(clm_theirs, sub, args.minicons_batch))
        causal_notes.append(f"{wl}, first {len(sub)} sentences: matmul FLOPs of causal LL, minicons / pllscore = "
                            f"{theirs_flops / flops:.2f}")  # fmt: skip
        print(causal_notes[-1], flush=True)

    # reduced precision: bfloat16 autocast against float32, per token, on EventsAdapt
    lines.append("\n" + bf16_compare(bert, wp, workloads["EventsAdapt"][: args.bf16]))
    print(lines[-1], flush=True)

    # one 510-token text (the most bert-base takes), word-l2r
    if args.skip_long:
        args.out.write_text("\n".join(lines + ["", *causal_notes, "", *agreement]) + "\n")
        return
    # in a fresh process, so that its peak RSS is that of loading bert-base and scoring this text
    # alone, not of the allocator's high-water mark from the runs above
    done = subprocess.run([sys.executable, __file__, "--long-only"], capture_output=True, text=True, check=True)
    lines.append("\n" + done.stdout.strip().splitlines()[-1])
    print(lines[-1], flush=True)
    out = args.out
    out.write_text("\n".join(lines + ["", *causal_notes, "", *agreement]) + "\n")
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
