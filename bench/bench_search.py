"""The default deployment search for examples/chat-assistant.yaml (whole catalog): counts, time, and
configurations/s screened and simulated (printed, never asserted; issue 15's target is < 60 s)."""

from __future__ import annotations

import time
from pathlib import Path

from costmodel.pricing import load_gpu_prices
from costmodel.scenario import load_scenario
from costmodel.search import enumerate_candidates, search
from costmodel.search.run import usable_candidates
from costmodel.search.screen import screen_candidates

SCENARIO = Path(__file__).resolve().parents[1] / "examples" / "chat-assistant.yaml"


def run() -> list[str]:
    scenario = load_scenario(SCENARIO)
    sheet = load_gpu_prices()
    started = time.perf_counter()
    candidates = usable_candidates(scenario, enumerate_candidates(scenario, gpu_sheet=sheet))
    screen_candidates(scenario, candidates, gpu_sheet=sheet, calibration=None)
    screen_seconds = time.perf_counter() - started
    result = search(scenario, top_k=5, gpu_sheet=sheet)
    simulate_seconds = max(result.seconds - screen_seconds, 1e-9)
    best = result.best[0] if result.best else None
    lines = [
        f"chat-assistant: {result.candidates_enumerated:,} enumerated, {result.candidates_pruned:,} pruned, "
        f"{result.candidates_simulated:,} simulated in {result.seconds:.1f} s (target < 60 s)",
        f"screened: {len(candidates) / screen_seconds:,.0f} configurations/s ({screen_seconds:.1f} s)",
        f"simulated: {result.candidates_simulated / simulate_seconds:,.2f} configurations/s (~{simulate_seconds:.1f} s)",
    ]
    if best is not None:
        lines.append(f"best: {best.model} on {best.gpus_per_replica}x {best.hardware} {best.weight_dtype}/"
                     f"{best.kv_dtype} ({best.offering}) ${best.usd_per_month:,.0f}/month")
    return lines
