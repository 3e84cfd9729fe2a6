"""Encoder-decoder scoring: pllscore's Seq2SeqScorer vs lm-eval's seq2seq backend vs a plain loop, in one process.

    .venv/bin/python benchmarks/seq2seq.py --threads 1        # 50 sources x 4 hypotheses, 200 BLiMP sentences
    .venv/bin/python benchmarks/seq2seq.py --sources 10 --blimp 40 --rounds 1 --batches 16   # a quick check

The model has T5-small's dimensions (d_model 512, 6 + 6 layers, 8 heads, d_ff 2048, vocabulary
32,128) with random weights (seeded); the tokenizer is a T5-style Unigram (``$A </s>``, pad 0,
eos 1, unk 2) trained here on the Brown sentences. Two workloads: (a) n-best lists, each source
with several hypotheses (the source sentence and variants of it: a word dropped, two words
swapped, another sentence's word put in); (b) BLiMP good and bad sentences with the empty source.

Each tool gets a fresh model with the same weights and is timed end to end (its construction and
the scoring): pllscore's default convention (log P(text + </s> | source), minus the model's own
loss) and ``convention="lm-eval"``; lm-eval's ``HFLM(backend="seq2seq")`` at each ``--batches``
size (ratios are to its fastest); one ``model(input_ids=src, labels=lab)`` per pair. The
scores are checked to agree (pllscore lm-eval vs lm-eval and pllscore default vs the loop
within 1e-4 nats per text). Rounds run the tools in turn, reversed every other round (A B B A),
so that load on a shared machine falls on all of them; medians of wall and CPU seconds (the process's,
less sensitive to other work on the cores) are reported. Prints Markdown.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "data"
sys.path.insert(0, str(HERE))
from real_systems import machine, machine_lines  # noqa: E402

PARADIGMS = ("anaphor_gender_agreement", "determiner_noun_agreement_1", "regular_plural_subject_verb_agreement_1")
T5_SMALL = dict(d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6, num_heads=8)


# --- model, tokenizer, workloads ----------------------------------------------------------
def brown() -> list[str]:
    import pandas as pd

    return pd.read_csv(SHARED / "brown" / "brown_stimuli.csv")["sentence"].tolist()


def t5_tokenizer(sentences: list[str], vocab: int):
    """A T5-style Unigram tokenizer trained on ``sentences``: ``$A </s>``, <pad> 0, </s> 1, <unk> 2, no BOS."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    specials = ["<pad>", "</s>", "<unk>"]
    trainer = trainers.UnigramTrainer(vocab_size=vocab, special_tokens=specials, unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(sentences, trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>", model_max_length=512
    )


def t5_small_weights() -> tuple[object, dict[str, torch.Tensor]]:
    """T5-small's config and a seeded random state dict."""
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(vocab_size=32128, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, **T5_SMALL)
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config)
    return config, {k: v.clone() for k, v in model.state_dict().items()}


def fresh(config, weights):
    """A new model with the given weights, in eval mode."""
    from transformers import T5ForConditionalGeneration

    model = T5ForConditionalGeneration(config)
    model.load_state_dict(weights)
    return model.eval()


def nbest(sentences: list[str], n_sources: int, n_hyps: int) -> tuple[list[str], list[str]]:
    """(texts, sources): per source sentence, itself and variants of it as hypotheses."""
    rng = random.Random(0)
    pool = [s for s in sentences if 8 <= len(s.split()) <= 20]
    picked = rng.sample(pool, n_sources + 1)
    texts, sources = [], []
    for i, src in enumerate(picked[:n_sources]):
        words, other = src.split(), picked[i + 1].split()
        hyps = [src]
        while len(hyps) < n_hyps:
            w = list(words)
            j = rng.randrange(len(w) - 1)
            kind = len(hyps) % 3
            if kind == 1:
                del w[j]
            elif kind == 2:
                w[j], w[j + 1] = w[j + 1], w[j]
            else:
                w[j] = rng.choice(other)
            hyps.append(" ".join(w))
        texts += hyps
        sources += [src] * n_hyps
    return texts, sources


def blimp(n: int) -> list[str]:
    """``n`` BLiMP sentences: good and bad of the first pairs of a few paradigms."""
    per = -(-n // (2 * len(PARADIGMS)))
    out = []
    for p in PARADIGMS:
        rows = [json.loads(x) for x in (SHARED / "blimp" / f"{p}.jsonl").read_text().splitlines()[:per]]
        for r in rows:
            out += [r["sentence_good"], r["sentence_bad"]]
    return out[:n]


# --- the tools ------------------------------------------------------------------------------
def pll(model, tok, texts, sources, convention: str) -> np.ndarray:
    from pllscore import Seq2SeqScorer

    scorer = Seq2SeqScorer(model, tok)
    return scorer.score(texts, context=sources, convention=convention, progress=False).totals


def hflm(model, tok, texts, sources, batch: int) -> np.ndarray:
    """lm-eval's loglikelihood of (source, " " + text): the requests pllscore's lm-eval convention answers."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=model, tokenizer=tok, backend="seq2seq", batch_size=batch, device="cpu")
    ctx = sources or [""] * len(texts)
    reqs = [Instance("loglikelihood", {}, (c, " " + t), i) for i, (c, t) in enumerate(zip(ctx, texts))]
    return np.array([ll for ll, _ in lm.loglikelihood(reqs, disable_tqdm=True)])


@torch.inference_mode()
def loop(model, tok, texts, sources) -> np.ndarray:
    """One ``model(input_ids=src, labels=lab)`` per pair; the labels' log-probabilities summed (float32)."""
    out = []
    for t, s in zip(texts, sources or [""] * len(texts)):
        src, lab = torch.tensor([tok(s)["input_ids"]]), torch.tensor([tok(t)["input_ids"]])
        logits = model(input_ids=src, labels=lab).logits[0]
        out.append(torch.log_softmax(logits, -1).gather(1, lab[0][:, None]).sum().item())
    return np.array(out)


def tools(batches: list[int]) -> dict[str, object]:
    out = {
        "pllscore (default)": lambda m, k, t, s: pll(m, k, t, s, "paper"),
        "pllscore (lm-eval)": lambda m, k, t, s: pll(m, k, t, s, "lm-eval"),
    }
    for b in batches:
        out[f"lm-eval HFLM seq2seq (batch {b})"] = lambda m, k, t, s, b=b: hflm(m, k, t, s, b)
    out["plain loop (one pass per pair)"] = loop
    return out


# --- measuring ------------------------------------------------------------------------------
def timed(fn, config, weights, tok, texts, sources) -> tuple[float, float, np.ndarray]:
    """Wall and CPU seconds (this process, all threads) of one call on a fresh model, and its scores."""
    model = fresh(config, weights)
    t0, c0 = time.perf_counter(), time.process_time()
    got = fn(model, tok, texts, sources)
    return time.perf_counter() - t0, time.process_time() - c0, got


def agreement(name: str, got: dict[str, np.ndarray]) -> list[str]:
    lines = []
    ref_lm = [k for k in got if k.startswith("lm-eval")]
    pairs = [("pllscore (lm-eval)", k) for k in ref_lm] + [("pllscore (default)", "plain loop (one pass per pair)")]
    for a, b in pairs:
        diff = float(np.abs(got[a] - got[b]).max())
        lines.append(f"* {name}: {a} vs {b}: max |difference| {diff:.2e} nats per text")
        if diff > 1e-4:
            raise SystemExit(f"{name}: {a} and {b} disagree by {diff:.3g} nats")
    return lines


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def run_workload(name, texts, sources, args, config, weights, tok) -> tuple[list[str], list[str]]:
    """Every tool (lm-eval at each batch size) in ``--rounds`` rounds, reversed every other one, after an untimed
    warm-up: table rows (wall and CPU seconds; ratios to lm-eval's fastest batch size) and the agreement lines."""
    fns = tools(args.batches)
    for fn in fns.values():
        timed(fn, config, weights, tok, texts[:8], sources[:8] if sources else None)
    walls: dict[str, list[float]] = {k: [] for k in fns}
    cpus: dict[str, list[float]] = {k: [] for k in fns}
    got: dict[str, np.ndarray] = {}
    order = list(fns)
    for r in range(args.rounds):
        for k in order if r % 2 == 0 else order[::-1]:
            wall, cpu, got[k] = timed(fns[k], config, weights, tok, texts, sources)
            walls[k].append(wall)
            cpus[k].append(cpu)
            print(f"  {name} round {r + 1} {k}: {wall:.2f} s ({cpu:.2f} s CPU)", file=sys.stderr)
    checks = agreement(name, got)
    wall_med = {k: statistics.median(v) for k, v in walls.items()}
    cpu_med = {k: statistics.median(v) for k, v in cpus.items()}
    best = min((k for k in fns if k.startswith("lm-eval")), key=wall_med.get)
    rows = []
    for k in fns:
        cells = ", ".join(f"{x:.2f}" for x in walls[k])
        mark = " **fastest**" if k == best else ""
        rows.append(
            f"| {name} | {k}{mark} | {wall_med[k]:.2f} | {cells} | {wall_med[best] / wall_med[k]:.2f}x "
            f"| {cpu_med[k]:.2f} | {cpu_med[best] / cpu_med[k]:.2f}x |"
        )
    return rows, checks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", type=int, default=50, help="n-best workload: distinct sources")
    ap.add_argument("--hyps", type=int, default=4, help="n-best workload: hypotheses per source")
    ap.add_argument("--blimp", type=int, default=200, help="BLiMP sentences with the empty source")
    ap.add_argument("--rounds", type=int, default=4, help="timed rounds, tools in turn, reversed every other one")
    ap.add_argument("--batches", type=lambda s: [int(x) for x in s.split(",")], default=[8, 16, 32, 64])
    ap.add_argument("--vocab", type=int, default=16000, help="the Unigram tokenizer's vocabulary")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    sentences = brown()
    tok = t5_tokenizer(sentences, args.vocab)
    config, weights = t5_small_weights()
    print(f"tokenizer ({len(tok)} pieces) and model built in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    work = {
        f"n-best ({args.sources} sources x {args.hyps})": nbest(sentences, args.sources, args.hyps),
        f"BLiMP ({args.blimp}, empty source)": (blimp(args.blimp), None),
    }
    before = load()
    rows, checks = [], []
    for name, (texts, sources) in work.items():
        r, c = run_workload(name, texts, sources, args, config, weights, tok)
        rows, checks = rows + r, checks + c
    info = machine()
    info["threads"] = str(torch.get_num_threads())
    print("\n".join(machine_lines(info)))
    print(f"* **Load** (`uptime`): before: {before}; after: {load()}")
    print(f"* **Model**: T5-small dimensions, random (seed 0); tokenizer: Unigram, {len(tok)} pieces")
    print(f"* **Command**: `{' '.join([Path(sys.executable).name, *sys.argv])}`\n")
    print(
        "| workload | tool | median wall s | wall s, each round | lm-eval / this | median CPU s | lm-eval / this, CPU |"
    )
    print("|---|---|---:|---|---:|---:|---:|")
    print("\n".join(rows))
    print("\n" + "\n".join(checks))


if __name__ == "__main__":
    main()
