# Two commands on a fresh clone: `make run` (install + start the app) and `make test` (install + all checks).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501
# llama-cpp-python (the `realserver` extra) builds from source: CPU only, no tools, examples, tests or
# multimodal library, no -march=native (the cached wheel then runs on any x86-64 with AVX2).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
	-DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF -DLLAMA_OPENSSL=OFF

.PHONY: run test lint typecheck pytest bench install clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install -q -e '.[probes,app,memo,dev,realserver]'
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
