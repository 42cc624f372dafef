# Two commands on a fresh clone: `make run` (install + start the app) and `make test` (install + all checks).
# `make run` installs what the app needs only (the library, streamlit + plotly, the memo's PDF stack: wheels,
# about a minute on an empty cache); `make test` adds the probes (torch), the dev tools, Ray and, best effort,
# the real-server test's llama-cpp-python, which compiles from its sdist.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
APP_STAMP := $(VENV)/.installed-app
STAMP := $(VENV)/.installed
PORT ?= 8501
PYTEST_WORKERS ?= auto
# llama-cpp-python (the `realserver` extra) builds from source: CPU only, no tools, examples, tests or
# multimodal library, no -march=native (the cached wheel then runs on any x86-64 with AVX2).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
	-DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF -DLLAMA_OPENSSL=OFF
# Longest the llama-cpp-python build may take (seconds) before make install goes on without it.
REALSERVER_BUILD_SECONDS ?= 2400

.PHONY: run test lint typecheck pytest bench install clean

$(APP_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# --no-compile: pip would byte-compile every file of every package (plotly alone has thousands), which took
	@# longer than unpacking them; Python compiles the modules the app imports on first import instead.
	$(BIN)/python -m pip install -q --no-compile -e '.[app,memo]'
	touch $(APP_STAMP)

$(STAMP): $(APP_STAMP)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[probes,app,memo,dev,cluster]'
	@# The real-server test's extra builds llama-cpp-python from its sdist (no wheel on the index): best effort,
	@# bounded, so a slow or failing build never fails the install; tests/test_endpoint_real_server.py then skips
	@# and says why. pip caches the built wheel, so later installs take seconds.
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" timeout $(REALSERVER_BUILD_SECONDS) $(BIN)/python -m pip install -q -e '.[realserver]' \
		|| echo "warning: the realserver extra (llama-cpp-python) did not install; the real-server test will skip" >&2
	touch $(STAMP)

install: $(STAMP)

run: $(APP_STAMP)
	$(BIN)/streamlit run app/main.py --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

lint: $(STAMP)
	$(BIN)/ruff check costmodel probes app tests scripts bench

typecheck: $(STAMP)
	$(BIN)/mypy costmodel

pytest: $(STAMP)
	@# One process per core; --dist loadfile keeps each file's module fixtures (a started server, a built
	@# catalog) in one process. PYTEST_WORKERS=0 runs it in one process. Tests marked serial measure real
	@# latencies against a fit, so they run afterwards, alone on the machine.
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile -m "not serial"
	$(BIN)/pytest -m serial

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
