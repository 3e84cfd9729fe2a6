"""The systems and machine facts that benchmarks/real_models.py compares: pure helpers, no timing policy.

Every system scores a text with a causal LM the same way: BOS (else EOS) before the text, every
real token scored, log-likelihood in nats summed per sentence.
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import torch

FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile", "amx_int8")


def machine() -> dict[str, str]:
    """CPU model, the SIMD/AMX flags that decide float32 and bfloat16 speed, torch's kernel capability, versions."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        text = ""
    name = re.search(r"^Model name:\s*(.+)$", text, re.M)
    flags = set((re.search(r"^Flags:\s*(.+)$", text, re.M) or re.search("()", "")).group(1).split())
    versions = []
    for pkg in ("torch", "transformers", "pllscore", "minicons", "lm_eval"):
        try:
            versions.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            versions.append(f"{pkg} (not installed)")
    try:
        root = Path(__file__).resolve().parents[1]
        git = ["git", "-C", str(root), "log", "-1", "--format=%h %cs"]
        commit = subprocess.run(git, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    versions[2] += f" (commit {commit})"
    return {
        "cpu": name.group(1).strip() if name else platform.processor() or platform.machine(),
        "flags": ", ".join(f"{f} {'yes' if f in flags else 'no'}" for f in FLAGS),
        "capability": torch.backends.cpu.get_cpu_capability(),
        "bf16": "AMX" if "amx_bf16" in flags else "AVX-512 BF16" if "avx512_bf16" in flags else "none (emulated)",
        "threads": str(torch.get_num_threads()),
        "versions": ", ".join(versions),
    }


def machine_lines(info: dict[str, str]) -> list[str]:
    return [
        f"* **CPU**: {info['cpu']}; flags: {info['flags']}",
        f"* **torch.backends.cpu.get_cpu_capability()**: `{info['capability']}`; native bfloat16 arithmetic: "
        f"{info['bf16']}; oneDNN: {torch.backends.mkldnn.is_available()}; torch threads: {info['threads']}",
        f"* **Software**: {info['versions']}",
    ]


def blimp_good(data: Path, paradigm: str, n: int) -> list[str]:
    """The first ``n`` good sentences of a BLiMP paradigm."""
    with open(data / f"{paradigm}.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r["sentence_good"] for r in rows[:n]]


def prefix_id(tok) -> int:
    return tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id


def plain_loop(model, tok, texts: list[str], batch: int = 16, exact: bool = False) -> np.ndarray:
    """What one writes by hand: batches of ``batch``, right padding, full-vocabulary log_softmax, gather.

    ``exact`` takes the log_softmax in float64 (the agreement reference); the timed loop uses float32.
    """
    start, pad = prefix_id(tok), tok.pad_token_id if tok.pad_token_id is not None else 0
    out: list[float] = []
    with torch.inference_mode():
        for i in range(0, len(texts), batch):
            ids = [[start, *tok(t, add_special_tokens=False)["input_ids"]] for t in texts[i : i + batch]]
            width = max(map(len, ids))
            x = torch.tensor([s + [pad] * (width - len(s)) for s in ids])
            mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in ids])
            logits = model(input_ids=x, attention_mask=mask).logits[:, :-1]
            logp = (logits.double() if exact else logits.float()).log_softmax(-1)
            lp = logp.gather(-1, x[:, 1:, None])[..., 0] * mask[:, 1:]
            out += lp.sum(1).tolist()
    return np.array(out)


def adds_bos(tok) -> bool:
    """Whether the tokenizer puts BOS before a text itself (Gemma's does; GPT-2's and SmolLM2's do not)."""
    return tok.bos_token_id is not None and tok("a")["input_ids"][:1] == [tok.bos_token_id]


def minicons_ll(scorer, texts: list[str], batch: int = 16) -> np.ndarray:
    """minicons' sum of log-probabilities; ``bos_token=True`` only where the tokenizer adds no BOS itself.

    (minicons' own advice: bos_token=True for GPT-2-like tokenizers; with Gemma's it would make two.)
    """
    bos = not adds_bos(scorer.tokenizer)
    out: list[float] = []
    for i in range(0, len(texts), batch):
        out += scorer.sequence_score(texts[i : i + batch], bos_token=bos, reduction=lambda x: x.sum(0).item())
    return np.array(out)


def lm_eval_ll(lm, texts: list[str]) -> np.ndarray:
    """lm-eval's per-sample loglikelihood with an empty context (it puts BOS, else EOS, before the text)."""
    from lm_eval.api.instance import Instance

    reqs = [Instance("loglikelihood", {}, ("", t), i) for i, t in enumerate(texts)]
    return np.array([ll for ll, _ in lm.loglikelihood(reqs, disable_tqdm=True)])


def lm_eval_task(folder: Path, data: Path, paradigm: str) -> str:
    """Write an lm-eval task YAML that reads a local BLiMP file; returns the task name.

    As lm-eval's own blimp tasks (empty context, the two sentences as choices, acc), but
    ``target_delimiter: ""`` so that each sentence is scored as written, without the leading space
    that lm-eval otherwise puts before a choice (pllscore scores the sentence as given).
    """
    name = f"pllbench_blimp_{paradigm}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yaml").write_text(
        f"task: {name}\n"
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    train: {data / (paradigm + '.jsonl')}\n"
        "output_type: multiple_choice\n"
        "test_split: train\n"
        'doc_to_text: ""\n'
        'target_delimiter: ""\n'
        "doc_to_target: 0\n"
        'doc_to_choice: "{{[sentence_good, sentence_bad]}}"\n'
        "num_fewshot: 0\n"
        "metric_list:\n  - metric: acc\n    aggregation: mean\n    higher_is_better: true\n"
        "metadata:\n  version: 1.0\n"
    )
    return name


def lm_eval_samples(out: Path, task: str) -> dict[str, list[float]]:
    """Per-document loglikelihoods [good, bad] from lm-eval's --log_samples output, keyed by pairID."""
    files = sorted(out.rglob(f"samples_{task}_*.jsonl"))
    if not files:
        raise FileNotFoundError(f"no samples_{task}_*.jsonl under {out}")
    got = {}
    with open(files[-1], encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            got[str(rec["doc"]["pairID"])] = [float(r[0][0]) for r in rec["resps"]]
    return got
