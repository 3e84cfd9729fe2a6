"""The entry points: :func:`load` a model as the scorer of its kind, :func:`as_scorer`, and :func:`score`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import torch

from pllscore.engine.loading import Kind, load_pretrained
from pllscore.engine.models import model_kind
from pllscore.engine.placement import placement_record
from pllscore.errors import ModelError
from pllscore.metrics import DEFAULT_METRIC
from pllscore.results.predictions import Predictions
from pllscore.results.scores import Results
from pllscore.scoring.base import Scorer, Words
from pllscore.scoring.causal import CausalScorer
from pllscore.scoring.masked import MaskedScorer
from pllscore.scoring.mntp import MntpScorer
from pllscore.scoring.seq2seq import Seq2SeqScorer

__all__ = ["SCORERS", "as_scorer", "load", "score"]

#: the scorer of each model kind, and the options of :func:`load` that only it takes
SCORERS: dict[str, tuple[type[Scorer], tuple[str, ...]]] = {
    "masked": (MaskedScorer, ("metric",)),
    "causal": (CausalScorer, ("bos", "stride", "share_prefixes")),
    "seq2seq": (Seq2SeqScorer, ("eos",)),
    "mntp": (MntpScorer, ("metric",)),
}


def load(
    name_or_path: str | os.PathLike[str],
    device: str | torch.device = "auto",
    dtype: str | torch.dtype | None = None,
    revision: str | None = None,
    kind: Kind | None = None,
    trust_remote_code: bool = False,
    *,
    max_tokens: int | None = None,
    metric: str | Sequence[str] = DEFAULT_METRIC,
    bos: bool = True,
    long: str = "error",
    stride: int | None = None,
    words: str = "tokenizer",
    mask_by: str = "tokenizer",
    share_prefixes: bool = True,
    compile: bool = False,
    eos: bool = True,
    cache: bool = True,
    autocast: bool = False,
    device_map: str | dict[str, Any] | None = None,
    max_memory: str | dict[Any, Any] | None = None,
    offload_folder: str | os.PathLike[str] | None = None,
    overlap: bool = True,
) -> MaskedScorer | CausalScorer | Seq2SeqScorer:
    """Load a model by Hub name or local folder and return the scorer for its kind.

    Args:
        name_or_path: e.g. ``"bert-base-cased"``, ``"gpt2"`` or a folder with config and weights.
        device: ``"auto"`` (cuda, then mps, then cpu), or any torch device string.
        dtype: ``None``/``"float32"`` (exact), or ``"bfloat16"``/``"float16"``: the weights are loaded in
            that type (half the memory; faster on GPUs and on CPUs with bf16 instructions), the log-softmax
            over the vocabulary stays float32. Approximate: see the guide's "GPUs and big models" page.
        revision: a Hub branch, tag or commit.
        kind: ``"masked"``, ``"causal"``, ``"seq2seq"``, or ``"mntp"`` (GPT-BERT's reading of a masked LM).
        trust_remote_code: allow model code from the Hub.
        max_tokens: padded tokens per batch; a default suits the device.
        metric: default metric of a masked scorer.
        bos: whether a causal scorer conditions the first token on BOS.
        long: ``"error"`` refuses texts longer than the model allows; ``"window"`` scores them in windows.
        stride: a causal scorer's window step in ``"window"`` mode (default: half the model's length).
        words: the scorer's default words, ``"tokenizer"`` or ``"whitespace"`` (see :meth:`Scorer.score`).
        mask_by: a masked scorer's default for what word-l2r and whole-word mask: ``"tokenizer"`` or ``"words"``.
        share_prefixes: a causal scorer computes each distinct prefix of a batch's texts (and of a prediction's
            reads) once (prefix trees), where the model family supports it exactly; ``False`` runs each in full.
        compile: ``torch.compile`` the model's layers (opt-in: tens of seconds to compile, pays on
            long runs; see BENCHMARKS.md).
        eos: whether an encoder-decoder scorer counts the closing EOS (and BART's leading BOS) in the
            total, as the model's own loss does.
        cache: a GGUF file's converted weights are kept in the user cache (``PLLSCORE_CACHE``) and
            loaded from there next time; ``False`` converts the file every time.
        autocast: with a reduced ``dtype``, keep the weights float32 and autocast the matrix products to
            ``dtype`` instead (float32 memory; normalisation in float32).
        device_map: ``"auto"`` spreads a model too large for one device over the GPUs, then the CPU,
            then disk (through accelerate; ``device`` is then left out); the scores are those of one device.
        max_memory: with ``device_map``, the memory each device may hold: ``"cuda:0=20GiB,cpu=60GiB"``
            or a dict ``{0: "20GiB", "cpu": "60GiB"}``.
        offload_folder: with ``device_map``, the folder for the layers that fit in no device's memory.
        overlap: launch the next batch while the device runs this one; ``False``: one at a time (the GPUs guide).
    """
    loaded = load_pretrained(
        name_or_path,
        device=device,
        dtype=dtype,
        revision=revision,
        kind=kind,
        trust_remote_code=trust_remote_code,
        cache=cache,
        autocast=autocast,
        device_map=device_map,
        max_memory=max_memory,
        offload_folder=offload_folder,
    )
    cls, own = SCORERS[loaded.kind]
    kind_options = {"metric": metric, "bos": bos, "stride": stride, "share_prefixes": share_prefixes, "eos": eos}
    common = {"name": loaded.name, "revision": loaded.revision, "max_tokens": max_tokens, "long": long, "dtype": dtype}
    common.update(words=words, mask_by=mask_by, compile=compile, **{k: kind_options[k] for k in own})
    scorer = cls(loaded.model, loaded.tokenizer, **common)
    scorer.placement, scorer.engine.overlap = placement_record(loaded.model, loaded.placement), bool(overlap)
    return scorer  # type: ignore[return-value]


def as_scorer(
    model: Any, *, kind: Kind | None = None, role: str = "this", **load_kwargs: Any
) -> MaskedScorer | CausalScorer | Seq2SeqScorer:
    """A scorer from a Hub name or a folder (loaded with ``load_kwargs``), or a scorer given as is.

    With ``kind``, a scorer of the other kind is refused: "<name> is a causal LM; <role> needs a
    masked LM". A name is loaded as ``kind`` where that kind reads a model of another kind (``mntp``:
    a masked LM), else as its config says.
    """
    scorer = model
    if isinstance(model, (str, os.PathLike)):
        reading = kind if kind is not None and model_kind(kind) != kind else None
        scorer = load(model, kind=reading, **load_kwargs)
    if kind is not None and scorer.kind != kind:
        raise ModelError(f"{scorer.name!r} is a {scorer.kind} LM; {role} needs a {kind} LM")
    return scorer  # type: ignore[no-any-return]


def score(
    texts: str | Iterable[str],
    model: str | os.PathLike[str] | Scorer,
    *,
    metric: str | Sequence[str] | None = None,
    context: str | Sequence[str] | None = None,
    sep: str = " ",
    words: Words | None = None,
    word_sep: str = " ",
    mask_by: str | None = None,
    outputs: Sequence[str] = (),
    word_prob: str | None = None,
    convention: str = "paper",
    **load_kwargs: Any,
) -> Results:
    """One call: load ``model`` (unless it is already a scorer) and score ``texts``; the options are those of
    :meth:`Scorer.score` (:class:`MaskedScorer` and :class:`CausalScorer`)."""
    options = {"metric": metric, "context": context, "sep": sep, "words": words, "word_sep": word_sep}
    options.update(mask_by=mask_by, outputs=outputs, word_prob=word_prob, convention=convention)
    return as_scorer(model, **load_kwargs).score(texts, **options)


def predict(
    texts: str | Iterable[str],
    model: str | os.PathLike[str] | Scorer,
    *,
    k: int = 10,
    word_tokens: int = 3,
    candidates: Sequence[str] | Sequence[Sequence[str]] | None = None,
    level: str = "word",
    **load_kwargs: Any,
) -> Predictions:
    """One call: load ``model`` (unless it is already a scorer) and predict each text's slot; the options are
    those of :meth:`Scorer.predict`."""
    options = {"k": k, "word_tokens": word_tokens, "candidates": candidates, "level": level}
    return as_scorer(model, **load_kwargs).predict(texts, **options)
