"""MkDocs hook: the settings reference, generated from :mod:`pllscore.settings` itself.

A page line ``<!-- settings-reference: ClassName -->`` is replaced by a table of that settings
class's fields, read from the dataclass: name, type, default, command-line flag, help, and
whether provenance records it and ``--resume`` compares it (the ``record`` of its
``setting(...)``). The help texts and flags are the ones the command line shows (they are the
same objects), so no option is described by hand in two places, and a new field shows up at the
next build. A marker naming a class that is not a settings group fails the build.
"""

from __future__ import annotations

import dataclasses
import html
import re
from typing import Any

MARKER = re.compile(r"<!-- settings-reference: (\w+) -->")


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, pipes and angle brackets escaped."""
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def _code(text: str) -> str:
    """Inline code for a table cell (pipes escaped: a type such as ``str | None``)."""
    return f"`{text}`"


def _default(f: dataclasses.Field[Any]) -> str:
    if f.default_factory is not dataclasses.MISSING:
        return _code(repr(f.default_factory()))
    return _code(repr(f.default))


def _flags(f: dataclasses.Field[Any]) -> str:
    switches = f.metadata.get("switches") or {}
    if switches:
        return ", ".join(_code(f"--{value}") for value in switches)
    flags = f.metadata.get("flags") or ()
    if not flags:
        return "Python only"
    shown = []
    for flag in flags:
        shown += flag.split("/")  # "--share-prefixes/--no-share-prefixes"
    text = ", ".join(_code(x) for x in shown)
    return text + " (repeatable)" if f.metadata.get("repeatable") else text


def _help(f: dataclasses.Field[Any]) -> str:
    parts = [_cell(f.metadata.get("help") or "")]
    for value, about in (f.metadata.get("switches") or {}).items():  # one flag per value: each has its help
        parts.append(f"`--{value}`: {_cell(about)}")
    return " ".join(p for p in parts if p)


def table(cls: type) -> str:
    """The Markdown table of the fields of settings class ``cls``."""
    lines = [
        "| name | type | default | flag | help | recorded, compared on resume |",
        "|---|---|---|---|---|---|",
    ]
    for f in dataclasses.fields(cls):
        recorded = "yes" if f.metadata.get("record", True) else "no"
        type_name = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        lines.append(f"| `{f.name}` | {_code(type_name)} | {_default(f)} | {_flags(f)} | {_help(f)} | {recorded} |")
    return "\n".join(lines)


def _render(match: re.Match[str]) -> str:
    from pllscore import settings

    name = match.group(1)
    cls = getattr(settings, name, None)
    if not (isinstance(cls, type) and issubclass(cls, settings.Settings) and cls is not settings.Settings):
        raise ValueError(f"settings-reference: {name!r} is not a settings group of pllscore.settings")
    return table(cls)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    return MARKER.sub(_render, markdown)
