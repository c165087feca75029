# Entry points: `make demo` (the main job), `make test` (the whole suite, what CI runs) and
# `make test-fast` (lint, types and the tests that need no service, no upstream tree and
# no long run). Each creates .venv itself on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint typecheck unit unit-fast bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
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
