"""``pllscore blimp`` and ``pllscore pairs``: minimal-pair accuracy tables."""

from __future__ import annotations

from pathlib import Path

import typer

_FORCE = "Replace the results in --output even if they were made with other data, paradigms, limit or columns."
_NORM = "Also count pairs by this normalised score: mean, per-char, slor or norm-lp (sum always); repeatable."
_UNIGRAM = "For slor/norm-lp: a tsv/csv of token counts, or wordfreq[:LANG] (word-level)."
_CORPUS = "For slor/norm-lp: a text file to count with each model's tokenizer."
_COMPILE = "torch.compile the model's layers (tens of seconds to compile; pays on long runs)."
_SHARE = "Causal LMs: compute each distinct prefix of the texts once (default on where exact)."
_CONVENTION = (
    "How a sentence is read: paper (default: as given, the paper's code) or lm-eval (as lm-evaluation-harness: "
    "' ' + sentence after its prefix token)."
)


def blimp_command(
    model: list[str] = typer.Option(..., "--model", "-m", help="Masked or causal LM; repeatable (rows of one table)."),
    metric: list[str] | None = typer.Option(None, "--metric", help="Masked-LM metric(s) or all (default word-l2r)."),
    data: Path | None = typer.Option(None, "--data", help="Folder of BLiMP <paradigm>.jsonl files."),
    paradigm: list[str] | None = typer.Option(None, "--paradigm", help="Paradigm UID; repeatable (default all)."),
    limit: int | None = typer.Option(None, "--limit", help="At most this many pairs per paradigm (quick runs)."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Folder for the tables (rows are added)."),
    force: bool = typer.Option(False, "--force", help=_FORCE),
    norm: list[str] | None = typer.Option(None, "--norm", help=_NORM),
    unigram: str | None = typer.Option(None, "--unigram", help=_UNIGRAM),
    unigram_corpus: Path | None = typer.Option(None, "--unigram-corpus", help=_CORPUS),
    convention: str = typer.Option("paper", "--convention", help=_CONVENTION),
    device: str = typer.Option("auto", "--device"),
    dtype: str | None = typer.Option(None, "--dtype"),
    compile: bool = typer.Option(False, "--compile", help=_COMPILE),
    share_prefixes: bool = typer.Option(True, "--share-prefixes/--no-share-prefixes", help=_SHARE),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """BLiMP accuracy per paradigm and phenomenon, in the paper's table layout."""
    from pllscore.errors import InputError
    from pllscore.eval.runs import run_blimp

    if data is None:
        from pllscore.analysis.run import shared_data

        data = shared_data("blimp")
        if not data.is_dir():
            raise InputError("pass --data with the folder of BLiMP <paradigm>.jsonl files")
    result = run_blimp(
        model, data=data, metrics=metric or None, paradigms=paradigm or None, limit=limit, output=output,
        device=device, dtype=dtype, progress=False if quiet else None, force=force, norms=norm or None,
        unigram=unigram, unigram_corpus=unigram_corpus, compile=compile, share_prefixes=share_prefixes,
        convention=convention,
    )  # fmt: skip
    typer.echo(_show(result.summary))
    _warn_unscored(result)
    if output is not None:
        typer.echo(
            f"tables written to {output}/ (summary.csv, summary.md, summary.tex, paradigms.csv, pairs.parquet)",
            err=True,
        )


def pairs_command(
    file: Path = typer.Argument(..., help="A csv, tsv, jsonl or parquet table of minimal pairs."),
    good: str = typer.Option(..., "--good", help="Column of the acceptable sentence."),
    bad: str = typer.Option(..., "--bad", help="Column of the unacceptable sentence."),
    group: str | None = typer.Option(None, "--group", help="Column to report accuracy by."),
    model: list[str] = typer.Option(..., "--model", "-m", help="Masked or causal LM; repeatable."),
    metric: list[str] | None = typer.Option(None, "--metric", help="Masked-LM metric(s) or all (default word-l2r)."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Folder for the tables (rows are added)."),
    force: bool = typer.Option(False, "--force", help=_FORCE),
    norm: list[str] | None = typer.Option(None, "--norm", help=_NORM),
    unigram: str | None = typer.Option(None, "--unigram", help=_UNIGRAM),
    unigram_corpus: Path | None = typer.Option(None, "--unigram-corpus", help=_CORPUS),
    convention: str = typer.Option("paper", "--convention", help=_CONVENTION),
    device: str = typer.Option("auto", "--device"),
    dtype: str | None = typer.Option(None, "--dtype"),
    compile: bool = typer.Option(False, "--compile", help=_COMPILE),
    share_prefixes: bool = typer.Option(True, "--share-prefixes/--no-share-prefixes", help=_SHARE),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Accuracy on any minimal-pair data set: a pair is right when score(good) > score(bad)."""
    from pllscore.eval.runs import run_pairs

    result = run_pairs(
        file, model, good=good, bad=bad, group=group, metrics=metric or None, output=output, device=device,
        dtype=dtype, progress=False if quiet else None, force=force, norms=norm or None, unigram=unigram,
        unigram_corpus=unigram_corpus, compile=compile, share_prefixes=share_prefixes, convention=convention,
    )  # fmt: skip
    typer.echo(_show(result.summary))
    _warn_unscored(result)


def _warn_unscored(result) -> None:  # type: ignore[no-untyped-def]
    for row in result.unscored().itertuples():
        typer.echo(
            f"{row.model} {row.metric}: {row.n_unscored} of {row.n} pairs have a sentence with no scored token "
            "(NaN score) and count as wrong (n_unscored in the accuracy tables)",
            err=True,
        )


def _show(summary) -> str:  # type: ignore[no-untyped-def]
    shown = summary.dropna(axis=1, how="all")
    return str(shown.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
