"""The deployment search: the default search for examples/chat-assistant.yaml (its own models, with its ops;
counts, time, configurations/s screened and simulated), then the scaling figure: one search that simulates more
than 200 configurations on 1 worker (in process), on a pool of 2 and on a Ray of 2 CPUs (when `.[cluster]` is
installed; twice, as Ray's new workers first import costmodel, 0.7 s of CPU each measured on the 2-core dev
machine 2026-12-02, which a pool's forked workers and a second search on the same Ray skip), with the ratio of
wall times (target >= 1.7x on 2 workers) and whether every result is identical.
Wall time is what parallel work shortens; on a shared machine read it beside the load average printed with it,
and beside the CPU accounting of each run (CPU seconds grow far less than wall when other work shares the
cores: the chat-assistant search's CPU is about its wall on an idle core, and the driver's and workers' CPU
bound the ratio).
Printed, never asserted."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from pathlib import Path

from bench.cputime import compile_package, descendants_cpu_seconds, verdict
from costmodel.catalog import load_model
from costmodel.pricing import load_gpu_prices
from costmodel.scenario import Scenario, load_scenario, parse_scenario
from costmodel.search import LocalExecutor, RayExecutor, enumerate_candidates, make_executor, search
from costmodel.search.run import SearchResult, usable_candidates
from costmodel.search.screen import screen_candidates

SCENARIO = Path(__file__).resolve().parents[1] / "examples" / "chat-assistant.yaml"
RATIO_TARGET = 1.7
MIN_SIMULATED = 200
# A small model on two GPU kinds and two engines; keep_front=True keeps every candidate that could join the
# tokens/s-per-user front, so the search simulates > 200 configurations in ~10 s of CPU on one core.
SCALING = {
    "name": "scaling search", "as_of": "2026-12-01",
    "workload": {"requests_per_day": 20000, "prompt_tokens": {"kind": "fixed", "tokens": 500},
                 "output_tokens": {"kind": "fixed", "tokens": 100}, "peak_to_mean_ratio": 2.0},
    "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
    "search": {"models": ["qwen2.5-0.5b"], "hardware": ["l4", "a100-80gb"], "engines": ["generic", "vllm"]},
    "options": [{"kind": "self-host", "name": "listed", "model": "qwen2.5-0.5b", "hardware": "l4",
                 "gpus_per_replica": 1, "weight_dtype": "bf16", "kv_dtype": "bf16", "offering": "owned/l4/owned"}],
}


def _timed(scenario: Scenario, executor: LocalExecutor | RayExecutor | None) -> tuple[SearchResult, float]:
    started = time.perf_counter()
    result = search(scenario, top_k=3, keep_front=True, executor=executor)
    return result, time.perf_counter() - started


def _cpu_seconds(work: Callable[[], object]) -> tuple[float, float]:
    """(CPU s of this process, CPU s of its finished children: the pool's workers once it is closed) of work()."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.process_time()
    work()
    own = time.process_time() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own, (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)


def _same(a: SearchResult, b: SearchResult) -> bool:
    return (a.best, a.frontier, a.frontier_ttft, a.candidates_simulated, a.candidates_pruned) == (
        b.best, b.frontier, b.frontier_ttft, b.candidates_simulated, b.candidates_pruned)


def _ratio_line(label: str, *, one_seconds: float, two_seconds: float, same: bool) -> str:
    ratio = one_seconds / two_seconds
    return (f"{label}: 1 worker {one_seconds:.1f} s, 2 workers {two_seconds:.1f} s wall -> {ratio:.2f}x "
            f"(target >= {RATIO_TARGET}x) {verdict(value=ratio, target=RATIO_TARGET, higher_is_better=True)}; "
            f"results identical: {same}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


def _pooled(scenario: Scenario) -> tuple[SearchResult, float]:
    pool = make_executor("local", workers=2)
    try:
        return _timed(scenario, pool)
    finally:
        pool.close()  # reaps the workers, so their CPU time is counted


def _scaling_lines() -> list[str]:
    scenario = parse_scenario(SCALING)
    runs: dict[str, tuple[SearchResult, float]] = {}
    serial_cpu, _ = _cpu_seconds(lambda: runs.setdefault("serial", _timed(scenario, None)))
    driver_cpu, workers_cpu = _cpu_seconds(lambda: runs.setdefault("pool", _pooled(scenario)))
    (serial, one), (pooled, two) = runs["serial"], runs["pool"]
    lines = [f"scaling search: {serial.candidates_enumerated:,} enumerated, {serial.candidates_simulated:,} "
             f"simulated (>= {MIN_SIMULATED} wanted: {serial.candidates_simulated >= MIN_SIMULATED})",
             _ratio_line("local pool", one_seconds=one, two_seconds=two, same=_same(serial, pooled)),
             # What the ratio would be on 2 idle cores, from CPU accounting: the serial CPU over the driver's CPU
             # plus half the workers' (an upper bound: it assumes the workers' share splits evenly, nothing waits).
             f"  CPU accounting of the pool run: serial {serial_cpu:.1f} s, driver {driver_cpu:.1f} s + workers "
             f"{workers_cpu:.1f} s -> at most {serial_cpu / (driver_cpu + workers_cpu / 2):.2f}x on 2 idle cores"]
    try:
        import ray  # noqa: F401
    except ImportError:
        return [*lines, "ray: not installed (pip install '.[cluster]'), not measured"]
    compile_package()  # Ray's workers import costmodel afresh: from bytecode, as an installed package does
    started = time.perf_counter()
    ray_executor = make_executor("ray", workers=2)
    init_seconds = time.perf_counter() - started
    try:
        for label in ("workers new: they import costmodel", "workers warm: a second search on them"):
            ray_before, driver_before = descendants_cpu_seconds(), time.process_time()
            on_ray, two_ray = _timed(scenario, ray_executor)
            ray_driver, ray_after = time.process_time() - driver_before, descendants_cpu_seconds()
            lines.append(_ratio_line(f"ray, 2 CPUs, {label} (ray.init {init_seconds:.1f} s, not counted)",
                                     one_seconds=one, two_seconds=two_ray, same=_same(serial, on_ray)))
            if ray_before is not None and ray_after is not None:
                ray_cpu = ray_after - ray_before  # its workers, raylet and GCS
                lines.append(f"  CPU accounting of that Ray run: driver {ray_driver:.1f} s + Ray's processes "
                             f"{ray_cpu:.1f} s -> at most {serial_cpu / (ray_driver + ray_cpu / 2):.2f}x on 2 idle cores")
    finally:
        ray_executor.close()
    return lines


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
    cpu_started = time.process_time()
    result = search(scenario, top_k=5, gpu_sheet=sheet)
    cpu_seconds = time.process_time() - cpu_started  # 1 worker: all of it in this process
    simulate_seconds = max(result.seconds - screen_seconds, 1e-9)
    best = result.best[0] if result.best else None
    lines = [
        f"chat-assistant: {result.candidates_enumerated:,} enumerated, {result.candidates_pruned:,} pruned, "
        f"{result.candidates_simulated:,} simulated in {result.seconds:.1f} s wall (target < 60 s) "
        f"{verdict(value=result.seconds, target=60.0)}, {cpu_seconds:.1f} s CPU (the wall on an idle core); "
        f"load average {load_before:.1f} on {os.cpu_count()} CPUs",
        f"screened: {len(enumerated) / screen_seconds:,.0f} configurations/s ({len(enumerated):,} in "
        f"{screen_seconds:.1f} s: enumerate, validity, vectorized roofline)",
        f"simulated: {result.candidates_simulated / simulate_seconds:,.2f} configurations/s (~{simulate_seconds:.1f} s)",
    ]
    if best is not None:
        lines.append(f"best: {best.model} on {best.gpus_per_replica}x {best.hardware} {best.weight_dtype}/"
                     f"{best.kv_dtype} ({best.offering}) ${best.usd_per_month:,.0f}/month")
    return lines + _scaling_lines()
