"""What the R package needs on the Python side, besides pllscore itself: calls whose pllscore errors come
back as values (R shows their one line, not a traceback) and tables moved column by column in plain
Python lists (reticulate 1.28 converts neither pandas 3 frames nor numpy 2 arrays, and turns R's NA into
"NA", -2147483648 or True). Nothing here scores."""

from __future__ import annotations

import ctypes
import importlib.util
import inspect
import math
import os
import re
import sys
import warnings
from typing import Any

INT32 = 2**31 - 1

#: command-line flags whose R argument has another name
R_ARGUMENTS = {
    "model": "models",
    "text-column": "text",
    "position-column": "position",
    "word-column": "word",
    "subject-column": "subject",
    "o/--output": "output",
}
#: flags that are switches, in R an argument set to TRUE
R_SWITCHES = {"force", "resume", "aggregate", "allow-gaps"}
R_CONSTANTS = {"True": "TRUE", "False": "FALSE", "None": "NULL"}


def bind_torch_blas() -> str:
    """Load torch's CPU library before torch is imported, its symbols bound to its own first (``RTLD_DEEPBIND``).

    R's library links a BLAS (``libblas.so.3``: reference BLAS, OpenBLAS, ...) and R loads it into the process
    before Python starts; without this, torch's calls of ``sgemm_`` and the other BLAS and LAPACK routines it
    carries would bind to R's (other numbers than a Python process's, and several times slower). Returns ``""``, or
    why the binding could not be made (torch already imported with another BLAS in the process)."""
    deepbind = getattr(os, "RTLD_DEEPBIND", None)
    if deepbind is None or not sys.platform.startswith("linux"):
        return ""  # elsewhere each library's symbols are its own already (macOS's two-level namespace, Windows)
    if "torch" in sys.modules:
        return _foreign_blas()
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return ""
    library = os.path.join(list(spec.submodule_search_locations)[0], "lib", "libtorch_cpu.so")
    if os.path.exists(library):
        try:  # local, so that torch's BLAS does not in turn take over R's own matrix products
            ctypes.CDLL(library, mode=os.RTLD_NOW | os.RTLD_LOCAL | deepbind)
        except OSError as e:
            return f"torch's library could not be bound to its own BLAS ({e}); R's BLAS may do its matrix products"
    return ""


def _foreign_blas() -> str:
    """Why torch, imported before pllscore's R package could bind it, may multiply with another library's BLAS."""
    process = ctypes.CDLL(None)
    if not hasattr(process, "sgemm_"):
        return ""
    return (
        "torch was imported in this R session's Python before pllscore, where R's BLAS can take over its matrix "
        "products (other numbers than Python's, and slower); restart R and call a pllscore function first"
    )


def has_pllscore() -> bool:
    """Whether pllscore is installed: a package of that name, not a folder ``pllscore`` without ``__init__.py``
    in the working directory (Python takes one for a namespace package: R CMD check runs in one)."""
    spec = importlib.util.find_spec("pllscore")
    return spec is not None and spec.origin not in (None, "namespace")


def r_message(message: str) -> str:
    """A pllscore message in R's terms: texts, contexts and words counted from 1, Python keywords as R
    arguments (``long='window'`` -> ``long = "window"``), command-line flags and Python functions as the R
    functions' arguments and names."""

    def plus_one(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return f"word {int(m.group(1)) + 1} of text {int(m.group(2)) + 1}"
        return f"{m.group(3)} {int(m.group(4)) + 1}"

    message = re.sub(r"\bword (\d+) of text (\d+)\b|\b(text|context) (\d+)\b", plus_one, message)

    def keyword(m: re.Match[str]) -> str:
        value = m.group(2)
        if value.startswith("'") and value.endswith("'"):
            value = '"' + value[1:-1] + '"'
        return f"{m.group(1)} = {R_CONSTANTS.get(value, value)}"

    message = re.sub(r"(?<![\w.=-])([a-z_]+)=('[^']*'|True|False|None|-?\d+(?:\.\d+)?)", keyword, message)

    def flag(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in R_SWITCHES:
            return f"{name.replace('-', '_')} = TRUE"
        return f"{R_ARGUMENTS.get(name, name.replace('-', '_'))} ="

    message = re.sub(r"\brun_(blimp|pairs)\(\)", r"pll_\1()", message)
    message = re.sub(r"\bpass --([a-z][a-z-]*) with\b", lambda m: f"give {flag(m)}", message)
    return re.sub(r"(?<![\w-])-?-(o/--output|[a-z][a-z-]*[a-z])\b", flag, message)


def call(f: Any, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """``(True, value, warnings)``, or ``(False, error type, message, warnings)`` for an error, its message in R's
    terms (:func:`r_message`); ``warnings`` are pllscore's warnings raised on the way, as ``(type, message)``,
    for R to raise as R warnings (others are shown as Python shows them)."""
    from pllscore.errors import PllscoreError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        try:
            out: tuple[Any, ...] = (True, f(*args, **kwargs))
        except PllscoreError as e:
            out = (False, type(e).__name__, r_message(str(e)))
        except Exception as e:  # not pllscore's: still one line in R, with its Python type
            out = (False, type(e).__name__, f"{type(e).__name__}: {r_message(str(e))}")
    relayed = []
    for w in caught:
        if _is_pllscore(w):
            relayed.append((w.category.__name__, r_message(str(w.message))))
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return (*out, relayed)


def _is_pllscore(w: warnings.WarningMessage) -> bool:
    """A warning of pllscore's: its type or the code that raised it is pllscore's."""
    package = os.path.dirname(importlib.util.find_spec("pllscore").origin or "")  # type: ignore[union-attr]
    return w.category.__module__.startswith("pllscore") or os.path.abspath(w.filename).startswith(package)


def keywords(f: Any) -> list[str] | None:
    """The keyword arguments ``f`` takes besides its first, or ``None`` where it takes any (``**options``)."""
    try:
        parameters = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    names = [p.name for p in parameters if p.kind in kinds and p.name != "self"]
    # the first (texts, the model's name, the data) is the R function's own first argument, given by position
    return names[1:] if names and names[0] not in {p.name for p in parameters if p.kind is p.KEYWORD_ONLY} else names


def columns(frame: Any) -> list[tuple[str, str, list[Any], list[int], list[str]]]:
    """A pandas DataFrame's columns as ``(name, kind, values, na, levels)``: kind is ``double``, ``integer``,
    ``logical``, ``character``, ``factor`` or ``list``; values are plain Python scalars (a missing value
    replaced by a filler), ``na`` the 0-based rows that are missing, ``levels`` a factor's categories."""
    import pandas as pd

    out = []
    for name in frame.columns:
        col = frame[name]
        na = [int(i) for i in col.isna().to_numpy().nonzero()[0]]
        levels: list[str] = []
        dtype = col.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            kind, values, levels = "factor", [int(c) + 1 for c in col.cat.codes], [str(c) for c in dtype.categories]
        elif pd.api.types.is_bool_dtype(dtype):
            kind, values = "logical", [bool(v) for v in col.fillna(False).astype(bool)]
        elif pd.api.types.is_integer_dtype(dtype):
            ints = [int(v) for v in col.fillna(0).astype("int64")]
            small = all(-INT32 <= v <= INT32 for v in ints)
            kind, values = ("integer", ints) if small else ("double", [float(v) for v in ints])
        elif pd.api.types.is_float_dtype(dtype):
            kind, values = "double", [float(v) for v in col.fillna(0.0).astype("float64")]
        elif pd.api.types.is_numeric_dtype(dtype):  # complex: as its text
            kind, values = "character", [str(v) for v in col]
        else:
            kind, values, na = _objects(list(col))
        out.append((str(name), kind, values, na, levels))
    return out


def _objects(cells: list[Any]) -> tuple[str, list[Any], list[int]]:
    """Object cells: text (numbers and booleans by their kind when all are), or a list column."""
    na = [i for i, v in enumerate(cells) if v is None or (isinstance(v, float) and math.isnan(v))]
    missing = set(na)
    present = [v for i, v in enumerate(cells) if i not in missing]
    if present and all(isinstance(v, (list, tuple)) for v in present):
        return "list", [None if i in missing else [_scalar(x) for x in v] for i, v in enumerate(cells)], na
    if present and all(isinstance(v, bool) for v in present):
        return "logical", [False if i in missing else bool(v) for i, v in enumerate(cells)], na
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "double", [0.0 if i in missing else float(v) for i, v in enumerate(cells)], na
    return "character", ["" if i in missing else str(v) for i, v in enumerate(cells)], na


def _scalar(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


def frame(names: list[str], kinds: list[str], values: list[list[Any]], nas: list[list[int]]) -> Any:
    """A pandas DataFrame from R's columns: ``kinds`` as :func:`columns` names them (a factor given as
    text), ``nas`` the 0-based rows that are NA in R."""
    import pandas as pd

    data = {}
    for name, kind, vals, na in zip(names, kinds, values, nas):
        vals = list(vals) if isinstance(vals, (list, tuple)) else [vals]
        missing = set(int(i) for i in (na if isinstance(na, (list, tuple)) else [na]))
        if kind == "double":
            data[name] = pd.Series(
                [math.nan if i in missing else float(v) for i, v in enumerate(vals)], dtype="float64"
            )
        elif kind == "integer":
            cells = [None if i in missing else int(v) for i, v in enumerate(vals)]
            data[name] = pd.Series(cells, dtype="Int64" if missing else "int64")
        elif kind == "logical":
            cells = [None if i in missing else bool(v) for i, v in enumerate(vals)]
            data[name] = pd.Series(cells, dtype="boolean" if missing else "bool")
        else:
            data[name] = pd.Series([None if i in missing else str(v) for i, v in enumerate(vals)], dtype=object)
    return pd.DataFrame(data)


def word_scores(results: Any) -> list[list[float]]:
    """Per text of ``results`` (one metric), its word scores in the results' view."""
    return [[float(w.score) for w in r.words] for r in results]


def write_csv(frame: Any, path: str) -> None:
    """A DataFrame as the CSV file pllscore reads back as it was (text cells stay text)."""
    frame.to_csv(path, index=False)


def as_frame(rows: Any) -> Any:
    """A DataFrame from a DataFrame, an object with ``to_frame()``, or rows (dicts)."""
    import pandas as pd

    if isinstance(rows, pd.DataFrame):
        return rows
    if hasattr(rows, "to_frame"):
        return rows.to_frame()
    return pd.DataFrame(list(rows))


# -- the R package's shapes: what its functions return, in R's conventions ------------------------------------------


def prediction_frame(rows: Any, base: Any = "e", surprisal: bool = False) -> Any:
    """A prediction table in a view (``base``, ``surprisal``) from ``Scorer.predict``'s result (a table as it is)."""
    import pandas as pd

    if isinstance(rows, pd.DataFrame):
        return rows
    return rows.to_frame(base=base, surprisal=surprisal)


def input_rows(result: Any) -> list[int]:
    """The 0-based input row of each row of a reading-times result's ``words``."""
    return [int(i) for i in getattr(result, "input_rows", ())]


def model_labels(names: list[str]) -> list[str]:
    """Each model name's label, as reading-times names its columns and rows (``tiny-gpt2`` -> ``tiny_gpt2``)."""
    from pllscore.eval.reading_times.models import model_label

    return [model_label(str(n)) for n in names]


def eval_summary(table: Any, value: str, by: str | None, order: list[str] | None = None) -> Any:
    """One row per model and metric: ``overall`` (the mean of ``value``: a pair's ``correct``, or a BLiMP
    paradigm's ``accuracy``), ``overall_<norm>`` per norm, and the mean per value of ``by`` (a group, a BLiMP
    phenomenon) for those present only, in ``order`` where given; proportions, not rounded."""
    from pllscore.eval.pairs import norm_columns

    keys = ["model", *(["model_id"] if "model_id" in table.columns else []), "metric"]
    frame = table.copy()
    frame[value] = frame[value].astype(float)
    norms = norm_columns(frame)
    grouped = frame.groupby(keys, sort=False)
    out = grouped[value].mean().rename("overall").to_frame()
    for n in norms:
        out[f"overall_{n}"] = grouped[f"{value}_{n}"].apply(lambda s: s.astype(float).mean())
    if by is not None:
        wide = frame.pivot_table(index=keys, columns=by, values=value, aggfunc="mean", sort=False)
        seen = [str(c) for c in wide.columns]
        wide.columns = seen
        chosen = [c for c in order if c in seen] + [c for c in seen if c not in order] if order else seen
        out = out.join(wide[chosen])
    return out.reset_index()
