"""``pllscore score``: score texts given on the command line (or stdin) and print a TSV table."""

from __future__ import annotations

import sys

import typer

from pllscore.metrics import DEFAULT_METRIC


def score_command(
    texts: list[str] | None = typer.Argument(
        None, help="Texts to score; '-' or none reads one text per line from stdin."
    ),
    model: str = typer.Option(..., "--model", "-m", help="Hub name or local folder of a masked or causal LM."),
    metric: list[str] | None = typer.Option(
        None,
        "--metric",
        help=f"original, word-l2r, whole-word, sentence-l2r or all; repeatable (default {DEFAULT_METRIC}).",
    ),
    level: str = typer.Option("sentence", "--level", help="sentence, word or token."),
    base: str = typer.Option("e", "--base", help="Log base: e (nats) or 2 (bits)."),
    surprisal: bool = typer.Option(False, "--surprisal", help="Report surprisal (negated log-probability)."),
    device: str = typer.Option("auto", "--device", help="auto, cpu, cuda, cuda:1 or mps."),
    dtype: str | None = typer.Option(None, "--dtype", help="float32 (default, exact), bfloat16 or float16."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Padded tokens per batch."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Score texts with a masked LM (PLL) or a causal LM (log-likelihood); print TSV to stdout."""
    from transformers.utils import logging as hf_logging

    import pllscore
    from pllscore.errors import InputError

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()  # pllscore reports over-long input itself, in one line
    if not texts or texts == ["-"]:
        texts = [line.rstrip("\n") for line in sys.stdin]
    scorer = pllscore.load(model, device=device, dtype=dtype, max_tokens=max_tokens)
    if isinstance(scorer, pllscore.CausalScorer) and metric:
        raise InputError(f"{model!r} is a causal LM, scored by its log-likelihood; drop --metric")
    kwargs = {"metric": metric} if metric else {}
    results = scorer.score(texts, progress=False if quiet else None, **kwargs)
    log_base = "e" if base == "e" else _number(base)
    frame = pllscore.to_frame(results, level=level, base=log_base, surprisal=surprisal)  # type: ignore[arg-type]
    frame.to_csv(sys.stdout, sep="\t", index=False)


def _number(text: str) -> float:
    from pllscore.errors import InputError

    try:
        return float(text)
    except ValueError:
        raise InputError(f"--base must be e or a number such as 2, got {text!r}") from None
