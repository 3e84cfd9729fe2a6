"""Measure the structure numbers that docs/architecture.md promises, from the source alone.

    python scripts/structure.py            # the table
    python scripts/structure.py --check    # exit 1 when a limit is broken (make test runs this)

Counts: import circles between modules of src/pllscore (every import, at module level or inside a
function), modules over 400 lines, functions over 80 lines, underscore names imported from another
module, imports of the package ``__init__`` from inside it, and CLI option declarations per distinct
flag. Repeated blocks are counted by the ``duplicates`` tool where it is installed.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "src"
PKG = "pllscore"
LIMITS = {"circles": 0, "long modules": 0, "long functions": 0, "private imports": 0, "package imports": 0}
MAX_MODULE, MAX_FUNCTION, MAX_FLAG_RATIO = 400, 80, 1.15


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / PKG).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module of ``known`` that ``name`` (a module or a name inside one) refers to."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _absolute(node: ast.ImportFrom, mod: str, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".")
    base = base if is_pkg else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def graph(known: dict[str, Path]) -> tuple[dict[str, set[str]], list[str], list[str]]:
    """Import edges between our modules, the private names imported across modules, the imports of ``pllscore``."""
    edges: dict[str, set[str]] = {m: set() for m in known}
    private: list[str] = []
    package: list[str] = []
    for mod, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, mod, path.name == "__init__.py")
                targets = []
                for a in node.names:
                    full = f"{base}.{a.name}"
                    targets.append(full if full in known else base)
                    if a.name.startswith("_") and not a.name.startswith("__") and base.startswith(PKG):
                        if _resolve(base, known) != mod:
                            private.append(f"{path.relative_to(ROOT)}:{node.lineno} {a.name} from {base}")
            else:
                continue
            for t in targets:
                if not t.startswith(PKG):
                    continue
                target = _resolve(t, known)
                if target == PKG and mod != PKG and not mod.startswith(f"{PKG}.cli") or target == PKG and t == PKG:
                    if mod != PKG:
                        package.append(f"{path.relative_to(ROOT)}:{node.lineno}")
                if target and target != mod and target != PKG:
                    edges[mod].add(target)
    return edges, private, package


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            # a package and its own submodules are one unit: __init__ re-exporting them is no circle
            if len(comp) > 1 and not all(c.startswith(min(comp, key=len)) for c in comp):
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def long_functions(known: dict[str, Path]) -> list[str]:
    out = []
    for path in known.values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if n > MAX_FUNCTION:
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({n} lines)")
    return out


def _flags(values: list[ast.expr]) -> set[str]:
    out = set()
    for a in values:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            out.update(f for f in re.split(r"[/ ]", a.value) if f.startswith("--"))
    return out


def flag_ratio() -> tuple[int, int]:
    """(option declarations, distinct flags): a declaration is a typer.Option(...) call with literal flags in
    src/pllscore/cli, or a field of src/pllscore/settings/ with flags (each of its switches counts once;
    a ``choice(...)`` field declares ``--<its name>``)."""
    decls, flags = 0, set()
    for path in (ROOT / PKG / "cli").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "Option":
                found = _flags(node.args)
                decls += bool(found)
                flags |= found
    for settings in sorted((ROOT / PKG / "settings").glob("*.py")):
        for node in ast.walk(ast.parse(settings.read_text())):
            # choice("mask_by", ...) declares the flag --mask-by (settings.choice)
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "choice":
                what = node.args[0]
                if isinstance(what, ast.Constant) and isinstance(what.value, str):
                    decls += 1
                    flags.add("--" + what.value.replace("_", "-"))
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setting":
                for kw in node.keywords:
                    if kw.arg == "flags" and isinstance(kw.value, ast.Tuple):
                        found = _flags(kw.value.elts)
                        decls += bool(found)
                        flags |= found
                    if kw.arg == "switches" and isinstance(kw.value, ast.Dict):
                        names = {f"--{k.value}" for k in kw.value.keys if isinstance(k, ast.Constant)}
                        decls += len(names)
                        flags |= names
    return decls, len(flags)


def main() -> int:
    known = modules()
    edges, private, package = graph(known)
    found = {
        "circles": [" <-> ".join(c) for c in circles(edges)],
        "long modules": [
            f"{p.relative_to(ROOT)} ({n} lines)"
            for p in known.values()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE
        ],
        "long functions": long_functions(known),
        "private imports": private,
        "package imports": package,
    }
    bad = False
    for what, items in found.items():
        print(f"{what}: {len(items)}")
        for item in items:
            print(f"    {item}")
        bad |= len(items) > LIMITS[what]
    decls, n_flags = flag_ratio()
    ratio = decls / max(n_flags, 1)
    print(f"CLI option declarations per flag: {decls} / {n_flags} = {ratio:.2f}")
    bad |= ratio > MAX_FLAG_RATIO
    if "--check" in sys.argv[1:] and bad:
        print("structure: a limit above is broken (see docs/architecture.md)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
