"""Build a small SYNTHETIC n-best list for trying ``pllscore rescore``: not the output of any real system.

References are the first short sentences of the shared Brown sample; each gets four hypotheses:
the reference itself (in most utterances) and deterministic corruptions of it (two neighbouring
words swapped, a word deleted, a word replaced by a word from elsewhere in the corpus, or two of
these). The first-pass score is ``-2 * edits`` plus Gaussian noise, so the first pass prefers
the right hypothesis only loosely. The first half of the utterances is ``dev``, the rest
``test``. Everything is drawn from one seeded generator: the same command gives the same file.

    python examples/make_nbest.py nbest.csv [--utterances 30] [--seed 0] [--data FILE]
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROWN = ROOT.parent / "shared" / "data" / "brown" / "brown_stimuli.csv"


def _swap(words: list[str], rng: random.Random, vocab: list[str]) -> list[str]:
    i = rng.randrange(len(words) - 1)
    return words[:i] + [words[i + 1], words[i]] + words[i + 2 :]


def _delete(words: list[str], rng: random.Random, vocab: list[str]) -> list[str]:
    i = rng.randrange(len(words))
    return words[:i] + words[i + 1 :]


def _substitute(words: list[str], rng: random.Random, vocab: list[str]) -> list[str]:
    i = rng.randrange(len(words))
    other = [w for w in vocab if w.lower() != words[i].lower()]
    return words[:i] + [rng.choice(other)] + words[i + 1 :]


EDITS = (_swap, _delete, _substitute)


def hypotheses(ref: str, rng: random.Random, vocab: list[str], n: int = 4) -> list[tuple[str, int]]:
    """``n`` distinct hypotheses of ``ref`` with their number of edits (0 for the reference itself)."""
    words = ref.split()
    out: dict[str, int] = {}
    if rng.random() < 0.8:  # the right answer is not always in the n-best list
        out[ref] = 0
    while len(out) < n:
        k = 1 if rng.random() < 0.6 else 2
        hyp = words
        for _ in range(k):
            hyp = rng.choice(EDITS)(hyp, rng, vocab)
        text = " ".join(hyp)
        if text and text != ref:
            out.setdefault(text, k)
    items = list(out.items())
    rng.shuffle(items)  # the reference is not always first
    return items


def build(data: Path, n_utterances: int, seed: int) -> list[dict[str, object]]:
    with open(data, newline="", encoding="utf-8") as f:
        sentences = [row["sentence"] for row in csv.DictReader(f)]
    refs = [s for s in sentences if 5 <= len(s.split()) <= 10][:n_utterances]
    if len(refs) < n_utterances:
        raise SystemExit(f"{data} has only {len(refs)} sentences of 5 to 10 words")
    vocab = sorted({w for s in sentences[:2000] for w in s.split() if w.isalpha()})
    rng = random.Random(seed)
    rows = []
    for u, ref in enumerate(refs):
        split = "dev" if u < n_utterances // 2 else "test"
        for hyp, edits in hypotheses(ref, rng, vocab):
            score = round(-2.0 * edits + rng.gauss(0.0, 1.5), 3)
            rows.append({"utt_id": f"utt{u:03d}", "split": split, "hyp": hyp, "score": score, "ref": ref})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="the n-best CSV to write")
    parser.add_argument("--utterances", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=BROWN, help="a CSV with a 'sentence' column")
    args = parser.parse_args()
    rows = build(args.data, args.utterances, args.seed)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} synthetic hypotheses of {args.utterances} utterances to {args.output}")


if __name__ == "__main__":
    main()
