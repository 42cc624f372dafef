"""The measured loop against a real OpenAI-compatible engine: llama-cpp-python's server on loopback,
serving a tiny random-weight Llama GGUF this test writes itself (tests/tiny_gguf.py).

`probe-endpoint` sweeps 1, 2 and 4 clients, `calibrate-endpoint` fits on 1 and 2 and holds out 4.
What the fit should find: llama-cpp-python's server runs one `Llama` behind a lock
(llama_cpp/server/app.py, `get_llama_proxy`), so it streams one request at a time. The sweep then shows
at most one sequence decoding while the client has 2 in flight: the fitted concurrency limit is 1,
TPOT does not grow with the clients, and TTFT at N clients is mostly the wait for the N - 1 requests
ahead. The held-out level checks exactly that queueing, which the fit never saw at 4 clients.

The server is started with `--interrupt_requests False`: by default it cuts the running stream short
(`data: [DONE]` after a few tokens) whenever another request arrives, which is a different server.
Skipped only when llama_cpp or gguf is not installed (`pip install -e '.[realserver]'`; `make test`
does it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from tiny_gguf import write_tiny_llama

from costmodel.cli import main
from costmodel.measurements.endpoint_calibration import HOLDOUT_ABSOLUTE_FLOOR_SECONDS
from costmodel.measurements.endpoint_sweep import EndpointSweep
from probes.endpoint import _INSTRUCTION, _PROMPT_WORDS

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("gguf") is None,
        reason="llama-cpp-python[server] and gguf are not installed: pip install -e '.[realserver]'",
    ),
    # The held-out check compares measured latencies with a fit: another test process on the same cores halves
    # the server's throughput (measured: 34 against 71 tokens/s at 4 clients), so make test runs it alone.
    pytest.mark.serial,
]

MODEL_ALIAS = "tiny-random-llama"
READY_TIMEOUT_SECONDS = 90.0
CLIENTS = "1,2,4"
REQUESTS_PER_LEVEL = 12
PROMPT_TOKENS = 48
MAX_TOKENS = 24  # ~24 x 20-50 ms per request: the 36 requests take ~30-80 s on a 2-core host
# The held-out bound this test checks (our choice, justified): the relative part is the calibration's
# own 35% (HOLDOUT_RELATIVE_ERROR_BOUND; the CLI writes nothing above it). For a one-at-a-time server
# the model's queueing is exact up to the server's per-request work between two streams (template,
# tokenizing, the HTTP response), which the step model books as client time; at 4 clients a request
# waits for 3 others, so that work appears 3 times in TTFT. The absolute part is the calibration's
# 2 ms floor for loopback jitter on a shared host.
RELATIVE_BOUND = 0.35


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ready(process: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama_cpp.server exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if requests.get(f"{base_url}/models", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.25)
    pytest.fail(f"llama_cpp.server not ready after {READY_TIMEOUT_SECONDS:.0f} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a llama-cpp-python server on a free loopback port; stopped after the module."""
    folder = tmp_path_factory.mktemp("llama")
    model_path = folder / "tiny.gguf"
    words = list(_PROMPT_WORDS) + _INSTRUCTION.replace(".", " ").lower().split()
    write_tiny_llama(model_path, words=words)
    port = _free_port()
    log = folder / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", MODEL_ALIAS,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "512", "--n_threads", "1",
               "--n_threads_batch", "1", "--interrupt_requests", "False"]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT,
                                   env={**os.environ, "OMP_NUM_THREADS": "1"})
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(process, base_url, log)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def test_sweep_and_calibration_against_llama_cpp_server(llama_server: str, tmp_path: Path, capsys) -> None:
    sweep_path, cal_path = tmp_path / "sweep.json", tmp_path / "cal.json"
    code = main(["probe-endpoint", "--url", llama_server, "--model", MODEL_ALIAS, "--concurrency", CLIENTS,
                 "--requests", str(REQUESTS_PER_LEVEL), "--prompt-tokens", str(PROMPT_TOKENS),
                 "--max-tokens", str(MAX_TOKENS), "--timeout", "60", "--out", str(sweep_path)])
    assert code == 0, capsys.readouterr().err
    sweep = EndpointSweep.model_validate_json(sweep_path.read_text())
    assert [level.value for level in sweep.levels] == [1.0, 2.0, 4.0] and sweep.complete
    for level in sweep.levels:
        assert level.requests_ok == REQUESTS_PER_LEVEL
        for request in level.requests:
            # the tiny model never samples </s> (tests/tiny_gguf.py), so every stream runs to max_tokens
            assert request.output_tokens == MAX_TOKENS, request
    capsys.readouterr()

    code = main(["calibrate-endpoint", str(sweep_path), "--out", str(cal_path), "--json", "--bootstrap", "8"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    cal = json.loads(printed.out)
    sys.stderr.write(f"real-server calibration: {json.dumps(cal, indent=1)}\n")
    assert cal["levels_fit"] == [1.0, 2.0] and cal["levels_held_out"] == [4.0]
    assert cal["problems"] == [] and not cal["forced"] and json.loads(cal_path.read_text()) == cal
    # one stream at a time (the lock in llama_cpp.server): the limit the sweep shows is 1 sequence
    assert cal["concurrency_limit"] == 1
    held = cal["held_out"][0]
    for name in ("ttft_p50", "tpot_p50"):
        measured = held[f"{name}_measured_seconds"]
        assert cal[f"holdout_{name}_abs_error"] <= RELATIVE_BOUND * measured + HOLDOUT_ABSOLUTE_FLOOR_SECONDS, name
    assert cal["holdout_throughput_abs_error"] <= RELATIVE_BOUND * held["throughput_measured_tokens_per_second"]
    # 4 clients on a one-at-a-time server: each request waits for about 3 others, so the p50 TTFT is
    # well above the p50 time a whole request takes alone (24 tokens at the level-1 TPOT)
    alone = sweep.levels[0]
    assert alone.tpot_p50_seconds is not None and alone.ttft_p50_seconds is not None
    one_request = alone.ttft_p50_seconds + (MAX_TOKENS - 1) * alone.tpot_p50_seconds
    assert held["ttft_p50_measured_seconds"] > 2 * one_request
    # capacity without an SLO: a one-at-a-time server completes requests at its saturated throughput
    # divided by the tokens per request, whatever the load, so the capacity is the 2-client level's
    # tokens/s / 24 (within the same 35%), and the limit that binds is the one sequence at a time
    saturated = sweep.levels[1].output_tokens_per_second / MAX_TOKENS
    assert cal["capacity_requests_per_second"] == pytest.approx(saturated, rel=RELATIVE_BOUND)
    assert 0 < cal["capacity_p10"] <= cal["capacity_p90"]
    assert cal["binding_limit"] == "max_num_seqs"
