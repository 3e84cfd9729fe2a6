"""Command-line options made from :mod:`pllscore.settings`: a flag is declared once, there.

:func:`with_settings` gives a command the options of whole settings groups: the command declares a
parameter typed with a settings class (``model: ModelSettings``) and receives the built, checked
object; the flags of that class's fields are added to the command's signature, which typer reads.
Options that belong to no settings group but recur across commands (``--quiet``, ``--progress``)
are the ``Annotated`` aliases below; a command may take the two as one :class:`Console`. A parameter typed
with a tuple of groups (``settings: tuple[Console, ModelSettings, RunSettings]``) receives each, in that order.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from pllscore.errors import PllscoreError
from pllscore.settings import Settings

__all__ = [
    "CausalModel", "Command", "Console", "Progress", "Quiet", "Stopped", "engine_option", "near_options",
    "option_for", "output_option", "progress_of", "requires", "with_settings",
]  # fmt: skip

Quiet = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="Print nothing but errors, and the results on stdout when no -o is given (no progress)."
    ),
]
Progress = Annotated[
    bool, typer.Option("--progress", help="Show the progress bar on stderr even when it is not a terminal.")
]
CausalModel = Annotated[
    str | None, typer.Option("--causal-model", "-c", help="Causal (explain: or encoder-decoder) LM to show beside it.")
]


class Stopped(PllscoreError):
    """A command stopped by Ctrl-C or SIGTERM outside a file run's chunks (which raise
    :class:`~pllscore.jobs.local.Interrupted`); ``stopped_by``: the signal's name when it was not Ctrl-C."""

    def __init__(self, stopped_by: str | None = None) -> None:
        super().__init__(f"interrupted{f' by {stopped_by}' if stopped_by else ''}; rerun the command")
        self.stopped_by = stopped_by


#: what runs once a command's settings are built and checked, before the command itself: the entry point puts
#: its start-up (torch, transformers) here, so that an option error returns before those imports
BEFORE_RUN: list[Callable[[], None]] = []


def output_option(help: str, default: Any = None) -> Any:
    """The ``-o/--output`` option of a command (what it writes differs, so each says it in ``help``)."""
    return typer.Option(default, "-o", "--output", help=help)


def engine_option(help: str) -> Any:
    """The ``--engine`` option (local or ray) of a command (what Ray does differs, so each says it in ``help``)."""
    return typer.Option("local", "--engine", help=help)


def progress_of(quiet: bool, progress: bool = False) -> bool | None:
    """The ``progress=`` an API function takes for ``--quiet`` and ``--progress``."""
    return False if quiet else (True if progress else None)


@dataclasses.dataclass(frozen=True)
class Console:
    """What a command prints besides its results: ``--quiet`` and ``--progress``, received as one group."""

    quiet: bool = False
    progress: bool = False

    @property
    def say(self) -> bool:
        """Whether notes and summary lines go to stderr (not under ``--quiet``)."""
        return not self.quiet

    @property
    def bar(self) -> bool | None:
        """The ``progress=`` an API function takes (:func:`progress_of`)."""
        return progress_of(self.quiet, self.progress)


#: the command parameters of a :class:`Console` (the aliases above, so that each flag is declared once)
_CONSOLE = {"quiet": Quiet, "progress": Progress}


def _cli_type(f: dataclasses.Field[Any], hint: Any) -> Any:
    """The type typer parses a field's option as."""
    if f.metadata.get("repeatable"):
        return list[str] | None
    if hint is bool:
        return bool
    for simple in (int, float):
        if hint is simple or hint == (simple | None):
            return hint
    return str if isinstance(f.default, str) else str | None


def option_for(
    cls: type[Settings], name: str, *, help: str | None = None, flags: Sequence[str] | None = None, default: Any = None
) -> inspect.Parameter:
    """The command parameter of field ``name`` of ``cls``; ``help``/``flags``/``default`` override the field's."""
    f = next(x for x in dataclasses.fields(cls) if x.name == name)
    hint = typing.get_type_hints(cls)[name]
    value = f.default if default is None and f.default is not dataclasses.MISSING else default
    if value is None and f.default is dataclasses.MISSING:
        value = None
    decls = tuple(flags or f.metadata["flags"])
    opt = typer.Option(value, *decls, help=help or f.metadata["help"])
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=opt, annotation=_cli_type(f, hint))


def _switches(cls: type[Settings]) -> dict[str, tuple[str, str, str]]:
    """``{flag parameter: (field, value, help)}`` of the fields set by one on/off flag per value."""
    out = {}
    for f in dataclasses.fields(cls):
        for value, text in f.metadata.get("switches", {}).items():
            out[value.replace("-", "_")] = (f.name, value, text)
    return out


def _group_params(
    cls: type[Settings], skip: Callable[[str], bool], overrides: dict[str, dict[str, Any]]
) -> list[inspect.Parameter]:
    if cls is Console:
        return [
            inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=False, annotation=t)
            for n, t in _CONSOLE.items()
        ]
    params = []
    for f in dataclasses.fields(cls):
        if skip(f.name):
            continue
        if f.metadata.get("switches"):
            for param, (_, value, text) in _switches(cls).items():
                opt = typer.Option(False, f"--{value}", help=text)
                params.append(inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, default=opt, annotation=bool))
        elif f.metadata.get("flags"):
            params.append(option_for(cls, f.name, **overrides.get(f.name, {})))
    return params


def _groups_of(hint: Any) -> dict[str, type[Settings]] | None:
    """The settings groups a parameter typed ``hint`` receives: a settings class (``{"": cls}``), each field
    of a dataclass made of settings groups (such as :class:`~pllscore.eval.settings.EvalSettings`), or each
    member of a tuple of settings classes and :class:`Console` (``{"0": cls, ...}``); None for any other
    parameter."""
    if typing.get_origin(hint) is tuple:
        members = typing.get_args(hint)
        if members and all(m is Console or (isinstance(m, type) and issubclass(m, Settings)) for m in members):
            return {str(i): m for i, m in enumerate(members)}
        return None
    if not isinstance(hint, type):
        return None
    if issubclass(hint, Settings):
        return {"": hint}
    if dataclasses.is_dataclass(hint):
        fields = typing.get_type_hints(hint)
        if fields and all(isinstance(t, type) and issubclass(t, Settings) for t in fields.values()):
            return fields
    return None


def _build(cls: type[Settings], kwargs: dict[str, Any], skip: Callable[[str], bool]) -> Settings:
    """The settings object from the parsed options (popped from ``kwargs``)."""
    if cls is Console:
        return Console(**{n: kwargs.pop(n) for n in _CONSOLE})  # type: ignore[return-value]
    given: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if skip(f.name):
            continue
        if f.metadata.get("switches"):
            on = [value for param, (_, value, _) in _switches(cls).items() if kwargs.pop(param, False)]
            given[f.name] = tuple(on)
        elif f.metadata.get("flags"):
            given[f.name] = kwargs.pop(f.name)
    return cls(**given)


def with_settings(
    *,
    skip: Sequence[str] = (),
    only: Sequence[str] | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command whose parameters typed with a :class:`~pllscore.settings.Settings` class receive
    that group, built from its fields' flags (a parameter typed with a dataclass of settings groups receives
    it, each group built so). ``skip``: fields the command declares itself (or leaves at
    their default); ``only``: the fields it offers (the others keep their default); ``overrides``: per
    field, another ``help``, ``flags`` or ``default``."""
    extra = dict(overrides or {})

    def skipped(name: str) -> bool:
        return name in skip or (only is not None and name not in only)

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        hints = typing.get_type_hints(func, include_extras=True)
        sig = inspect.signature(func)
        groups = {n: parts for n in sig.parameters if (parts := _groups_of(hints.get(n))) is not None}
        own = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()]
        own = [p for p in own if p.name not in groups]
        added = [p for parts in groups.values() for cls in parts.values() for p in _group_params(cls, skipped, extra)]

        @functools.wraps(func)
        def command(**kwargs: Any) -> Any:
            built = {}
            for n, parts in groups.items():
                made = {name: _build(cls, kwargs, skipped) for name, cls in parts.items()}
                if "" in made:
                    built[n] = made[""]
                else:
                    built[n] = tuple(made.values()) if "0" in made else hints[n](**made)
            while BEFORE_RUN:
                BEFORE_RUN.pop(0)()
            try:
                return func(**kwargs, **built)
            except KeyboardInterrupt as e:  # click would print "Aborted!"; the entry point prints one line
                raise Stopped(e.args[0] if e.args else None) from None

        params = own + added
        command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        del command.__wrapped__  # typer must read the new signature, not the function's own
        return command

    return wrap


def near_options(typed: str, names: Sequence[str]) -> list[str]:
    """The long options of ``names`` close to the mistyped ``typed`` (``--levl``: ``--level``, not ``--help``).

    Compared without their leading dashes, which every name shares and which make any two short names look
    alike to :func:`difflib.get_close_matches`."""
    bare = {name.lstrip("-"): name for name in names if name.startswith("--")}
    return [bare[m] for m in difflib.get_close_matches(typed.lstrip("-"), list(bare), n=3, cutoff=0.7)]


def requires(check: Callable[[dict[str, Any]], list[str]]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a command with a requirement beyond its required parameters: ``check`` takes the parsed values (by
    parameter name) and returns what is missing, each as the usage error names it (``option '--data' (...)``).
    It is checked with the required parameters, before anything runs, and reported in the same message."""

    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        func.pllscore_requires = check  # type: ignore[attr-defined]
        return func

    return mark


def _click_errors() -> Any:
    """click's exceptions module: typer's own copy of click (typer >= 0.22) or the click package."""
    core = TyperCommand.__mro__[1].__module__
    return importlib.import_module(core.rsplit(".", 1)[0] + ".exceptions")


class Command(TyperCommand):
    """A command whose usage errors say at once everything that is missing (not one required option per run),
    and suggest for a mistyped option only the names close to it."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        errors = _click_errors()
        given = list(args)
        try:
            rest = super().parse_args(ctx, args)
        except errors.NoSuchOption as e:
            names = [n for p in self.get_params(ctx) for n in (*p.opts, *getattr(p, "secondary_opts", ()))]
            e.possibilities = near_options(e.option_name, names)
            raise
        except errors.MissingParameter:
            missing = self._missing(ctx, given, errors)
            if len(missing) > 1:
                raise errors.UsageError(_missing_message(missing), ctx) from None
            raise
        if missing := self._requirements(dict(ctx.params)):
            raise errors.UsageError(_missing_message(missing), ctx)
        return rest

    def _requirements(self, values: dict[str, Any]) -> list[str]:
        check = getattr(self.callback, "pllscore_requires", None)
        return list(check(values)) if check else []

    def _missing(self, ctx: Any, given: list[str], errors: Any) -> list[str]:
        """Every required parameter the command line lacks (as click names it: ``option '--model' / '-m'``), then
        the command's own requirements."""
        opts, _, _ = self.make_parser(ctx).parse_args(args=given)
        values, missing = {}, []
        for param in self.get_params(ctx):
            value, _ = param.consume_value(ctx, opts)
            values[param.name] = value
            if param.required and param.value_is_missing(value):
                said = errors.MissingParameter(ctx=ctx, param=param).format_message()
                missing.append(said.removeprefix("Missing ").rstrip("."))
        return missing + self._requirements(values)


def _missing_message(missing: list[str]) -> str:
    """``Missing argument 'FILE', option '--model' / '-m' and option '--good'.``: one message for all of them."""
    return f"Missing {', '.join(missing[:-1])} and {missing[-1]}." if len(missing) > 1 else f"Missing {missing[0]}."
