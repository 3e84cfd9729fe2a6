"""pllscore on one GPU against minicons and the plain loop, in one process: the workloads of issue 27.

    make -C benchmarks gpu-data PY=../.venv/bin/python   # here, once: data, tokenizers, minicons wheels (.gpu-data)
    make -C benchmarks gpu PY=python3                    # on the GPU machine (BENCHMARKS.md, "GPU"): gpu-last-run.md
    python benchmarks/gpu.py --tiny                      # tiny shapes, few sentences, on the CPU: the format only

Models of real shapes (bert-base, GPT-2-small, Llama-3.2-1B, Llama-3-8B) with random seeded weights are
built in-process on the device; the tokenizers are trained on the Brown stimuli (WordPiece of 28,996 pieces,
byte-level BPE of 45,725, all Brown has: GPT-2's 50,257-row and Llama-3's 128,256-row vocabularies are kept,
of which the BPE uses the first ids). TF32 is off (float32 is float32). Every system scores every workload once first, and the
scores are checked to agree before anything is timed; then the best of --repeats runs of each is taken.

* the plain loop: texts sorted by length, right-padded batches of 64, one forward each, log-softmax over the
  whole vocabulary in float32, gather (what lm-evaluation-harness's HF backend does);
* minicons 0.3.39 at its best batch size (the fastest of --minicons-batches on the first --sweep sentences);
* reduced precision: bfloat16 weights (the float32 weights rounded, handed over as a model object, or through
  ``pllscore.load(..., dtype="bfloat16")`` where that loads bfloat16 weights) and bfloat16 autocast over
  float32 weights, against float32: error per sentence, and the BLiMP pair decisions it flips;
* FLOP rates: matrix-multiply FLOPs of pllscore's own work (``torch.utils.flop_counter``, one extra run)
  over its time, as a share of a large fp32 and bf16 matrix product timed here.
"""

from __future__ import annotations

import argparse
import copy
import gc
import inspect
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import pandas as pd
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run as cpu_run  # noqa: E402  (tokenizer builders, minicons helpers, the FLOP counter)
from real_systems import machine, machine_lines, prefix_id  # noqa: E402

DATA = HERE / ".gpu-data"
PARADIGMS = ("anaphor_gender_agreement", "anaphor_number_agreement")  # 2 x 1,000 pairs: 4,000 sentences
GB = 1e9


# --- data ----------------------------------------------------------------------------------------------
def use_data(folder: Path) -> None:
    """Point run.py's tokenizer builders at ``folder`` (brown/, tokenizers/); refuse a folder without the data."""
    need = [folder / "eventsadapt" / "EventsAdapt.csv", folder / "brown" / "brown_stimuli.csv"]
    need += [folder / "blimp" / f"{p}.jsonl" for p in PARADIGMS]
    missing = [str(p) for p in need if not p.exists()]
    if missing:
        sys.exit(f"gpu.py: {missing[0]} not found: run `make -C benchmarks gpu-data` first (or give --data)")
    cpu_run.SHARED, cpu_run.CACHE = folder, folder / "tokenizers"


def workloads(folder: Path, n_ea: int, n_brown: int, n_pairs: int) -> tuple[dict[str, list[str]], int]:
    """EventsAdapt (the first n), Brown (run.py's seeded sample of 1,000, the first n) and BLiMP (the good
    sentences of n pairs per paradigm, then their bad ones); also the number of BLiMP pairs."""
    ea = pd.read_csv(folder / "eventsadapt" / "EventsAdapt.csv")["Sentence"].tolist()[:n_ea]
    brown_all = cpu_run.brown_sentences()
    pick = sorted(np.random.default_rng(0).choice(len(brown_all), size=1000, replace=False))
    brown = [brown_all[i] for i in pick][:n_brown]
    good, bad = [], []
    for p in PARADIGMS:
        with open(folder / "blimp" / f"{p}.jsonl", encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()][:n_pairs]
        good += [r["sentence_good"] for r in rows]
        bad += [r["sentence_bad"] for r in rows]
    return {"EventsAdapt": ea, "Brown": brown, "BLiMP": good + bad}, len(good)


# --- models (real shapes, random seeded weights, built on the device) --------------------------------------
def build(config, cls, device: str):
    """``cls(config)`` with seed 0, in float32, initialised on ``device`` (an 8B model in seconds)."""
    torch.manual_seed(0)
    with torch.device(device):
        model = cls(config)
    return model.eval()


def shapes(tiny: bool, wp, bpe) -> dict[str, tuple]:
    from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    ids = dict(bos_token_id=prefix_id(bpe), eos_token_id=bpe.eos_token_id, pad_token_id=bpe.eos_token_id)
    small = dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)
    if tiny:
        bert = BertConfig(vocab_size=len(wp), pad_token_id=wp.pad_token_id, hidden_size=64, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=128)  # fmt: skip
        gpt = GPT2Config(vocab_size=len(bpe), n_embd=64, n_layer=2, n_head=2, **ids)
        l1 = LlamaConfig(vocab_size=len(bpe), hidden_size=64, intermediate_size=128, tie_word_embeddings=True,
                         **small, **ids)  # fmt: skip
        l8 = LlamaConfig(vocab_size=len(bpe), hidden_size=128, intermediate_size=256, **small, **ids)
    else:
        bert = BertConfig(vocab_size=len(wp), pad_token_id=wp.pad_token_id)  # bert-base
        gpt = GPT2Config(vocab_size=50257, **ids)  # GPT-2 small (the Brown BPE uses its first ids)
        llama = dict(vocab_size=128256, num_attention_heads=32, num_key_value_heads=8, rope_theta=500000.0, **ids)
        l1 = LlamaConfig(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, tie_word_embeddings=True,
                         head_dim=64, **llama)  # fmt: skip  # Llama-3.2-1B
        l8 = LlamaConfig(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, **llama)  # Llama-3-8B
    return {
        "bert": (bert, BertForMaskedLM, "bert-base shape" if not tiny else "tiny BERT"),
        "gpt2": (gpt, GPT2LMHeadModel, "GPT-2-small shape" if not tiny else "tiny GPT-2"),
        "llama1b": (l1, LlamaForCausalLM, "Llama-3.2-1B shape" if not tiny else "tiny Llama (1B's place)"),
        "llama8b": (l8, LlamaForCausalLM, "Llama-3-8B shape" if not tiny else "tiny Llama (8B's place)"),
    }


def to_bf16(model, keep: bool = True):
    """``model`` with its weights rounded to bfloat16 (a copy if ``keep``, else in place), its rotary
    frequencies left float32 as a bfloat16 ``from_pretrained`` leaves them."""
    freqs = {n: b.clone() for n, b in model.named_buffers() if n.endswith("inv_freq")}
    out = (copy.deepcopy(model) if keep else model).to(torch.bfloat16)
    for n, b in freqs.items():
        owner, attr = out.get_submodule(n.rpartition(".")[0]), n.rpartition(".")[2]
        setattr(owner, attr, b)
    return out


def n_params(model) -> float:
    return sum(p.numel() for p in model.parameters())


def weight_bytes(model) -> float:
    return sum(p.numel() * p.element_size() for p in model.parameters())


# --- systems -------------------------------------------------------------------------------------------------
def plain_loop(model, tok, texts: list[str], batch: int = 64, exact: bool = False) -> np.ndarray:
    """Texts sorted by length, right-padded batches, one forward each, log-softmax over the whole vocabulary
    (float32; float64 with ``exact``, the agreement reference), gather; totals in the texts' order."""
    dev = next(model.parameters()).device
    start, pad = prefix_id(tok), tok.pad_token_id if tok.pad_token_id is not None else 0
    ids = [[start, *row] for row in tok(texts, add_special_tokens=False)["input_ids"]]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out = np.empty(len(texts))
    with torch.inference_mode():
        for b in range(0, len(order), batch):
            pick = order[b : b + batch]
            rows = [ids[i] for i in pick]
            width = max(map(len, rows))
            x = torch.tensor([r + [pad] * (width - len(r)) for r in rows], device=dev)
            lengths = torch.tensor([len(r) for r in rows], device=dev)
            mask = (torch.arange(width, device=dev)[None] < lengths[:, None]).long()
            logits = model(input_ids=x, attention_mask=mask).logits[:, :-1]
            logp = (logits.double() if exact else logits.float()).log_softmax(-1)
            lp = (logp.gather(-1, x[:, 1:, None])[..., 0] * mask[:, 1:]).sum(1)
            out[pick] = lp.cpu().numpy()
    return out


def naive_pll(model, tok, texts: list[str]) -> np.ndarray:
    """word-l2r by one unbatched forward pass per masked copy, float64 log-softmax (the test suite's oracle)."""
    dev = next(model.parameters()).device
    totals = []
    with torch.inference_mode():
        for text in texts:
            enc = tok(text)
            ids, wids = enc["input_ids"], enc.word_ids()
            total = 0.0
            for t, w in enumerate(wids):
                if w is None:
                    continue
                x = torch.tensor([ids], device=dev)
                x[0, [j for j, v in enumerate(wids) if v == w and j >= t]] = tok.mask_token_id
                total += torch.log_softmax(model(input_ids=x).logits[0, t].double(), -1)[ids[t]].item()
            totals.append(total)
    return np.array(totals)


# --- measuring ----------------------------------------------------------------------------------------------
class Bench:
    """Timings (best of ``repeats``, the device synchronised), peak device memory, FLOP rates, the report."""

    def __init__(self, device: str, repeats: int, tiny: bool):
        self.device, self.repeats, self.tiny = device, repeats, tiny
        self.cuda = device.startswith("cuda")
        self.rows: list[str] = []
        self.notes: list[str] = []
        self.peak: dict[str, float] = {}
        self.got: dict[str, dict] = {}  # per row key: seconds, rate, memory (for the goals)

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def memory(self) -> float:
        return torch.cuda.max_memory_allocated() / 2**30 if self.cuda else float("nan")

    def time(self, fn, repeats: int | None = None):
        best, out, mem = float("inf"), None, float("nan")
        for _ in range(repeats or self.repeats):
            gc.collect()
            if self.cuda:
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats()
            self.sync()
            t0 = time.perf_counter()
            out = fn()
            self.sync()
            best = min(best, time.perf_counter() - t0)
            mem = self.memory()
        return out, best, mem

    def gemm_peaks(self) -> None:
        """Best FLOP/s of an n x n x n matrix product in float32 (TF32 off) and bfloat16 on the device."""
        n = 1024 if self.tiny else 8192
        for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            a = torch.randn(n, n, device=self.device, dtype=dtype)
            b = torch.randn(n, n, device=self.device, dtype=dtype)
            best = float("inf")
            with torch.inference_mode():
                for i in range(13):
                    self.sync()
                    t0 = time.perf_counter()
                    a @ b
                    self.sync()
                    if i >= 3:
                        best = min(best, time.perf_counter() - t0)
            self.peak[name] = 2 * n**3 / best
            del a, b

    def row(self, key, workload, system, n, seconds, mem, vs="", flops=None, peak="fp32") -> None:
        rate = flops / seconds if flops else None
        self.got[key] = {"s": seconds, "rate": rate, "mem": mem, "peak": peak}
        unit = 1e9 if self.tiny else 1e12
        share = f"{rate / unit:.1f} ({100 * rate / self.peak[peak]:.0f}% of {peak})" if rate else ""
        mem_s = "" if mem != mem else f"{mem:.2f}"
        self.rows.append(
            f"| {workload} | {system} | {n} | {seconds:.3f} | {n / seconds:,.0f} | {vs} | {share} | {mem_s} |"
        )
        print(self.rows[-1], flush=True)

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(text, flush=True)


class Disagree(Exception):
    """Systems that disagree: the workload stops before anything more of it is timed."""


def agree(name: str, got: np.ndarray, want: np.ndarray, tol: float, bench: Bench) -> float:
    """Stop the workload (before timing) where ``got`` is more than ``tol`` nats from ``want`` for a sentence."""
    diff = float(np.abs(got - want).max())
    bench.note(f"* agreement, {name}: max |diff| {diff:.1e} nats per sentence over {len(got)} (tolerance {tol:g})")
    if not diff <= tol:
        raise Disagree(f"{name} disagree by {diff:.3g} nats (tolerance {tol:g})")
    return diff


def bf16_error(name: str, approx: np.ndarray, exact: np.ndarray, bench: Bench, n_pairs: int | None = None) -> None:
    err = np.abs(approx - exact)
    text = f"* bf16 error, {name}: per sentence mean {err.mean():.4f}, max {err.max():.4f} nats"
    if n_pairs:  # BLiMP: the good sentences, then the bad ones
        flips = int(((exact[:n_pairs] > exact[n_pairs:]) != (approx[:n_pairs] > approx[n_pairs:])).sum())
        text += f"; BLiMP pair decisions flipped: {flips} of {n_pairs}"
    bench.note(text)


# --- the workloads ------------------------------------------------------------------------------------------------
def masked(bench: Bench, spec, wp, texts: dict[str, list[str]], args) -> None:
    import pllscore

    config, cls, label = spec
    from minicons import scorer as mscorer

    bert = build(config, cls, bench.device)
    bert16 = to_bf16(bert)
    cpu_run.minicons_compat(wp)
    theirs = mscorer.MaskedLMScorer(bert, bench.device, tokenizer=wp)
    ours = pllscore.MaskedScorer(bert, wp)
    autocast = pllscore.MaskedScorer(bert, wp, dtype="bfloat16")  # autocast over the float32 weights
    weights16 = pllscore.MaskedScorer(bert16, wp, dtype="bfloat16")  # bfloat16 weights as they are
    m = "word-l2r"
    for wl in ("EventsAdapt", "Brown"):
        xs = texts[wl]
        w = f"{label}, {m}, {wl}"
        exact = ours.score(xs, metric=m, progress=False).totals
        k = min(args.naive, len(xs))
        agree(f"{w}: pllscore vs one pass per copy (first {k})", exact[:k], naive_pll(bert, wp, xs[:k]), 1e-4, bench)
        sweep = {}
        for b in args.minicons_batches:
            _, sweep[b], _ = bench.time(lambda: cpu_run.minicons_pll(theirs, xs[: args.sweep], m, b), repeats=1)
        best_b = min(sweep, key=sweep.get)
        bench.note(f"* minicons batch sweep, {w}, first {min(args.sweep, len(xs))}: "
                   + ", ".join(f"{b}: {s:.2f} s" for b, s in sweep.items()) + f"; best {best_b}")  # fmt: skip
        agree(f"{w}: pllscore vs minicons (batch {best_b})", exact, cpu_run.minicons_pll(theirs, xs, m, best_b),
              args.tol, bench)  # fmt: skip
        _, t_m, mem_m = bench.time(lambda: cpu_run.minicons_pll(theirs, xs, m, best_b))
        bench.row(f"bert {wl} minicons", w, f"minicons fp32 (batch {best_b})", len(xs), t_m, mem_m)
        for key, sc, system, peak in (
            ("fp32", ours, "pllscore fp32", "fp32"),
            ("bf16 weights", weights16, "pllscore bf16 weights", "bf16"),
            ("autocast", autocast, "pllscore bf16 autocast", "bf16"),
        ):
            res, t, mem = bench.time(lambda: sc.score(xs, metric=m, progress=False))
            flops = cpu_run.matmul_flops(lambda: sc.score(xs, metric=m, progress=False))
            bench.row(f"bert {wl} {key}", w, system, len(xs), t, mem, f"{t_m / t:.2f}x minicons fp32", flops, peak)
            if key != "fp32":
                bf16_error(f"{w}, {system}", res.totals, exact, bench)


def causal(bench: Bench, name: str, spec, bpe, texts: dict[str, list[str]], n_pairs: int, args) -> None:
    """pllscore against the plain loop: float32 (unless ``name`` is the 8B), bfloat16 weights, autocast."""
    import pllscore

    config, cls, label = spec
    big = name == "llama8b"
    wls = ["BLiMP"] if name.startswith("llama") else ["BLiMP", "Brown"]
    model = build(config, cls, bench.device)
    bench.note(f"* {label}: {n_params(model) / 1e9:.3f}B parameters, {weight_bytes(model) / GB:.2f} GB in float32")
    exact: dict[str, np.ndarray] = {}
    loop32: dict[str, float] = {}
    ours32: dict[str, float] = {}
    ours = pllscore.CausalScorer(model, bpe)
    for wl in wls:
        xs, w = texts[wl], f"{label}, causal, {wl}"
        pairs = n_pairs if wl == "BLiMP" else None
        if big:  # float32 is the reference only: one pllscore run, checked against the loop on a sample
            exact[wl], t, mem = bench.time(lambda: ours.score(xs, progress=False).totals, repeats=1)
            k = min(256, len(xs))
            agree(f"{w}, fp32: pllscore vs the plain loop (float64 log-softmax), first {k}", exact[wl][:k],
                  plain_loop(model, bpe, xs[:k], args.loop_batch, exact=True), args.tol, bench)  # fmt: skip
            bench.row(f"{name} {wl} fp32", w, "pllscore fp32 (one run, the reference)", len(xs), t, mem)
            ours32[wl] = t
            continue
        exact[wl] = ours.score(xs, progress=False).totals
        agree(f"{w}, fp32: pllscore vs the plain loop (float64 log-softmax)", exact[wl],
              plain_loop(model, bpe, xs, args.loop_batch, exact=True), args.tol, bench)  # fmt: skip
        _, loop32[wl], mem = bench.time(lambda: plain_loop(model, bpe, xs, args.loop_batch))
        bench.row(f"{name} {wl} loop fp32", w, f"plain loop fp32 (batch {args.loop_batch})", len(xs), loop32[wl], mem)
        _, ours32[wl], mem = bench.time(lambda: ours.score(xs, progress=False))
        flops = cpu_run.matmul_flops(lambda: ours.score(xs, progress=False))
        bench.row(f"{name} {wl} fp32", w, "pllscore fp32", len(xs), ours32[wl], mem, f"{loop32[wl] / ours32[wl]:.2f}x loop",
                  flops)  # fmt: skip
        if name == "gpt2":  # autocast over the float32 weights (today's dtype="bfloat16" on a model object)
            auto = pllscore.CausalScorer(model, bpe, dtype="bfloat16")
            res, t, mem = bench.time(lambda: auto.score(xs, progress=False))
            flops = cpu_run.matmul_flops(lambda: auto.score(xs, progress=False))
            bench.row(f"{name} {wl} autocast", w, "pllscore bf16 autocast", len(xs), t, mem,
                      f"{ours32[wl] / t:.2f}x pllscore fp32", flops, "bf16")  # fmt: skip
            bf16_error(f"{w}, pllscore bf16 autocast", res.totals, exact[wl], bench, pairs)
    # bfloat16 weights: the same weights rounded (in place for the 8B: its float32 copy is let go)
    model16 = to_bf16(model, keep=not big)
    if big:
        del model
        gc.collect()
        if bench.cuda:
            torch.cuda.empty_cache()
    weights = weight_bytes(model16)
    bench.note(f"* {label} in bfloat16: {weights / GB:.2f} GB of weights")
    bench.got[f"{name} weights"] = {"bytes": weights}
    ours16 = pllscore.CausalScorer(model16, bpe, dtype="bfloat16")
    for wl in wls:
        xs, w = texts[wl], f"{label}, causal, {wl}"
        pairs = n_pairs if wl == "BLiMP" else None
        first = ours16.score(xs, progress=False).totals
        bf16_error(f"{w}, pllscore bf16 weights", first, exact[wl], bench, pairs)
        loop16 = plain_loop(model16, bpe, xs, args.loop_batch)
        bf16_error(f"{w}, plain loop bf16 weights", loop16, exact[wl], bench, pairs)
        bench.note(f"* {w}: pllscore and the plain loop in bf16 weights differ by up to "
                   f"{np.abs(first - loop16).max():.2g} nats per sentence")  # fmt: skip
        _, t_loop, mem = bench.time(lambda: plain_loop(model16, bpe, xs, args.loop_batch))
        bench.row(f"{name} {wl} loop bf16", w, f"plain loop bf16 weights (batch {args.loop_batch})", len(xs), t_loop,
                  mem)  # fmt: skip
        _, t, mem = bench.time(lambda: ours16.score(xs, progress=False))
        flops = cpu_run.matmul_flops(lambda: ours16.score(xs, progress=False))
        vs = f"{t_loop / t:.2f}x loop bf16; {ours32[wl] / t:.2f}x pllscore fp32"
        bench.row(f"{name} {wl} bf16 weights", w, "pllscore bf16 weights", len(xs), t, mem, vs, flops, "bf16")
    if big and args.load_8b:
        load_8b(bench, model16, bpe, texts["BLiMP"], exact["BLiMP"], n_pairs, label)


def load_8b(bench: Bench, model16, tok, xs: list[str], exact: np.ndarray, n_pairs: int, label: str) -> None:
    """The 8B saved in bfloat16 and loaded by ``pllscore.load(folder, dtype="bfloat16")`` (the copy handed over
    above let go first): the weights' type it loads, the device memory it takes, its peak while scoring."""
    import pllscore

    with tempfile.TemporaryDirectory(dir=os.environ.get("GPU_BENCH_TMP")) as folder:
        t0 = time.perf_counter()
        model16.save_pretrained(folder)
        tok.save_pretrained(folder)
        saved = time.perf_counter() - t0
        model16.to("meta")  # the caller's reference stays; its memory goes
        gc.collect()
        if bench.cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated() if bench.cuda else 0
        t0 = time.perf_counter()
        scorer = pllscore.load(folder, device=bench.device, dtype="bfloat16")
        loaded = time.perf_counter() - t0
        at_load = (torch.cuda.max_memory_allocated() - before) / GB if bench.cuda else float("nan")
        kind = str(next(scorer.model.parameters()).dtype).removeprefix("torch.")
        got, t, mem = bench.time(lambda: scorer.score(xs, progress=False))
        bench.got["llama8b load"] = {"load_gb": at_load, "mem": mem}
        bench.row("llama8b BLiMP load row", f"{label}, causal, BLiMP", f"pllscore.load(dtype='bfloat16'): {kind} weights",
                  len(xs), t, mem)  # fmt: skip
        bench.note(f"* load(..., dtype='bfloat16') of the 8B: {kind} weights, {at_load:.2f} GB on the device at load "
                   f"(peak), {loaded:.1f} s to load ({saved:.1f} s to save it first); scoring peak {mem:.2f} GiB")  # fmt: skip
        bf16_error(f"{label}, causal, BLiMP, load(dtype='bfloat16')", got.totals, exact, bench, n_pairs)


def device_map(bench: Bench, spec, bpe, xs: list[str]) -> None:
    """The model spread over the GPU and the CPU (half its layers offloaded): the same scores as on one device."""
    from accelerate import dispatch_model, infer_auto_device_map

    import pllscore

    config, cls, label = spec
    model = build(config, cls, bench.device)
    one = pllscore.CausalScorer(model, bpe).score(xs, progress=False).totals
    cpu = copy.deepcopy(model).to("cpu")
    del model
    half = f"{int(weight_bytes(cpu) / 2 / 2**20)}MiB"
    budget = {0: half, "cpu": "64GiB"} if bench.cuda else {"cpu": "64GiB"}
    params = inspect.signature(pllscore.load).parameters
    if "device_map" in params:
        how = f"pllscore.load(folder, device_map='auto', max_memory={budget})"
        with tempfile.TemporaryDirectory() as folder:
            cpu.save_pretrained(folder)
            bpe.save_pretrained(folder)
            kw = {"max_memory": budget} if "max_memory" in params else {}
            scorer = pllscore.load(folder, device_map="auto", **kw)
            spread, t, mem = bench.time(lambda: scorer.score(xs, progress=False).totals, repeats=1)
            where = getattr(scorer.model, "hf_device_map", {})
    else:
        how = f"accelerate.dispatch_model(infer_auto_device_map(max_memory={budget})) handed to CausalScorer"
        where = infer_auto_device_map(cpu, max_memory=budget, no_split_module_classes=["GPT2Block"])
        spread_model = dispatch_model(cpu, device_map=where) if bench.cuda else cpu
        scorer = pllscore.CausalScorer(spread_model, bpe)
        spread, t, mem = bench.time(lambda: scorer.score(xs, progress=False).totals, repeats=1)
    places = sorted({str(v) for v in where.values()}) if where else ["(one device)"]
    diff = float(np.abs(spread - one).max())
    bench.got["device map"] = {"diff": diff}
    bench.row("device map row", f"{label}, causal, BLiMP", f"device_map ({', '.join(places)})", len(xs), t, mem,
              f"max diff to one device {diff:.1e}")  # fmt: skip
    bench.note(f"* device map: {how}; {len(where)} modules placed; max |diff| to one device {diff:.1e} nats "
               f"per sentence (goal 1e-5)")  # fmt: skip


# --- the goals of issue 27 -----------------------------------------------------------------------------------------
def goals(bench: Bench) -> list[str]:
    g = bench.got

    def ratio(a: str, b: str) -> float | None:
        return g[b]["s"] / g[a]["s"] if a in g and b in g else None

    def share(a: str) -> float | None:
        return g[a]["rate"] / bench.peak[g[a]["peak"]] if a in g and g[a]["rate"] else None

    def fmt(value, goal, kind="x") -> tuple[str, str]:
        if value is None or value != value:
            return "not run" if value is None else "n/a (no GPU)", ""
        text = f"{value:.2f}x" if kind == "x" else f"{100 * value:.0f}%" if kind == "%" else f"{value:.3g}"
        ok = value <= goal if kind == "<=" else value >= goal
        return text, "yes" if ok else "no"

    out = ["| workload | goal | measured | met? |", "|---|---|---:|---|"]

    def add(workload, goal_text, value, goal, kind="x"):
        text, ok = fmt(value, goal, kind)
        out.append(f"| {workload} | {goal_text} | {text} | {ok} |")

    for wl in ("EventsAdapt", "Brown"):
        add(f"bert-base word-l2r fp32, {wl}", ">= 2.5x minicons", ratio(f"bert {wl} fp32", f"bert {wl} minicons"), 2.5)
        add(f"bert-base word-l2r fp32, {wl}", ">= 80% of fp32 peak", share(f"bert {wl} fp32"), 0.8, "%")
        best16 = [ratio(f"bert {wl} {k}", f"bert {wl} minicons") for k in ("bf16 weights", "autocast")]
        best16 = max((v for v in best16 if v), default=None)
        add(f"bert-base word-l2r bf16 (best of weights, autocast), {wl}", ">= 8x minicons fp32", best16, 8)
    for wl in ("BLiMP", "Brown"):
        add(f"GPT-2-small fp32, {wl}", ">= 2.5x the plain loop", ratio(f"gpt2 {wl} fp32", f"gpt2 {wl} loop fp32"), 2.5)
        add(f"GPT-2-small fp32, {wl}", ">= 50% of fp32 peak", share(f"gpt2 {wl} fp32"), 0.5, "%")
        add(f"GPT-2-small bf16 weights, {wl}", ">= 2.5x pllscore fp32",
            ratio(f"gpt2 {wl} bf16 weights", f"gpt2 {wl} fp32"), 2.5)  # fmt: skip
    add("Llama-3.2-1B fp32, BLiMP", ">= 1.7x the loop", ratio("llama1b BLiMP fp32", "llama1b BLiMP loop fp32"), 1.7)
    add("Llama-3.2-1B bf16 weights, BLiMP", ">= 40% of bf16 peak", share("llama1b BLiMP bf16 weights"), 0.4, "%")
    w8 = g.get("llama8b weights", {}).get("bytes")
    load = g.get("llama8b load", {})
    add("Llama-3-8B bf16, load(dtype='bfloat16')", "loads in <= 17 GB", load.get("load_gb"), 17, "<=")
    mem8 = g.get("llama8b BLiMP bf16 weights", {}).get("mem")
    add("Llama-3-8B bf16 weights (model object), BLiMP", "peak <= 20 GB",
        None if mem8 is None else mem8 * 2**30 / GB, 20, "<=")  # fmt: skip
    add("Llama-3-8B bf16 weights, BLiMP", ">= 5x the loop",
        ratio("llama8b BLiMP bf16 weights", "llama8b BLiMP loop bf16"), 5)  # fmt: skip
    add("Llama-3-8B bf16 weights, BLiMP", ">= 40% of bf16 peak", share("llama8b BLiMP bf16 weights"), 0.4, "%")
    add("device_map (GPU + CPU offload)", "max diff to one device <= 1e-5 nats", g.get("device map", {}).get("diff"),
        1e-5, "<=")  # fmt: skip
    if w8:
        out.append(f"\nLlama-3-8B shape: {w8 / GB:.2f} GB of bfloat16 weights.")
    return out


# --- the report ------------------------------------------------------------------------------------------------------
def header(bench: Bench, args, started: str) -> list[str]:
    if bench.cuda:
        p = torch.cuda.get_device_properties(0)
        gpu = (f"* **GPU**: {p.name}, {p.multi_processor_count} SMs, {p.total_memory / 2**30:.1f} GiB; CUDA "
               f"{torch.version.cuda}; TF32 off (float32 matmul precision "
               f"'{torch.get_float32_matmul_precision()}')")  # fmt: skip
    else:
        gpu = "* **GPU**: none: the CPU"
    n, unit, name = (1024, 1e9, "GFLOP/s") if args.tiny else (8192, 1e12, "TFLOP/s")
    title = "## GPU run" if not args.tiny else "## CPU tiny-shape run: an example of the format, NOT figures"
    lines = [title, ""]
    if args.tiny:
        lines += ["> Tiny models and a few sentences on the CPU (`python benchmarks/gpu.py --tiny`): it checks that the",
                  "> script runs end to end and shows what it writes. None of these numbers measures anything.", ""]  # fmt: skip
    lines += [
        f"Command: `{' '.join(['python', 'benchmarks/gpu.py', *sys.argv[1:]])}`, started {started}",
        "",
        gpu,
        *machine_lines(machine()),
        f"* **Measured GEMM peak** ({n}^3): fp32 {bench.peak['fp32'] / unit:.1f} {name}, bf16 "
        f"{bench.peak['bf16'] / unit:.1f} {name}",
        f"* best of {args.repeats} runs after a first (untimed) run that checks agreement; peak memory is "
        "torch.cuda.max_memory_allocated over the run, weights included",
        "",
    ]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA, help="the folder `make -C benchmarks gpu-data` fills")
    ap.add_argument(
        "--out", type=Path, help="the report (default benchmarks/gpu-last-run.md; --tiny: gpu-tiny-example.md)"
    )
    ap.add_argument("--tiny", action="store_true", help="tiny shapes and a few sentences (on the CPU: the format)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--tol", type=float, default=2e-3, help="agreement, nats per sentence")
    ap.add_argument("--loop-batch", type=int, default=64)
    ap.add_argument("--naive", type=int, default=4, help="sentences checked against one pass per masked copy")
    ap.add_argument("--sweep", type=int, default=200, help="sentences of minicons' batch-size sweep")
    ap.add_argument("--minicons-batches", type=lambda s: [int(x) for x in s.split(",")], default=None)
    ap.add_argument("--only", default="bert,gpt2,llama1b,llama8b,devicemap", help="which workloads, comma-separated")
    ap.add_argument("--load-8b", action=argparse.BooleanOptionalAction, default=True,
                    help="also save the 8B and load it with pllscore.load(dtype='bfloat16') (where that loads bf16)")  # fmt: skip
    ap.add_argument("--prepare", action="store_true", help="build the tokenizers into --data and stop")
    args = ap.parse_args()
    use_data(args.data)
    import transformers

    wp, bpe = cpu_run.wordpiece_tokenizer(), cpu_run.bpe_tokenizer()
    if args.prepare:
        print(f"tokenizers in {cpu_run.CACHE}: {len(wp)} WordPiece pieces, {len(bpe)} BPE tokens")
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    transformers.logging.set_verbosity_error()
    torch.set_float32_matmul_precision("highest")  # TF32 off: float32 is float32, the peaks and every system
    if args.tiny:
        args.repeats = min(args.repeats, 1)
        args.sweep = min(args.sweep, 16)
    args.minicons_batches = args.minicons_batches or ([4, 8] if args.tiny else [16, 32, 64, 128, 256])
    out = args.out or HERE / ("gpu-tiny-example.md" if args.tiny else "gpu-last-run.md")
    started, t_start = time.strftime("%Y-%m-%d %H:%M"), time.perf_counter()
    texts, n_pairs = workloads(args.data, *((8, 4, 4) if args.tiny else (1564, 1000, 1000)))
    bench = Bench(args.device, args.repeats, args.tiny)
    bench.gemm_peaks()
    head = header(bench, args, started)
    unit = "GFLOP/s" if args.tiny else "TFLOP/s"
    table = [f"| workload | system | sentences | s | sentences/s | vs | {unit} (% of peak) | peak GiB |",
             "|---|---|---:|---:|---:|---|---|---:|"]  # fmt: skip
    print("\n".join(head + table), flush=True)

    def write(done: bool) -> None:
        took = f"Whole run: {time.perf_counter() - t_start:.0f} s" + ("" if done else " (stopped early)")
        body = [*head, *table, *bench.rows, "", *bench.notes, "", "### The goals of issue 27", "", *goals(bench)]
        out.write_text("\n".join([*body, "", f"{took}; transformers {transformers.__version__}."]) + "\n")

    specs = shapes(args.tiny, wp, bpe)
    only = set(args.only.split(","))
    for name in ("bert", "gpt2", "devicemap", "llama1b", "llama8b"):  # the 8B last: its load is the slowest
        if name not in only:
            continue
        t0 = time.perf_counter()
        try:
            if name == "bert":
                masked(bench, specs["bert"], wp, texts, args)
            elif name == "devicemap":
                device_map(bench, specs["gpt2"], bpe, texts["BLiMP"][:1000])
            else:
                causal(bench, name, specs[name], bpe, texts, n_pairs, args)
        except Disagree as e:  # the other workloads still run: time on the GPU machine is precious
            bench.note(f"* **{name} stopped before timing**: {e}")
        except Exception as e:  # an out-of-memory, an API this pllscore lacks: the rest still runs
            traceback.print_exc()
            bench.note(f"* **{name} failed**: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        gc.collect()
        if bench.cuda:
            torch.cuda.empty_cache()
        bench.note(f"* ({name}: {time.perf_counter() - t0:.0f} s)")
        write(False)  # what is done so far, should the run be stopped
    write(True)
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
