"""SyntaxGym prediction formulas: the grammar of ``syntaxgym`` 0.6 (``prediction.py``), plus ``[...]`` grouping.

A formula compares region values of an item's conditions::

    (3;%mismatch%) > (3;%match%)
    [(5;%what_nogap%) > (5;%that_nogap%)] & [(6;%what_gap%) < (6;%that_gap%)]

``(N;%cond%)`` is region N of condition ``cond``; ``(*;%cond%)`` the sum of all of ``cond``'s regions. Numbers
(``pyparsing_common.number``: ``3``, ``-1.5``, ``2e-3``), ``+ -``, then ``< > =``, then ``& |``, each level
left-associative, and parentheses. ``=`` is ``numpy.isclose`` with ``rtol=1e-5, atol=1e-3``. The grammar is
SyntaxGym's own ``infix_notation`` over the same atoms, so every formula it accepts parses the same here and
evaluates to the same value; two of its behaviours are kept on purpose: a chain of comparisons
``a < b < c`` compares ``a`` and ``b`` only (its comparison node reads the first three tokens), and ``&``/``|``
are Python's ``and``/``or`` on the evaluated operands (both are evaluated). The published suites of
Hu et al. (2020) group with square brackets, which SyntaxGym 0.6 refuses ("Invalid formula expression"):
here ``[...]`` groups as ``(...)`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pllscore.errors import InputError

__all__ = ["EQUALITY_ATOL", "EQUALITY_RTOL", "Formula", "parse_formula"]

#: the tolerances of ``=`` (SyntaxGym 0.6's ``EQUALITY_RTOL``/``EQUALITY_ATOL``)
EQUALITY_RTOL = 1e-5
EQUALITY_ATOL = 1e-3

Values = Mapping[tuple[str, int], float]


@dataclass(frozen=True)
class Region:
    """``(N;%cond%)``, or ``(*;%cond%)`` with ``number`` None."""

    number: int | None
    condition: str

    def __call__(self, values: Values) -> Any:
        if self.number is None:
            return sum(v for (cond, _), v in values.items() if cond == self.condition)
        return values[self.condition, self.number]

    def __str__(self) -> str:
        return f"({'*' if self.number is None else self.number};%{self.condition}%)"


@dataclass(frozen=True)
class Literal:
    value: float

    def __call__(self, values: Values) -> Any:
        return self.value

    def __str__(self) -> str:
        return f"{self.value:g}"


def _isclose(a: Any, b: Any) -> Any:
    import numpy as np

    return np.isclose(a, b, rtol=EQUALITY_RTOL, atol=EQUALITY_ATOL)


_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "=": _isclose,
    "&": lambda a, b: a and b,
    "|": lambda a, b: a or b,
}


@dataclass(frozen=True)
class Binary:
    operator: str
    left: Any
    right: Any

    def __call__(self, values: Values) -> Any:
        left, right = self.left(values), self.right(values)  # both sides, as SyntaxGym evaluates them
        return _OPERATORS[self.operator](left, right)

    def __str__(self) -> str:
        return f"({self.left} {self.operator} {self.right})"


def _chain(tokens: Any) -> Any:
    """``a op b op c`` -> ``((a op b) op c)``: SyntaxGym's ``Chain`` for ``+ -`` and ``& |``."""
    group = list(tokens[0])
    node = group[0]
    for i in range(1, len(group), 2):
        node = Binary(group[i], node, group[i + 1])
    return node


def _compare(tokens: Any) -> Any:
    """SyntaxGym's ``ComparatorOp``: the first comparison of the group only."""
    group = tokens[0]
    return Binary(group[1], group[0], group[2])


def _region(tokens: Any) -> Region:
    number, condition = tokens[0], tokens[1]
    return Region(None if number == "*" else int(number), condition)


def _grammar() -> Any:
    import pyparsing as pp

    lpar, rpar = pp.Suppress("("), pp.Suppress(")")
    region = lpar + (pp.Word(pp.nums) | "*") + pp.Suppress(";%") + pp.Word(pp.alphanums + "_-") + pp.Suppress("%")
    region = (region + rpar).set_parse_action(_region)
    number = pp.pyparsing_common.number.copy().add_parse_action(lambda t: Literal(float(t[0])))
    expr = pp.Forward()
    bracketed = pp.Suppress("[") + expr + pp.Suppress("]")
    levels = [
        (pp.one_of("- +"), 2, pp.OpAssoc.LEFT, _chain),
        (pp.one_of("< > ="), 2, pp.OpAssoc.LEFT, _compare),
        (pp.one_of("& |"), 2, pp.OpAssoc.LEFT, _chain),
    ]
    expr <<= pp.infix_notation(region | number | bracketed, levels, lpar=lpar, rpar=rpar)
    return expr


_PARSER: list[Any] = []


def _parser() -> Any:
    if not _PARSER:
        import pyparsing as pp

        pp.ParserElement.enable_packrat()  # as SyntaxGym does: nested groups parse in linear time
        _PARSER.append(_grammar())
    return _PARSER[0]


@dataclass(frozen=True)
class Formula:
    """A parsed prediction: ``text`` as written, ``tree`` the nodes; call it with an item's region values."""

    text: str
    tree: Any

    def __call__(self, values: Values) -> bool:
        """Whether the prediction holds, given ``{(condition, region_number): value}``; a formula that mixes
        truth values into arithmetic where numpy cannot (``(a = b) - c``) is an :class:`InputError`, as it fails
        in SyntaxGym."""
        try:
            return bool(self.tree(values))
        except TypeError as e:
            raise InputError(f"formula {self.text.strip()!r} cannot be evaluated: {e}") from None

    def regions(self) -> list[Region]:
        """Every region the formula names, in order (``(*;%c%)`` with ``number`` None)."""
        out: list[Region] = []
        stack = [self.tree]
        while stack:
            node = stack.pop()
            if isinstance(node, Binary):
                stack.extend([node.right, node.left])
            elif isinstance(node, Region):
                out.append(node)
        return out

    def __str__(self) -> str:
        return str(self.tree)


def parse_formula(text: str) -> Formula:
    """Parse a prediction formula; an :class:`InputError` names the position where it stops making sense."""
    import pyparsing as pp

    if not isinstance(text, str):
        raise InputError(f"a formula must be a string, got {type(text).__name__}")
    try:
        tree = _parser().parse_string(text, parse_all=True)[0]
    except pp.ParseBaseException as e:
        raise InputError(f"invalid formula {text!r} (column {e.column})") from None
    return Formula(text, tree)
