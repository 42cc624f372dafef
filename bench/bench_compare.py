"""`costmodel compare` per bundled example with a 36-month horizon (target < 2 s each, start-up included),
and the in-process decision at 1 and 36 months (capacity is found once per option, so the horizon should
add little). Printed, never asserted."""

from __future__ import annotations

import datetime as dt
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 3
TARGET_SECONDS = 2.0
HORIZON_MONTHS = 36
AS_OF = "2026-12-01"


def _one(scenario: Path) -> tuple[float, float]:
    """(wall s, CPU s of the child) of one `costmodel compare --horizon-months 36 --json` run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "costmodel", "compare", str(scenario), "--json", "--date", AS_OF,
                    "--horizon-months", str(HORIZON_MONTHS)], check=True, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _in_process(scenario: Path) -> tuple[float, float]:
    """Seconds of `decide` at a 1-month and a 36-month horizon, capacities already cached (the horizon's own cost)."""
    from costmodel.decision.capacity import CapacityCache
    from costmodel.decision.rank import decide
    from costmodel.scenario import load_scenario

    loaded = load_scenario(scenario)
    cache = CapacityCache()
    today = dt.date.fromisoformat(AS_OF)
    decide(loaded, today=today, capacity_cache=cache)  # warm: simulate each option's capacity once
    times = []
    for months in (1, HORIZON_MONTHS):
        started = time.perf_counter()
        decide(loaded.model_copy(update={"horizon_months": months}), today=today, capacity_cache=cache)
        times.append(time.perf_counter() - started)
    return times[0], times[1]


def run() -> list[str]:
    """Printed figures: median over RUNS runs per example."""
    lines = []
    for scenario in sorted((ROOT / "examples").glob("*.yaml")):
        results = [_one(scenario) for _ in range(RUNS)]
        wall = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        verdict = "ok" if wall < TARGET_SECONDS else f"OVER the {TARGET_SECONDS:.0f} s target"
        one, many = _in_process(scenario)
        lines.append(f"costmodel compare {scenario.name} --horizon-months {HORIZON_MONTHS}: {wall:.2f} s wall "
                     f"({cpu:.2f} s CPU), median of {RUNS}: {verdict}; decide with capacities cached: "
                     f"{one * 1e3:.0f} ms at 1 month, {many * 1e3:.0f} ms at {HORIZON_MONTHS}")
    return lines
