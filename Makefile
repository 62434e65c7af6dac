# Two commands do all set-up on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO_STORE := demo.duckdb

.PHONY: demo test browser notebook soak bench lint typecheck clean

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

## test: create .venv with the test extras, type-check the library (mypy), run the test suite (slow tests excluded)
## on every CPU (pytest-xdist; a test file stays on one worker, so Spark's tests share one JVM); -rs prints why each skipped test skipped
test: $(VENV)/.installed-test browser
	$(BIN)/python -m mypy src/tracelab
	$(BIN)/python -m pytest -q -rs -n auto --dist loadfile

## browser: Debian's Chromium for the report's browser test (tests/view/test_browser.py fails without it)
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { echo "installing chromium for the browser test"; \
	    if [ "$$(id -u)" = 0 ]; then apt-get install -y chromium || { apt-get update && apt-get install -y chromium; }; \
	    else sudo apt-get install -y chromium || { sudo apt-get update && sudo apt-get install -y chromium; }; fi; }

$(VENV)/.installed-notebook: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[notebook]'
	touch $@ $(VENV)/.installed

## notebook: run notebooks/coverage.ipynb (the demo store and the sample suite, or $$TRACELAB_STORE and
## $$TRACELAB_SUITE) and write it with its plots to build/notebook/coverage.html
notebook: $(VENV)/.installed-notebook
	@if [ -z "$$TRACELAB_STORE" ] && [ ! -f $(DEMO_STORE) ]; then \
	  $(BIN)/tracelab ingest --store $(DEMO_STORE) -q sample_traces; fi
	$(BIN)/jupyter nbconvert --to html --execute --ExecutePreprocessor.timeout=1800 \
	  notebooks/coverage.ipynb --output-dir build/notebook
	@echo "open build/notebook/coverage.html, or run it yourself: $(BIN)/jupyter notebook notebooks/coverage.ipynb"

## soak: the slow tests (large corpora, kill/fault tests at scale)
soak: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -rs -m slow -o addopts=""

## bench: generate corpora and measure side by side; writes benchmarks/results/latest.json
bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run.py

## typecheck: mypy over the library ([tool.mypy] in pyproject.toml)
typecheck: $(VENV)/.installed-test
	$(BIN)/python -m mypy src/tracelab

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) .mypy_cache dist build $(DEMO_STORE) $(DEMO_STORE).wal benchmarks/work
