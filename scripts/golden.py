"""Record every number the API and the CLI produce on the test inputs, to compare before and after a rewrite.

    python scripts/golden.py record /tmp/before.json     # on the old code
    python scripts/golden.py compare /tmp/before.json    # on the new code: exit 1 on a difference > 1e-9

Uses only public entry points (``pllscore.*`` and the ``pllscore`` command), the shared trained models
and the shared BLiMP sample, so it runs unchanged across a restructuring.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
BERT = str(SHARED / "models" / "tiny-bert-cased")
GPT2 = str(SHARED / "models" / "tiny-gpt2")
TEXTS = [
    "The hooligan wrecked the vehicle.",
    "The traveler lost the souvenir.",
    "She didn't go to the store yesterday!",
    "Carnivores eat meat, and the marauder ran.",
]


def _results(res) -> list:  # type: ignore[no-untyped-def]
    out = []
    for r in res:
        row = {"metric": r.metric, "total": r.total, "tokens": [float(x) for x in r.logprobs]}
        row["words"] = [[w.text, w.score] for w in r.words]
        for extra in ("entropy", "rank", "word_correction"):
            value = getattr(r, extra, None)
            if value is not None:
                row[extra] = [float(x) for x in value]
        out.append(row)
    return out


def api_cases() -> dict:
    import pllscore

    bert = pllscore.load(BERT)
    gpt = pllscore.load(GPT2)
    cases = {
        "masked-all": bert.score(TEXTS, metric="all"),
        "masked-context": bert.score(TEXTS[:2], context=["Yesterday,", "In Rome"], metric="all"),
        "masked-words": bert.score(TEXTS, words="whitespace", mask_by="words", metric=["word-l2r", "whole-word"]),
        "masked-outputs": bert.score(TEXTS, outputs=("entropy", "rank")),
        "masked-lm-eval": bert.score(TEXTS, convention="lm-eval", metric="all"),
        "masked-spans": bert.score(TEXTS[:2], spans=[(4, 12), None]),
        "causal": gpt.score(TEXTS),
        "causal-context": gpt.score(TEXTS[:2], context="Yesterday,"),
        "causal-outputs": gpt.score(TEXTS, outputs=("entropy", "rank")),
        "causal-bow": gpt.score(TEXTS, word_prob="bow", words="whitespace"),
        "causal-lm-eval": gpt.score(TEXTS, convention="lm-eval"),
        "causal-lm-eval-context": gpt.score(TEXTS[:2], context="Well", convention="lm-eval"),
        "causal-nobos": pllscore.load(GPT2, bos=False).score(TEXTS),
        "causal-window": pllscore.load(GPT2, long="window", stride=8).score([" ".join(TEXTS * 12)]),
    }
    out = {k: _results(v) for k, v in cases.items()}
    frame = pllscore.to_frame(cases["masked-all"], level="word", base=2, surprisal=True)
    out["to-frame-word"] = frame.select_dtypes("number").to_dict("list")
    return out


def _table(path: Path) -> dict:
    import pandas as pd

    if path.is_dir():
        return {p.name: _table(p) for p in sorted(path.iterdir()) if p.suffix in (".csv", ".tsv") or p.is_dir()}
    frame = pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",")
    return {c: frame[c].tolist() for c in frame.columns if frame[c].dtype.kind in "fiub"}


def cli_cases() -> dict:
    import pandas as pd
    from typer.testing import CliRunner

    from pllscore.cli import app

    runner = CliRunner()
    tmp = Path(tempfile.mkdtemp())
    table = tmp / "in.csv"
    pd.DataFrame({"id": range(4), "sentence": TEXTS, "ctx": ["", "Then", "", "Also"]}).to_csv(table, index=False)
    pairs = tmp / "pairs.csv"
    bad = ["The hooligan wrecked vehicle the.", "Traveler the lost souvenir."]
    pd.DataFrame({"good": TEXTS[:2], "bad": bad}).to_csv(pairs, index=False)
    blimp = str(SHARED / "data" / "blimp")
    runs = {
        "score-masked": ["score", str(table), "-m", BERT, "--metric", "all", "--norm", "per-char"],
        "score-masked-word": ["score", str(table), "-m", BERT, "--level", "word", "--id-column", "id", "--rank"],
        "score-masked-ctx": ["score", str(table), "-m", BERT, "--context-column", "ctx", "--words", "whitespace"],
        "score-causal": ["score", str(table), "-m", GPT2, "--norm", "slor", "--unigram", "wordfreq"],
        "score-causal-token": ["score", str(table), "-m", GPT2, "--level", "token", "--entropy", "--base", "2"],
        "score-causal-bow": ["score", str(table), "-m", GPT2, "--level", "word", "--word-prob", "bow"],
        "score-causal-lm-eval": ["score", str(table), "-m", GPT2, "--convention", "lm-eval", "--surprisal"],
        "blimp": ["blimp", "-m", BERT, "-m", GPT2, "--data", blimp, "--paradigm", "adjunct_island",
                  "--paradigm", "anaphor_gender_agreement", "--limit", "12", "--metric", "all"],
        "blimp-norm": ["blimp", "-m", GPT2, "--data", blimp, "--paradigm", "adjunct_island", "--limit", "12",
                       "--norm", "per-char", "--convention", "lm-eval"],
        "pairs": ["pairs", str(pairs), "--good", "good", "--bad", "bad", "-m", BERT, "-m", GPT2],
    }  # fmt: skip
    out = {}
    for name, args in runs.items():
        dest = tmp / name
        target = str(dest) + ".csv" if args[0] == "score" else str(dest)
        result = runner.invoke(app, [*args, "-o", target, "-q"])
        if result.exit_code != 0:
            raise SystemExit(f"{name}: exit {result.exit_code}: {result.output}{result.exception!r}")
        out[name] = _table(Path(target))
    return out


def _compare(a, b, where: str, bad: list[str]) -> None:  # type: ignore[no-untyped-def]
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                bad.append(f"{where}/{k}: only in {'before' if k in a else 'after'}")
            else:
                _compare(a[k], b[k], f"{where}/{k}", bad)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            bad.append(f"{where}: length {len(a)} -> {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            _compare(x, y, f"{where}[{i}]", bad)
    elif isinstance(a, float) or isinstance(b, float):
        x, y = float(a), float(b)
        if not (math.isnan(x) and math.isnan(y)) and not abs(x - y) <= 1e-9:
            bad.append(f"{where}: {x!r} -> {y!r}")
    elif a != b:
        bad.append(f"{where}: {a!r} -> {b!r}")


def main() -> int:
    what, path = sys.argv[1], Path(sys.argv[2])
    got = {"api": api_cases(), "cli": cli_cases()}
    if what == "record":
        path.write_text(json.dumps(got))
        print(f"recorded {sum(len(v) for v in got.values())} cases -> {path}")
        return 0
    before = json.loads(path.read_text())
    bad: list[str] = []
    _compare(before, json.loads(json.dumps(got)), "", bad)
    for line in bad[:50]:
        print(line)
    print(f"{len(bad)} differences" if bad else "identical to 1e-9")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
