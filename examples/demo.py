"""pllscore demo: score example sentences with all four PLL metrics and a causal LM.

Uses the small trained models in ../shared/models when they are there, else
bert-base-cased and gpt2 from the Hugging Face Hub.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from transformers.utils import logging as hf_logging

import pllscore

SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"
MASKED = SHARED / "tiny-bert-cased" if (SHARED / "tiny-bert-cased").is_dir() else "bert-base-cased"
CAUSAL = SHARED / "tiny-gpt2" if (SHARED / "tiny-gpt2").is_dir() else "gpt2"

SENTENCES = [
    "The traveler lost the souvenir.",
    "The hooligan wrecked the vehicle.",
    "The vehicle wrecked the hooligan.",
    "She went to the store yesterday.",
    "Store she yesterday the to went.",
]


def main() -> None:
    hf_logging.disable_progress_bar()
    pd.set_option("display.width", 200)
    mlm = pllscore.load(MASKED)
    clm = pllscore.load(CAUSAL)
    print(f"masked LM: {MASKED}\ncausal LM: {CAUSAL}\ndevice: {mlm.device}\n")

    masked = mlm.score(SENTENCES, metric="all")
    causal = clm.score(SENTENCES)
    table = pllscore.to_frame(masked).pivot(index="text_id", columns="metric", values="logprob")[list(pllscore.METRICS)]
    table["causal LL"] = [r.total for r in causal]
    table.insert(0, "sentence", SENTENCES)
    print("Sentence scores (sum of token log-probabilities, nats; higher = more likely)\n")
    print(table.round(2).to_string(index=False))

    # the paper's Figure 2 as text: per token, every metric side by side
    text = SENTENCES[0]
    tokens = pllscore.to_frame(masked, level="token")
    tokens = tokens[tokens["text_id"] == 0].pivot(index="token_id", columns="metric", values="logprob")[
        list(pllscore.METRICS)
    ]
    first = masked.for_metric("original")[0]
    tokens.insert(0, "word", [first.words[t.word].text for t in first.tokens])
    tokens.insert(0, "token", first.pieces)
    print(f"\nPer-token log-probabilities for {text!r}:\n")
    print(tokens.round(2).to_string(index=False))
    print("\nThe four metrics, for token t of word w: what is masked when t is scored (pllscore.METRICS)")
    for name, rule in pllscore.METRICS.items():
        print(f"  {name:<13} {rule}")
    print(
        "original scores the inner pieces of a split word (so ##u ##ven ##ir) from the pieces around it, so it\n"
        "inflates rare words; word-l2r, the default, masks the rest of the word too (Kauf & Ivanova, 2023)."
    )


if __name__ == "__main__":
    try:
        main()
    except pllscore.PllscoreError as e:
        raise SystemExit(f"error: {e}") from None
