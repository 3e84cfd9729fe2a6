"""Scores in a Python process of their own, to compare with R's: the texts (one per line of argv[1]) under each
model folder of argv[2:], each total as ``folder<TAB>hex`` (float.hex: R reads it back exactly)."""

import sys

import pllscore


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        texts = f.read().splitlines()
    for folder in sys.argv[2:]:
        for r in pllscore.load(folder, device="cpu").score(texts, progress=False):
            print(f"{folder}\t{float(r.total).hex()}")


if __name__ == "__main__":
    main()
