"""The default deployment search for examples/chat-assistant.yaml (its own models, with its ops): counts, time, and
configurations/s screened and simulated, then the same search on a local Ray (when `.[cluster]` is installed)
and its overhead over the local executor (printed, never asserted; issue 15's target is < 60 s)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from costmodel.catalog import load_model
from costmodel.pricing import load_gpu_prices
from costmodel.scenario import load_scenario
from costmodel.search import enumerate_candidates, make_executor, search
from costmodel.search.run import SearchResult, usable_candidates
from costmodel.search.screen import screen_candidates

SCENARIO = Path(__file__).resolve().parents[1] / "examples" / "chat-assistant.yaml"


def _ray_lines(scenario: object, local: SearchResult) -> list[str]:
    try:
        import ray  # noqa: F401
    except ImportError:
        return ["ray: not installed (pip install '.[cluster]'), Ray overhead not measured"]
    started = time.perf_counter()
    executor = make_executor("ray", workers=2)
    init_seconds = time.perf_counter() - started
    try:
        on_ray = search(scenario, top_k=5, executor=executor)  # type: ignore[arg-type]
    finally:
        executor.close()
    same = on_ray.best == local.best and on_ray.frontier == local.frontier
    return [f"ray (local, num_cpus=2): ray.init {init_seconds:.1f} s + search {on_ray.seconds:.1f} s vs local "
            f"{local.seconds:.1f} s: overhead {init_seconds + on_ray.seconds - local.seconds:+.1f} s; "
            f"results identical: {same}"]


def run() -> list[str]:
    scenario = load_scenario(SCENARIO)
    sheet = load_gpu_prices()
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    enumerated = enumerate_candidates(scenario, gpu_sheet=sheet)
    specs = {m: load_model(m) for m in {c.model for c in enumerated}}
    candidates = usable_candidates(scenario, enumerated, model_specs=specs)
    screen_candidates(scenario, candidates, gpu_sheet=sheet, calibration=None, model_specs=specs)
    screen_seconds = time.perf_counter() - started
    result = search(scenario, top_k=5, gpu_sheet=sheet)
    simulate_seconds = max(result.seconds - screen_seconds, 1e-9)
    best = result.best[0] if result.best else None
    lines = [
        f"chat-assistant: {result.candidates_enumerated:,} enumerated, {result.candidates_pruned:,} pruned, "
        f"{result.candidates_simulated:,} simulated in {result.seconds:.1f} s (target < 60 s; "
        f"load average {load_before:.1f} on {os.cpu_count()} CPUs)",
        f"screened: {len(enumerated) / screen_seconds:,.0f} configurations/s ({len(enumerated):,} in "
        f"{screen_seconds:.1f} s: enumerate, validity, vectorized roofline)",
        f"simulated: {result.candidates_simulated / simulate_seconds:,.2f} configurations/s (~{simulate_seconds:.1f} s)",
    ]
    if best is not None:
        lines.append(f"best: {best.model} on {best.gpus_per_replica}x {best.hardware} {best.weight_dtype}/"
                     f"{best.kv_dtype} ({best.offering}) ${best.usd_per_month:,.0f}/month")
    return lines + _ray_lines(scenario, result)
