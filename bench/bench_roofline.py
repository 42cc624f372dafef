"""Grid-evaluation rate (target >= 1e6 configurations/s on one core) and `costmodel estimate` CPU time
(target < 0.5 s, the whole process; CPU user+sys of the child, median, because the machine is shared)."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time

from bench.cputime import budget_line, median_cpu_seconds, verdict
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


ESTIMATE = ["estimate", "--model", "llama-3.1-70b", "--hardware", "h100-sxm", "--gpus", "4", "--json"]
ESTIMATE_TARGET_CPU_SECONDS = 0.5
GRID_TARGET_PER_SECOND = 1_000_000
RUNS = 5


def run() -> list[str]:
    """Printed figures."""
    # One core, as the target says: numpy's BLAS is not used here, but pin threads anyway.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    configs, seconds = _grid_rate()
    rate = configs / seconds
    floor = statistics.median(_import_floor_cpu_seconds() for _ in range(RUNS))
    return [
        f"grid: {configs:,} configurations in {seconds * 1e3:.0f} ms -> {rate:,.0f} configurations/s "
        f"(target >= {GRID_TARGET_PER_SECOND:,}/s) {verdict(value=rate, target=GRID_TARGET_PER_SECOND, higher_is_better=True)}",
        budget_line("costmodel estimate (new process, CPU user+sys)",
                    seconds=median_cpu_seconds(ESTIMATE, runs=RUNS), target_seconds=ESTIMATE_TARGET_CPU_SECONDS,
                    runs=RUNS),
        budget_line("costmodel --help", seconds=median_cpu_seconds(["--help"], runs=RUNS),
                    target_seconds=ESTIMATE_TARGET_CPU_SECONDS, runs=RUNS),
        f"for scale: python -c 'import numpy, pydantic, yaml' (what estimate cannot avoid) {floor:.2f} s CPU, "
        f"median of {RUNS}",
    ]


def _import_floor_cpu_seconds() -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "import numpy, pydantic, yaml"], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
