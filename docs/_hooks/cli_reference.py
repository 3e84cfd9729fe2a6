"""MkDocs hook: the command-line reference, generated from the typer app itself.

A page line ``<!-- cli-reference -->`` is replaced by one section per command of
``pllscore.cli:app``: its help text, its usage line and a table of its arguments and options
(names, help, default, required), read from the click command that typer builds. Nothing is
copied by hand, so a new or renamed flag shows up at the next build. typer >= 0.22 carries its
own copy of click, so the command objects are used through their click-style attributes only,
never through a click class.
"""

from __future__ import annotations

import html
from typing import Any

MARKER = "<!-- cli-reference -->"
PROG = "pllscore"


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, pipes and angle brackets escaped."""
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def _default(param: Any, ctx: Any) -> str:
    if getattr(param, "is_flag", False) and not getattr(param, "secondary_opts", None):
        return ""
    if param.required:
        return "required"
    value = param.get_default(ctx, call=False) if hasattr(param, "get_default") else param.default
    if value is None or value == () or value == []:
        return ""
    if callable(value):
        return ""
    if isinstance(value, bool):
        return ""
    return f"`{value}`" if str(value).strip() else f"`{value!r}`"


def _names(param: Any) -> str:
    if param.param_type_name == "argument":
        return f"`{(param.metavar or param.name).upper()}`"
    names = [*param.opts, *param.secondary_opts]
    longs = [n for n in names if n.startswith("--")] + [n for n in names if not n.startswith("--")]
    return ", ".join(f"`{n}`" for n in longs)


def _kind(param: Any) -> str:
    if param.param_type_name == "argument":
        return "argument, repeatable" if param.nargs == -1 else "argument"
    if getattr(param, "is_flag", False):
        return "flag"
    return "option, repeatable" if getattr(param, "multiple", False) else "option"


def _usage(command: Any, ctx: Any) -> str:
    pieces = command.collect_usage_pieces(ctx)
    return " ".join([ctx.command_path, *pieces])


def _command_section(name: str, command: Any, parent_ctx: Any) -> list[str]:
    ctx = command.context_class(command, info_name=name, parent=parent_ctx)
    lines = [f"## `{PROG} {name}`", ""]
    if command.help:
        lines += [command.help.strip(), ""]
    lines += ["```text", _usage(command, ctx), "```", ""]
    params = [p for p in command.params if not getattr(p, "hidden", False)]
    if not params:
        lines += ["Every argument is handed on (see the help text above).", ""]
        return lines
    lines += ["| name | kind | help | default |", "|---|---|---|---|"]
    for param in params:
        help_text = getattr(param, "help", None) or ""
        lines.append(f"| {_names(param)} | {_kind(param)} | {_cell(help_text)} | {_default(param, ctx)} |")
    lines.append("")
    return lines


def render() -> str:
    """The whole reference as Markdown."""
    import typer.main

    from pllscore.cli import app

    group = typer.main.get_command(app)
    root = group.context_class(group, info_name=PROG)
    lines = [group.help.strip(), "", "```text", _usage(group, root), "```", ""]
    lines += ["| option | help |", "|---|---|"]
    for param in group.params:
        lines.append(f"| {_names(param)} | {_cell(param.help or '')} |")
    lines += ["", "| command | what it does |", "|---|---|"]
    for name, command in group.commands.items():
        summary = (command.short_help or (command.help or "").strip().split(". ")[0]).rstrip(".")
        anchor = f"pllscore-{name}"
        lines.append(f"| [`{name}`](#{anchor}) | {_cell(summary)} |")
    lines.append("")
    for name, command in group.commands.items():
        lines += _command_section(name, command, root)
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, render())
