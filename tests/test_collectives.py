"""Collectives probe: the alpha-beta fit on a known line, and a real 2-process gloo run on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costmodel.measurements.collectives_result import CollectivesResult, fit_alpha_beta


def test_alpha_beta_recovers_latency_and_bandwidth() -> None:
    sizes = [4096, 65536, 1048576]
    # 50 us + bytes / 10 GB/s, written out: 4096 B -> 50.41 us, 1 MiB -> 154.86 us
    seconds = [50e-6 + size / 10e9 for size in sizes]
    fit = fit_alpha_beta(sizes, seconds)
    assert fit.latency_seconds == pytest.approx(50e-6, rel=1e-6)
    assert fit.bytes_per_second == pytest.approx(10e9, rel=1e-6)
    flat = fit_alpha_beta(sizes, [1e-4, 1e-4, 1e-4])
    assert flat.bytes_per_second is None and flat.latency_seconds == pytest.approx(1e-4)


def test_two_gloo_processes_write_points_and_fits(tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch")
    from costmodel.cli import main

    out = tmp_path / "collectives.json"
    assert main(["probe", "--collectives", "--processes", "2", "--out", str(out), "--json"]) == 0
    result = CollectivesResult.model_validate_json(out.read_text())
    assert result.processes == 2 and result.backend in ("gloo", "nccl")
    assert {p.op for p in result.points} == {"all_reduce", "all_gather"} and len(result.points) == 10
    raw = json.loads(out.read_text())
    for op in ("all_reduce", "all_gather"):
        assert raw["ops"][op]["fit"]["latency_seconds"] >= 0
        assert "bytes_per_second" in raw["ops"][op]["fit"]
    assert json.loads(capsys.readouterr().out)["kind"] == "collectives_probe"


def test_gpu_check_script_argument_handling_on_cpu(tmp_path: Path) -> None:
    """probes/gpu_check.sh: usage without OUT_DIR; on a box without CUDA it stops with exit 2 before probing
    (the collectives step over every GPU runs only with 2+ GPUs, so it is checked by reading on CPU)."""
    import os
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[1] / "probes" / "gpu_check.sh"
    usage = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60)
    assert usage.returncode != 0 and "usage: probes/gpu_check.sh OUT_DIR [MODEL]" in usage.stderr
    env = {**os.environ, "PYTHON": sys.executable, "CUDA_VISIBLE_DEVICES": ""}
    run = subprocess.run(["bash", str(script), str(tmp_path / "out")], capture_output=True, text=True, timeout=120,
                         env=env)
    assert run.returncode == 2 and "torch sees no CUDA GPU" in run.stderr
    assert (tmp_path / "out" / "env.txt").exists() and not (tmp_path / "out" / "probe-gpu.json").exists()
