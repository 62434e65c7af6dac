# Two commands do all set-up on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO_STORE := demo.duckdb

.PHONY: demo test soak bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

## demo: create .venv, install tracelab, ingest sample_traces/ and show what is in it
demo: $(VENV)/.installed
	rm -f $(DEMO_STORE) $(DEMO_STORE).wal
	$(BIN)/tracelab demo --store $(DEMO_STORE) sample_traces

## test: create .venv with the test extras, type-check the library, run the test suite (slow tests excluded)
test: $(VENV)/.installed-test
	$(BIN)/python -m mypy src/tracelab
	$(BIN)/python -m pytest -q

## soak: the slow tests (large corpora, kill/fault tests at scale)
soak: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m slow -o addopts=""

## bench: generate corpora and measure side by side; writes benchmarks/results/latest.json
bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run.py

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) .mypy_cache dist build $(DEMO_STORE) $(DEMO_STORE).wal benchmarks/work
