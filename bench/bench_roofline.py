"""Grid-evaluation rate (target >= 1e6 configurations/s on one core) and `costmodel estimate` latency."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from costmodel.catalog import accelerators, models
from costmodel.grid import evaluate_grid


def _grid_rate() -> tuple[int, float]:
    model_ids = [m for m in models() if m != "tiny-test"]
    hardware_ids = list(accelerators())
    kwargs = {
        "model_ids": model_ids,
        "hardware_ids": hardware_ids,
        "gpus": [1, 2, 4, 8],
        "weight_dtypes": ["bf16", "fp8", "int8", "int4"],
        "batch": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
        "context_tokens": [128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072],
    }
    evaluate_grid(**kwargs)  # warm caches (catalog parsing)
    times = []
    configs = 0
    for _ in range(3):
        started = time.perf_counter()
        configs = evaluate_grid(**kwargs).configurations
        times.append(time.perf_counter() - started)
    return configs, statistics.median(times)


def _cli_seconds() -> float:
    cmd = [sys.executable, "-m", "costmodel", "estimate", "--model", "llama-3.1-70b", "--hardware", "h100-sxm",
           "--gpus", "4", "--json"]
    times = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run() -> list[str]:
    """Printed figures."""
    # One core, as the target says: numpy's BLAS is not used here, but pin threads anyway.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    configs, seconds = _grid_rate()
    cli = _cli_seconds()
    return [
        f"grid: {configs:,} configurations in {seconds * 1e3:.0f} ms -> {configs / seconds:,.0f} configurations/s "
        "(target >= 1,000,000/s)",
        f"`costmodel estimate` end to end (new process): median {cli * 1e3:.0f} ms (target < 1 s)",
    ]
