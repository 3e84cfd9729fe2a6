"""The settings of an evaluation run, and the models it scores with.

:func:`~pllscore.eval.runs.run_blimp` and :func:`~pllscore.eval.runs.run_pairs` take a
:class:`~pllscore.settings.ModelSettings`, a :class:`~pllscore.settings.TextSettings` and a
:class:`~pllscore.settings.TableSettings`, as ``pllscore score`` does, and still take the keyword
options of their first version (``metrics=``, ``norm=`` (``norms=`` is deprecated), ``device=``, ...).
:meth:`EvalSettings.merge` is the one place where those keywords become settings;
:meth:`EvalSettings.prepare` binds them to a scorer through
:meth:`pllscore.jobs.table.ScoreOptions.prepare`, the path every table is scored by.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pllscore.errors import InputError
from pllscore.metrics import PLL_KINDS
from pllscore.settings import ModelSettings, TableSettings, TextSettings, gather

__all__ = ["EVAL_FIELDS", "EvalSettings", "load_scorers"]

#: per settings group, the fields an evaluation reads (the rest keep their defaults)
EVAL_FIELDS = {
    "model": (
        "device",
        "dtype",
        "revision",
        "kind",
        "bos",
        "eos",
        "max_tokens",
        "compile",
        "share_prefixes",
        "long",
        "stride",
    ),
    "text": ("metrics", "convention", "context"),
    "table": ("norm", "unigram", "unigram_corpus"),
}
_UNIGRAM_NORMS = ("slor", "norm-lp")


@dataclass(frozen=True)
class EvalSettings:
    """How every model of an evaluation is loaded (``model``; its ``model`` field is not read: the models
    are given apart) and how each sentence is scored (``text``) and counted (``table``: the norms)."""

    model: ModelSettings = field(default_factory=ModelSettings)
    text: TextSettings = field(default_factory=TextSettings)
    table: TableSettings = field(default_factory=TableSettings)

    @classmethod
    def merge(
        cls,
        model: ModelSettings | None = None,
        text: TextSettings | None = None,
        table: TableSettings | None = None,
        *,
        what: str = "run_blimp",
        **keywords: Any,
    ) -> EvalSettings:
        """The settings objects (defaults where not given) with the keyword options that are not None put in by
        :func:`pllscore.settings.gather`, as :func:`~pllscore.score_file` puts in its own: an option that is
        no field of :data:`EVAL_FIELDS` is refused (:class:`InputError`, naming ``what``: the function called);
        ``norms=`` is the deprecated spelling of ``norm=``."""
        options = {k: v for k, v in keywords.items() if v is not None}
        if "norms" in options:
            warnings.warn(
                "norms= is deprecated; use norm= (one spelling with score_file, TableSettings and --norm)",
                DeprecationWarning,
                stacklevel=3,
            )
            options.setdefault("norm", options.pop("norms"))
        groups = (model or ModelSettings(), text or TextSettings(), table or TableSettings())
        read = {n for names in EVAL_FIELDS.values() for n in names}
        unread = [n for n in options if n not in read and any(n in g.names() for g in groups)]
        if unread:
            raise InputError(
                f"{what}() does not read the option {unread[0]!r}; an evaluation takes {', '.join(sorted(read))}"
            )
        return cls(*gather(options, *groups, what=what))

    @property
    def norms(self) -> tuple[str, ...]:
        """The norms pairs are counted by, checked before any model is loaded: ``sum`` first, then the others."""
        from pllscore.results.norms import check_norms

        t = self.table
        if t.unigram is not None and t.unigram_corpus is not None:
            raise InputError("give either --unigram or --unigram-corpus, not both")
        chosen = check_norms(t.norm, t.unigram if t.unigram is not None else t.unigram_corpus)
        return ("sum", *(n for n in chosen if n != "sum"))

    def folder_key(self) -> dict[str, Any]:
        """What an output folder records of these settings, so that rows made otherwise are never merged:
        the text convention, a context and ``eos=False`` when given, and the norms with their unigram source by
        content (nothing for ``sum`` alone)."""
        key: dict[str, Any] = {"text_convention": self.text.convention}
        if self.text.context:
            key["context"] = self.text.context
        if not self.model.eos:
            key["eos"] = False
        norms = self.norms
        if norms == ("sum",):
            return key
        key["norms"] = list(norms)
        if any(n in _UNIGRAM_NORMS for n in norms):
            key.update(_unigram_key(self.table))
        return key

    def record(self) -> dict[str, Any]:
        """What a run records of its settings (:meth:`pllscore.settings.Settings.record` of the fields it reads)."""
        out = {}
        for group in ("model", "text", "table"):
            recorded = getattr(self, group).record()
            out[group] = {k: recorded[k] for k in EVAL_FIELDS[group] if k in recorded}
        return out

    def prepare(self, scorer: Any) -> Any:
        """The :class:`~pllscore.jobs.table.Prepared` options of ``scorer``: its metrics (a causal or an
        encoder-decoder LM is scored by its log-likelihood whatever the metrics), the unigram model, the norms and
        the convention."""
        from pllscore.jobs.table import ScoreOptions

        text = self.text if scorer.kind in PLL_KINDS else self.text.replace(metrics=None)
        # a scorer given loaded keeps its own mode for over-long texts
        long = getattr(scorer, "long", None) or self.model.long
        return ScoreOptions.from_settings(text, self.table, long=long).prepare(scorer)


def _unigram_key(table: TableSettings) -> dict[str, Any]:
    """A unigram table or corpus by its content; a named source (wordfreq) or a model given in Python by name."""
    from pllscore.io.provenance import content_fingerprint

    corpus = table.unigram_corpus is not None
    given = table.unigram_corpus if corpus else table.unigram
    if isinstance(given, (str, os.PathLike)) and not str(given).startswith("wordfreq"):
        if not Path(given).is_file():
            raise InputError(f"unigram {'corpus' if corpus else 'table'} {os.fspath(given)!r} not found")
        return {"unigram": "sha256:" + content_fingerprint([given]), "unigram_source": "corpus" if corpus else "table"}
    return {"unigram": given if isinstance(given, str) else repr(given)}


def load_scorers(models: Sequence[Any], settings: ModelSettings) -> list[Any]:
    """Each model loaded with ``settings`` (a name or a path), or taken as the scorer it already is."""
    from pllscore.scoring import api

    if not models:
        raise InputError("no model given; pass --model (repeatable)")
    given = settings.load_kwargs()
    return [api.load(m, **given) if isinstance(m, (str, os.PathLike)) else m for m in models]
