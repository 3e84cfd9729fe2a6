# Two entry points: `make demo` and `make test`. Each creates .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# the CPU build pinned first, so that nothing below pulls a CUDA torch
	$(BIN)/pip install -q "torch==2.13.0"
	$(BIN)/pip install -q -e ".[test,ray]"
	touch $@

.PHONY: demo test venv
venv: $(BIN)/.installed

demo: venv
	$(BIN)/python examples/demo.py

# lint, then what a user installing the wheel meets, then the test suite (its summary line last)
test: venv
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	scripts/check-install.sh
	$(BIN)/python -m pytest -q
