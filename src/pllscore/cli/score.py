"""``pllscore score``: score a file (or stdin, or --text) and write one column per metric."""

from __future__ import annotations

from pathlib import Path

import typer

from pllscore.cli.evaluate import _COMPILE, _SHARE
from pllscore.metrics import DEFAULT_METRIC


def score_command(
    input: str | None = typer.Argument(
        None, help="A .txt (one text per line), .csv, .tsv, .jsonl or .parquet file, or '-' for stdin."
    ),
    text: list[str] | None = typer.Option(None, "--text", "-t", help="Score this text instead of a file; repeatable."),
    model: str = typer.Option(..., "--model", "-m", help="Hub name or local folder of a masked or causal LM."),
    metric: list[str] | None = typer.Option(
        None,
        "--metric",
        help=f"original, word-l2r, whole-word, sentence-l2r or all; repeatable (default {DEFAULT_METRIC}).",
    ),
    level: str = typer.Option("sentence", "--level", help="sentence, word or token."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Output file; format from its extension."),
    fmt: str | None = typer.Option(None, "--format", help="csv, tsv, jsonl or parquet (default: from -o, else tsv)."),
    column: str | None = typer.Option(None, "--column", help="Text column of a table (default sentence/text)."),
    id_column: str | None = typer.Option(None, "--id-column", help="Column copied to every output row."),
    base: str = typer.Option("e", "--base", help="Log base: e (nats) or 2 (bits)."),
    surprisal: bool = typer.Option(False, "--surprisal", help="Write surprisal (negated log-probability)."),
    norm: list[str] | None = typer.Option(
        None,
        "--norm",
        help="Also write <metric>_<norm>: per-char, slor or norm-lp (sum and mean are always written); repeatable.",
    ),
    unigram: str | None = typer.Option(
        None, "--unigram", help="For slor/norm-lp: a tsv/csv of token counts, or wordfreq[:LANG] (word-level)."
    ),
    unigram_corpus: Path | None = typer.Option(
        None, "--unigram-corpus", help="For slor/norm-lp: a text file to count with the model's tokenizer."
    ),
    context: str | None = typer.Option(
        None, "--context", help="Score each text given this context (only the text's tokens are scored)."
    ),
    context_column: str | None = typer.Option(
        None, "--context-column", help="Score each text given the value of this column of its row."
    ),
    sep: str = typer.Option(" ", "--context-sep", help="What joins a context and its text (default one space)."),
    words: str = typer.Option(
        "tokenizer", "--words", help="Words of word scores and --level word: tokenizer (default) or whitespace."
    ),
    words_column: str | None = typer.Option(
        None, "--words-column", help="Column of pre-segmented words, a JSON list per row, joined by --word-sep."
    ),
    word_sep: str = typer.Option(" ", "--word-sep", help="What joins the words of --words-column (default a space)."),
    mask_by: str = typer.Option(
        "tokenizer", "--mask-by", help="word-l2r/whole-word mask: tokenizer words (default) or the user's words."
    ),
    entropy: bool = typer.Option(
        False, "--entropy", help="Also write <metric>_entropy: the entropy (nats, or bits with --base 2) per token."
    ),
    rank: bool = typer.Option(False, "--rank", help="Also write <metric>_rank: each token's rank (1: the top choice)."),
    word_prob: str = typer.Option(
        "sum", "--word-prob", help="Word scores: sum of tokens, or bow (corrected for Ġ/▁ tokenizers; causal LMs)."
    ),
    convention: str = typer.Option(
        "paper",
        "--convention",
        help="paper (default: each text as given) or lm-eval (' ' + text, as lm-eval reads it).",
    ),
    device: str = typer.Option("auto", "--device", help="auto, cpu, cuda, cuda:1 or mps."),
    dtype: str | None = typer.Option(None, "--dtype", help="float32 (default, exact), bfloat16 or float16."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Padded tokens per batch."),
    compile: bool = typer.Option(False, "--compile", help=_COMPILE),
    share_prefixes: bool = typer.Option(True, "--share-prefixes/--no-share-prefixes", help=_SHARE),
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted run into the same output."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing output."),
    skip_empty: bool = typer.Option(False, "--skip-empty", help="Skip empty lines instead of failing."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar and no summary."),
    progress: bool = typer.Option(
        False, "--progress", help="Show the progress bar even when stderr is not a terminal."
    ),
    long: str = typer.Option("error", "--long", help="Texts longer than the model allows: error, or window."),
    stride: int | None = typer.Option(None, "--stride", help="Causal window step for --long window."),
    engine: str = typer.Option("local", "--engine", help="local, or ray to score on a Ray cluster (-o is a folder)."),
    address: str | None = typer.Option(None, "--address", help="Ray: auto, or ray://HOST:PORT (default: local Ray)."),
    workers: int | None = typer.Option(None, "--workers", help="Ray: number of model actors."),
    gpus_per_worker: float = typer.Option(0, "--gpus-per-worker", help="Ray: GPUs per actor."),
    block_rows: int = typer.Option(1024, "--block-rows", help="Ray: input rows per block and output shard."),
) -> None:
    """Score texts with a masked LM (PLL) or a causal LM (log-likelihood)."""
    from pllscore.errors import InputError
    from pllscore.jobs.local import score_file

    if engine not in ("local", "ray"):
        raise InputError(f"unknown engine {engine!r}; choose local or ray")
    # what both engines take, as the local run names it
    common = dict(
        model=model, metrics=metric or None, level=level, column=column, id_column=id_column, base=base,
        surprisal=surprisal, skip_empty=skip_empty, device=device, dtype=dtype, max_tokens=max_tokens,
        resume=resume, force=force, long=long, stride=stride,
    )  # fmt: skip
    norms = dict(norm=norm or None, unigram=unigram, unigram_corpus=unigram_corpus)
    contexts = dict(context=context, context_column=context_column, sep=sep, convention=convention)
    user_words = dict(words=words, words_column=words_column, word_sep=word_sep, mask_by=mask_by)
    extras = dict(outputs=[n for n, on in (("entropy", entropy), ("rank", rank)) if on], word_prob=word_prob)
    speed = dict(compile=compile, share_prefixes=share_prefixes)
    if engine == "ray":
        from pllscore.jobs.ray import score_dataset

        if input is None or output is None:
            raise InputError("--engine ray needs INPUT (files, a folder or a glob) and -o OUT_DIR")
        ray_summary = score_dataset(
            input, output, address=address, workers=workers, gpus_per_worker=gpus_per_worker,
            block_rows=block_rows, **common, **norms, **contexts, **user_words, **extras, **speed,
        )  # fmt: skip
        if not quiet:
            typer.echo(ray_summary.line(), err=True)
        return
    if text and input is not None:
        raise InputError("give either an INPUT file or --text, not both")
    if not text and input is None:
        raise InputError("nothing to score: give an INPUT file, '-' for stdin, or --text 'a sentence'")
    summary = score_file(
        list(text) if text else input,  # type: ignore[arg-type]
        output,
        format=fmt,
        progress=False if quiet else (True if progress else None),
        **common,  # type: ignore[arg-type]
        **norms,  # type: ignore[arg-type]
        **contexts,  # type: ignore[arg-type]
        **user_words,  # type: ignore[arg-type]
        **extras,  # type: ignore[arg-type]
        **speed,  # type: ignore[arg-type]
    )
    if not quiet:
        typer.echo(summary.line(), err=True)
