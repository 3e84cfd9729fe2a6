"""SyntaxGym prediction formulas and suite files: the grammar against SyntaxGym 0.6's own, and every refusal."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from pllscore import InputError
from pllscore.eval.syntaxgym.formula import parse_formula
from pllscore.eval.syntaxgym.suite import read_suite

DATA = Path(__file__).resolve().parents[1] / "data" / "syntaxgym"
PUBLISHED = json.loads((DATA / "published_formulas.json").read_text())["suites"]


def reference_grammar():
    """SyntaxGym 0.6's grammar (syntaxgym/prediction.py) as it is written there, with values for its nodes:
    an independent parser to compare ours with."""
    import pyparsing as pp

    lpar, rpar = pp.Suppress("("), pp.Suppress(")")
    region = lpar + (pp.Word(pp.nums) | "*") + pp.Suppress(";%") + pp.Word(pp.alphanums + "_-") + pp.Suppress("%")
    region = region + rpar

    def region_value(t):
        number, cond = t[0], t[1]
        if number == "*":
            return lambda d: sum(v for (c, _), v in d.items() if c == cond)
        return lambda d: d[cond, int(number)]

    def chain(t):
        args, ops = list(t[0][0::2]), list(t[0][1::2])
        node = args.pop(0)
        while args:
            op, right, left = ops.pop(0), args.pop(0), node
            node = {
                "-": lambda d, a=left, b=right: a(d) - b(d),
                "+": lambda d, a=left, b=right: a(d) + b(d),
                "&": lambda d, a=left, b=right: a(d) and b(d),
                "|": lambda d, a=left, b=right: a(d) or b(d),
            }[op]
        return node

    def compare(t):
        a, op, b = t[0][0], t[0][1], t[0][2]
        if op == "<":
            return lambda d: a(d) < b(d)
        if op == ">":
            return lambda d: a(d) > b(d)
        return lambda d: np.isclose(a(d), b(d), rtol=1e-5, atol=1e-3)

    number = pp.pyparsing_common.number.copy().add_parse_action(lambda t: lambda d, v=float(t[0]): v)
    atom = region.set_parse_action(region_value) | number
    return pp.infix_notation(
        atom,
        [(pp.one_of("- +"), 2, pp.OpAssoc.LEFT, chain), (pp.one_of("< > ="), 2, pp.OpAssoc.LEFT, compare),
         (pp.one_of("& |"), 2, pp.OpAssoc.LEFT, chain)],
        lpar=lpar, rpar=rpar,
    )  # fmt: skip


REFERENCE = reference_grammar()


def reference(formula: str):
    return REFERENCE.parse_string(formula, parse_all=True)[0]


def random_values(formula, rng):
    return {(r.condition, r.number): rng.uniform(0, 20) for r in formula.regions() if r.number is not None}


def test_every_published_formula_parses_and_agrees_with_syntaxgym_on_its_round_bracket_spelling():
    import pyparsing as pp

    distinct = list(dict.fromkeys(f for fs in PUBLISHED.values() for f in fs))
    assert len(distinct) == 25
    rng = random.Random(0)
    for text in distinct:
        ours = parse_formula(text)
        assert ours.regions(), text
        if "[" in text:
            with pytest.raises(pp.ParseBaseException):
                reference(text)  # SyntaxGym 0.6 refuses square brackets ("Invalid formula expression")
        theirs = reference(text.replace("[", "(").replace("]", ")"))
        for _ in range(50):
            values = random_values(ours, rng)
            assert ours(values) == bool(theirs(values)), text


def _random_formula(rng, depth=0):
    conds = ["a", "b_c", "no-gap"]
    pick = rng.random()
    if depth > 3 or pick < 0.3:
        return rng.choice([f"({rng.randint(1, 3)};%{rng.choice(conds)}%)", f"(*;%{rng.choice(conds)}%)",
                           str(rng.choice([0, 1, -2, 0.5, 1e-3]))])  # fmt: skip
    op = rng.choice(["+", "-", "<", ">", "=", "&", "|", "+", "-", "<", ">"])
    left, right = _random_formula(rng, depth + 1), _random_formula(rng, depth + 1)
    return f"({left} {op} {right})" if rng.random() < 0.3 else f"{left}{rng.choice(['', ' ', '  '])}{op} {right}"


def _mangled(text, rng):
    i = rng.randrange(len(text))
    return rng.choice([text[:i] + text[i + 1 :], text[:i] + rng.choice("()%;*[]x ") + text[i:]])


def test_the_grammar_accepts_and_evaluates_as_syntaxgyms_on_random_formulas():
    import pyparsing as pp

    rng = random.Random(1)
    accepted = refused = 0
    for _ in range(400):
        text = _random_formula(rng)
        text = _mangled(text, rng) if rng.random() < 0.4 else text
        try:
            theirs = reference(text)
        except pp.ParseBaseException:
            if "[" not in text and "]" not in text:
                with pytest.raises(InputError, match="invalid formula"):
                    parse_formula(text)
            refused += 1
            continue
        ours = parse_formula(text)
        accepted += 1
        named = {(r.condition, n) for r in ours.regions() for n in (1, 2, 3)}
        values = {key: rng.choice([1.0, 2.0, 2.0005, 3.5]) for key in sorted(named)}
        try:
            expected = bool(theirs(values))
        except TypeError:  # arithmetic on numpy truth values fails in SyntaxGym too
            with pytest.raises(InputError, match="cannot be evaluated"):
                ours(values)
            continue
        assert ours(values) == expected, text
    assert accepted > 100 and refused > 30


@pytest.mark.parametrize(
    ("formula", "expected"),
    [
        ("(1;%a%) + (2;%a%) > 2.5", True),  # 1 + 2 > 2.5: + binds tighter than >
        ("(1;%a%) - (2;%a%) - (3;%a%) < -3.5", True),  # left-associative: (1 - 2) - 3 = -4
        ("(3;%a%) - (2;%a%) - (1;%a%) = 0", True),  # (3 - 2) - 1 = 0, not 3 - (2 - 1) = 2
        ("(*;%a%) = 6", True),  # the sum of a's regions
        ("(*;%b%) = 10.0009", True),  # isclose: atol 1e-3
        ("(*;%b%) = 10.002", False),
        ("(1;%a%) < (2;%a%) & (3;%a%) < (2;%a%)", False),
        ("(1;%a%) < (2;%a%) | (3;%a%) < (2;%a%)", True),
        ("(1;%a%) > 0 & (1;%a%) > 2 | (1;%a%) < 2", True),  # & and | one level, left to right: (T & F) | T
        ("(1;%a%) < 2 | (1;%a%) > 2 & (1;%a%) > 5", False),  # (T | F) & F
        ("[(1;%a%) < (2;%a%)] & [[(3;%a%) - (1;%a%)] > (2;%a%) - 1]", True),
        ("(1;%a%) < (3;%a%) < (2;%a%)", True),  # SyntaxGym compares the first two of a chain only
        ("(1;%b%) > 1e1", False),
    ],
)
def test_hand_worked_predictions(formula, expected):
    values = {("a", 1): 1.0, ("a", 2): 2.0, ("a", 3): 3.0, ("b", 1): 10.0}
    assert parse_formula(formula)(values) is expected


@pytest.mark.parametrize("formula", ["(1;%a%) >", "(1; %a%) > 0", "[(1;%a%) > 0)", "(1;%a b%) > 0", "(1;%a%) ? 2", ""])
def test_a_formula_that_does_not_parse_is_refused(formula):
    with pytest.raises(InputError, match="invalid formula"):
        parse_formula(formula)


def _suite(tmp_path, **changes):
    data = json.loads((DATA / "agreement.json").read_text())
    for key, value in changes.items():
        data[key] = value
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(data))
    return path


def test_a_suite_reads_into_sentences_regions_and_predictions():
    suite = read_suite(DATA / "npz_garden_path.json")
    assert (suite.name, suite.metric, len(suite.items), len(suite.predictions)) == ("npz_garden_path", "mean", 2, 2)
    cond = suite.items[1].conditions[0]
    assert cond.contents[2:5] == ("", " the doctor", " took off")
    assert cond.sentence == "When the dog bit the doctor took off the restraint ."
    assert cond.spans() == [(0, 12), (13, 16), None, (17, 27), (28, 36), (37, 52)]
    assert [cond.sentence[a:b] for a, b in filter(None, cond.spans())][2] == "the doctor"
    assert any("leading or trailing spaces" in n for n in suite.notes)
    published = read_suite(DATA / "filler_gap.json")
    given = json.loads((DATA / "filler_gap.json").read_text())["meta"]["string_predictions"]
    assert [f.text for f in published.predictions] == given
    assert any("meta.string_predictions" in n for n in published.notes)


def test_every_problem_of_a_suite_is_one_error_naming_suite_item_and_prediction(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"meta": {"name": "x"}, "items": [')
    with pytest.raises(InputError, match=r"suite .*broken.json is not valid JSON \(line 1"):
        read_suite(bad)
    with pytest.raises(InputError, match="suite agreement has no items"):
        read_suite(_suite(tmp_path, items=[]))
    unknown = [{"type": "formula", "formula": "(6;%match_sing%) < (6;%mismatch%)"}]
    with pytest.raises(
        InputError, match=r"suite agreement, item 1, prediction 0 .*: no condition 'mismatch' in the item"
    ):
        read_suite(_suite(tmp_path, predictions=unknown))
    region = [
        {
            "type": "formula",
            "formula": "(1;%match_sing%) = 0",
        },
        {"type": "formula", "formula": "(9;%match_sing%) > 0"},
    ]
    with pytest.raises(InputError, match=r"item 1, prediction 1 .*: condition 'match_sing' has no region 9"):
        read_suite(_suite(tmp_path, predictions=region))
    with pytest.raises(InputError, match=r"suite agreement, prediction 0: invalid formula"):
        read_suite(_suite(tmp_path, predictions=[{"type": "formula", "formula": "(1;%match_sing%) >"}]))
    with pytest.raises(InputError, match="unknown meta.metric 'total'"):
        read_suite(_suite(tmp_path, meta={"name": "agreement", "metric": "total"}))
    items = json.loads((DATA / "agreement.json").read_text())["items"]
    items[1]["conditions"] = items[1]["conditions"][:3]
    with pytest.raises(InputError, match="suite agreement, item 2: conditions .* differ from the first's"):
        read_suite(_suite(tmp_path, items=items))
    items = json.loads((DATA / "agreement.json").read_text())["items"]
    for region in items[0]["conditions"][0]["regions"]:
        region["content"] = " "
    with pytest.raises(InputError, match="item 1 \\(condition 'match_sing'\\): every region is empty"):
        read_suite(_suite(tmp_path, items=items))
    with pytest.raises(InputError, match="not found"):
        read_suite(tmp_path / "missing.json")
