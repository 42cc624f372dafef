"""`search --executor ray` on an existing cluster: a local `ray start --head` this module starts and stops.

The cluster is reached the two documented ways, `RAY_ADDRESS` and `--address`; `--workers` left out takes the
CPUs the cluster reports; the results equal the local executor's. Skipped when Ray is not installed
(`pip install -e '.[cluster]'`; `make test` does it). The head (this machine only) has its own temp folder
and process group, and is stopped by SIGTERM to that group (SIGKILL after 60 s). Its workers import this
checkout (PYTHONPATH), as every node of a real cluster must import the same costmodel.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.pricing import PriceSheet, load_gpu_prices
from costmodel.scenario import parse_scenario
from costmodel.search import check_ray_address, make_executor, search

pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[1]
CLUSTER_CPUS = 2
START_TIMEOUT_SECONDS = 180.0  # a head took ~15-30 s to come up on the loaded 2-core test machine
SCENARIO = {
    "name": "small search", "as_of": "2026-12-01",
    "workload": {"requests_per_day": 20000, "prompt_tokens": {"kind": "fixed", "tokens": 500},
                 "output_tokens": {"kind": "fixed", "tokens": 100}, "peak_to_mean_ratio": 2.0},
    "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
    "search": {"models": ["qwen2.5-0.5b"], "hardware": ["l4"], "engines": ["generic"]},
    "options": [{"kind": "self-host", "name": "listed", "model": "qwen2.5-0.5b", "hardware": "l4",
                 "gpus_per_replica": 1, "weight_dtype": "bf16", "kv_dtype": "bf16", "offering": "owned/l4/owned"}],
}


def _ray_cli() -> str:
    beside = Path(sys.executable).parent / "ray"
    found = str(beside) if beside.exists() else shutil.which("ray")
    if found is None:
        pytest.skip("the `ray` command is not installed beside this Python")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait_seconds in ((signal.SIGTERM, 60.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_seconds
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)  # anything left in the group?
            except ProcessLookupError:
                return
            proc.poll()
            time.sleep(0.5)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    port = _free_port()
    temp_dir = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: Ray's socket paths must stay < 108 bytes
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.Popen([_ray_cli(), "start", "--head", f"--port={port}",
                             f"--num-cpus={CLUSTER_CPUS}", "--include-dashboard=false", f"--temp-dir={temp_dir}",
                             "--disable-usage-stats", "--block"],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    address = f"127.0.0.1:{port}"
    auth_mode = os.environ.get("RAY_AUTH_MODE")  # joining may turn token auth on in this process; restored below
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while True:
            try:
                check_ray_address(address, timeout_seconds=2.0)
                break
            except CostmodelError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"`ray start --head` did not answer at {address}") from None
                time.sleep(1.0)
        yield address
    finally:
        _stop(proc)
        shutil.rmtree(temp_dir, ignore_errors=True)
        if auth_mode is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = auth_mode


@pytest.fixture(scope="module")
def one_offering_sheet() -> PriceSheet:  # type: ignore[type-arg]
    sheet = load_gpu_prices()
    return PriceSheet(kind="gpu", where=sheet.where, rows=(sheet.get("owned/l4/owned"),))


def test_ray_address_env_joins_the_cluster_with_its_cpus_and_matches_local(
        cluster: str, one_offering_sheet: PriceSheet, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[type-arg]
    scenario = parse_scenario(SCENARIO)
    local = search(scenario, top_k=2, gpu_sheet=one_offering_sheet)
    monkeypatch.setenv("RAY_ADDRESS", cluster)
    executor = make_executor("ray")  # no --workers: the cluster's CPUs; no num_cpus passed to ray.init
    try:
        assert executor.parallelism == CLUSTER_CPUS
        on_ray = search(scenario, top_k=2, gpu_sheet=one_offering_sheet, executor=executor)
    finally:
        executor.close()
    assert (on_ray.best, on_ray.frontier, on_ray.frontier_ttft) == (local.best, local.frontier, local.frontier_ttft)
    assert (on_ray.candidates_enumerated, on_ray.candidates_pruned, on_ray.candidates_simulated) == (
        local.candidates_enumerated, local.candidates_pruned, local.candidates_simulated)


def test_cli_reaches_the_cluster_by_env_and_by_address(cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCENARIO))
    assert main(["search", str(path), "--json", "--top", "2", "--date", "2026-12-01"]) == 0
    local = json.loads(capsys.readouterr().out)
    monkeypatch.setenv("RAY_ADDRESS", cluster)
    assert main(["search", str(path), "--json", "--top", "2", "--date", "2026-12-01", "--executor", "ray"]) == 0
    by_env = json.loads(capsys.readouterr().out)
    monkeypatch.delenv("RAY_ADDRESS")
    assert main(["search", str(path), "--json", "--top", "2", "--date", "2026-12-01", "--executor", "ray",
                 "--address", cluster]) == 0
    by_flag = json.loads(capsys.readouterr().out)
    for out in (by_env, by_flag):
        assert out["top_k"] == local["top_k"] and out["frontier"] == local["frontier"]
        assert out["candidates_simulated"] == local["candidates_simulated"]
