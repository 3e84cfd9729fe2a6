"""The task modules as the run calls them: one task prepared (read, checked, tokenised) and run on one checkpoint.

:func:`prepare_task` hands a sentence task to :func:`pllscore.eval.babylm.zero_shot.prepare_zero_shot` and the
reading times to :func:`pllscore.eval.babylm.reading.prepare_reading`; :func:`run_task` runs a prepared task
with the keywords its kind takes (temperatures: the sentence tasks only). :func:`tokenizer_key` tells whether
two checkpoints' tokenizers tokenise alike, so the data is prepared again only for one that differs. Both the
local engine and the Ray actors call these, so either engine runs the same code.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pllscore.eval.babylm.layout import TaskFolder

__all__ = ["KINDS", "RunOptions", "prepare_task", "run_task", "tokenizer_key"]

#: the kind of model each backend reads (the official pipeline's Auto classes)
KINDS = {"causal": "causal", "mlm": "masked", "mntp": "masked", "enc_dec_mask": "seq2seq", "enc_dec_prefix": "seq2seq"}


@dataclass(frozen=True)
class RunOptions:
    """What every task of a run is given: the backend, the temperatures (sentence tasks) and the batch size
    (None: the task's own)."""

    backend: str
    temperatures: tuple[float, ...]
    batch_size: int | None = None


def prepare_task(task: TaskFolder, tokenizer: Any, backend: str, convention: str) -> Any:
    """``task`` read, checked and tokenised for ``backend`` under ``convention`` (``babylm`` or ``pllscore``):
    a prepared task with ``n_items`` and ``run(model, ...)``. Bad data is an InputError naming file and line."""
    if task.reading:
        from pllscore.eval.babylm.reading import prepare_reading

        return prepare_reading(task.path, tokenizer, backend, convention=convention)
    from pllscore.eval.babylm.zero_shot import prepare_zero_shot

    return prepare_zero_shot(task.task, task.path, tokenizer, backend, convention=convention)


def run_task(prepared: Any, task: TaskFolder, model: Any, options: RunOptions, progress: Any = None) -> Any:
    """The result of a prepared task on ``model`` (its ``write(folder)`` and ``summary()``)."""
    extra: dict[str, Any] = {} if options.batch_size is None else {"batch_size": options.batch_size}
    if task.reading:
        return prepared.run(model, progress=progress, **extra)
    return prepared.run(model, temperatures=list(options.temperatures), progress=progress, **extra)


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, Sequence):
        return [_plain(v) for v in value]
    return str(value)


def tokenizer_key(tokenizer: Any) -> str:
    """A digest of what decides how a tokenizer tokenises: its class, its fast tokenizer's whole definition
    (vocabulary, merges, normaliser, pre-tokeniser, post-processor) and its special tokens and options."""
    h = hashlib.sha256(type(tokenizer).__name__.encode())
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        h.update(backend.to_str().encode())
    else:  # a slow tokenizer: its vocabulary
        h.update(json.dumps(_plain(tokenizer.get_vocab())).encode())
    options = {
        "special": _plain(getattr(tokenizer, "special_tokens_map", {})),
        "added": _plain({str(k): str(v) for k, v in getattr(tokenizer, "added_tokens_decoder", {}).items()}),
        **{k: _plain(getattr(tokenizer, k, None)) for k in ("add_bos_token", "add_eos_token", "padding_side",
                                                             "truncation_side", "model_max_length")},
    }  # fmt: skip
    h.update(json.dumps(options, sort_keys=True).encode())
    return h.hexdigest()
