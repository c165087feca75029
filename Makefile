# Entry points: `make demo` (the main job), `make test` (the whole suite, what CI runs) and
# `make test-fast` (lint, types and the tests that need no service, no upstream tree and
# no long run). Each creates .venv itself on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.core
STAMP := $(VENV)/.installed
# A ready uv installs in seconds; pip otherwise (`make UV=` forces pip).
UV ?= $(shell command -v uv 2>/dev/null)
ifneq ($(UV),)
MKVENV = $(UV) venv --quiet --python $(PYTHON) $(VENV)
INSTALL = $(UV) pip install --quiet --python $(BIN)/python
else
MKVENV = $(PYTHON) -m venv $(VENV)
INSTALL = $(BIN)/python -m pip install --quiet --disable-pip-version-check
endif

.PHONY: demo test test-fast lint typecheck unit unit-fast bench clean

# The main job needs the package alone: no test tools, no lm-eval stack, no matplotlib.
$(CORE): pyproject.toml
	test -x $(BIN)/python || $(MKVENV)
	$(INSTALL) -e .
	touch $(CORE)

$(STAMP): $(CORE)
	$(INSTALL) -e '.[dev]'
	touch $(STAMP)

demo: $(CORE)
	$(BIN)/inferbench demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck unit

# What the fast tier leaves out: long tests, the real upstream trees and oracles, real local
# services (servers, subprocess pipelines) and external ones (PostgreSQL, Slurm, Chromium).
FAST := not slow and not upstream and not integration and not postgres and not slurm and not browser

unit-fast: $(STAMP)
	$(BIN)/pytest -q -m '$(FAST)'

test-fast: lint typecheck unit-fast

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build dist .mypy_cache .pytest_cache .ruff_cache
