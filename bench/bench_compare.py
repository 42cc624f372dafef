"""`costmodel compare` per bundled example (target < 1 s CPU each, the whole process), `compare --search 3`
(target < 10 s CPU each), and the in-process decision at 1 and 36 months (capacity is found once per option,
so the horizon should add little). CPU user+sys of the child, medians, since the machine is shared.
Printed, never asserted."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

from bench.cputime import AS_OF, ROOT, budget_line, median_cpu_seconds

RUNS = 3
SEARCH_RUNS = 1  # a search runs for seconds; one run each keeps `make bench` short
TARGET_CPU_SECONDS = 1.0
SEARCH_TARGET_CPU_SECONDS = 10.0
SEARCH_K = 3
HORIZON_MONTHS = 36


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
    """Printed figures, one block per example."""
    lines = []
    for scenario in sorted((ROOT / "examples").glob("*.yaml")):
        args = ["compare", str(scenario), "--json", "--date", AS_OF]
        lines.append(budget_line(f"costmodel compare {scenario.name}", seconds=median_cpu_seconds(args, runs=RUNS),
                                 target_seconds=TARGET_CPU_SECONDS, runs=RUNS))
        lines.append(budget_line(f"costmodel compare {scenario.name} --search {SEARCH_K}",
                                 seconds=median_cpu_seconds([*args, "--search", str(SEARCH_K)], runs=SEARCH_RUNS),
                                 target_seconds=SEARCH_TARGET_CPU_SECONDS, runs=SEARCH_RUNS))
        one, many = _in_process(scenario)
        lines.append(f"  decide with capacities cached: {one * 1e3:.0f} ms at 1 month, {many * 1e3:.0f} ms at "
                     f"{HORIZON_MONTHS} (wall)")
    return lines
