"""Errors as the command line shows them: a setting's Python keyword spelled as its flag.

The library's messages name options by their Python keyword (``word_prob='bow'``, ``max_tokens``), which is
what a caller of the API types. :func:`cli_message` rewrites them with the flags of
:mod:`pllscore.settings` (``--word-prob bow``, ``--max-tokens``): a keyword with its value, a keyword with an
underscore on its own, and the field whose check refused a value (the error's ``setting``).
"""

from __future__ import annotations

import dataclasses
import functools
import re

__all__ = ["cli_message", "flag_table"]


@functools.cache
def flag_table(negative: bool = False) -> dict[str, str]:
    """``{field: its long flag}`` of every settings field that has a flag (``word_prob`` -> ``--word-prob``);
    ``negative``: the off flag of the on/off ones (``eos`` -> ``--no-eos``)."""
    from pllscore.settings import ModelSettings, RaySettings, RunSettings, TableSettings, TextSettings

    out: dict[str, str] = {}
    for cls in (ModelSettings, TextSettings, TableSettings, RunSettings, RaySettings):
        for f in dataclasses.fields(cls):
            flags = [x.split("/")[negative] for x in f.metadata.get("flags", ()) if "/" in x or not negative]
            flags = [x for x in flags if x.startswith("--")]
            if flags:
                out.setdefault(f.name, flags[0])
    return out


def _names(names: list[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))


def cli_message(error: BaseException) -> str:
    """``str(error)`` with the settings' Python keywords written as their flags."""
    flags = flag_table()
    text = str(error)
    own = getattr(error, "setting", None)
    if own in flags:  # "unknown level 'x'" -> "unknown --level 'x'"
        text = re.sub(rf"(?<![\w.-]){re.escape(own)}(?![\w-])", flags[own], text, count=1)

    def keyword(m: re.Match[str]) -> str:
        value = next((v for v in m.group(2, 3, 4) if v is not None), None)
        if value == "False":  # an on/off flag's off form, where it has one
            return flag_table(negative=True).get(m[1], m[0])
        return flags[m[1]] if value in (None, "True") else f"{flags[m[1]]} {value}"

    # "word_prob='bow'" -> "--word-prob bow", "metrics=" -> "--metric"
    text = re.sub(rf"(?<![\w.-])({_names(list(flags))})=(?:'([^']*)'|\"([^\"]*)\"|([^\s,;:)'\"]+))?", keyword, text)
    # "max_tokens must be ..." -> "--max-tokens must be ..."
    underscored = [n for n in flags if "_" in n]
    return re.sub(rf"(?<![\w.-])({_names(underscored)})(?![\w-])", lambda m: flags[m[1]], text)
