# Two commands on a fresh clone: `make run` (install + start the app) and `make test` (install + all checks).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: run test lint typecheck pytest bench install clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[probes,app,memo,dev,cluster]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/streamlit run app/main.py --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

lint: $(STAMP)
	$(BIN)/ruff check costmodel probes app tests scripts bench

typecheck: $(STAMP)
	$(BIN)/mypy costmodel

pytest: $(STAMP)
	$(BIN)/pytest

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
