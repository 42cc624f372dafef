"""Serving simulator speed: 100,000 requests on one replica (target < 1 s CPU, in process; CPU time because the
machine is shared) and one capacity_at_slo, and the converged capacity the decision uses (five replications,
requests doubled until its interval is within 5%; target < 5 s per option).

Workload: llama-3.1-8b on one H100 SXM (bf16), chat-like lognormal lengths (prompt mean 1024, output mean
256), Poisson at 10 requests/s (about half the replica's saturation rate: ~30 sequences running).
A pure-Python loop is timed alongside, because this 2-core VM is shared and its speed varies.
Speed work on the engine loop must not move a result: `python -m bench.serving_snapshot save|check PATH`
dumps and compares (bit for bit) every array and figure of 22 simulations, this workload included.
"""

from __future__ import annotations

import statistics
import time
import timeit

from bench.cputime import verdict
from costmodel.scenario.distributions import LognormalTokens
from costmodel.scenario.slo import SloLimit
from costmodel.serving import CapacitySearch, build_replica, capacity_at_slo, converged_capacity, simulate
from costmodel.serving.capacity import CONVERGE_RATE_TOLERANCE, CONVERGE_START_REQUESTS

PROMPT = LognormalTokens(mean_tokens=1024, sigma=0.8)
OUTPUT = LognormalTokens(mean_tokens=256, sigma=0.6)
SLO = (SloLimit("ttft", 90, 1.0), SloLimit("tpot", 90, 0.05))
SIMULATE_TARGET_CPU_SECONDS = 1.0


def _loop_ns() -> float:
    """ns per iteration of `s += i * 1.5` (about 50 on this VM when nothing else runs)."""
    best = min(timeit.repeat("s = 0.0\nfor i in range(1000): s += i * 1.5", number=200, repeat=5))
    return best / 200 / 1000 * 1e9


def run() -> list[str]:
    """Printed figures."""
    replica = build_replica("llama-3.1-8b", "h100-sxm")
    simulate(replica, prompt_tokens=PROMPT, output_tokens=OUTPUT, rate_per_second=10.0, requests=2000)  # warm tables
    loop_before = _loop_ns()
    sim_times, sim_cpu, events = [], [], 0
    for seed in range(3):
        started, cpu_started = time.perf_counter(), time.process_time()
        result = simulate(replica, prompt_tokens=PROMPT, output_tokens=OUTPUT, rate_per_second=10.0,
                          requests=100_000, seed=seed)
        sim_times.append(time.perf_counter() - started)
        sim_cpu.append(time.process_time() - cpu_started)
        events = result.events
    started = time.perf_counter()
    itl = result.itl  # computed on first use: the step groups' array, then one sort of every step's gap
    itl_seconds = time.perf_counter() - started
    started = time.perf_counter()
    series_arrays = (result.series.seconds, result.series.waiting, result.series.running)  # built on first use
    series_events = len(series_arrays[0])
    series_seconds = time.perf_counter() - started
    cap_times = []
    for _ in range(3):
        started = time.perf_counter()
        cap = capacity_at_slo("llama-3.1-8b", "h100-sxm", prompt_tokens=PROMPT, output_tokens=OUTPUT, slo=SLO)
        cap_times.append(time.perf_counter() - started)
    conv_times = []
    for _ in range(2):
        started = time.perf_counter()
        conv = converged_capacity(replica, CapacitySearch(prompt_tokens=PROMPT, output_tokens=OUTPUT, slo=SLO,
                                                          requests=CONVERGE_START_REQUESTS,
                                                          rate_tolerance=CONVERGE_RATE_TOLERANCE))
        conv_times.append(time.perf_counter() - started)
    loop_after = _loop_ns()
    return [
        f"simulate 100,000 requests (llama-3.1-8b, 1 x h100-sxm, 10 req/s, mean batch {result.mean_batch:.0f}): "
        f"{statistics.median(sim_cpu):.2f} s CPU, median of 3 (target < {SIMULATE_TARGET_CPU_SECONDS:g} s) "
        f"{verdict(value=statistics.median(sim_cpu), target=SIMULATE_TARGET_CPU_SECONDS)}; wall median "
        f"{statistics.median(sim_times):.2f} s; {events:,} engine events, {result.steps:,} engine steps",
        f"ITL percentiles of that run (computed on first use, on top of the simulation): {itl_seconds:.2f} s; "
        f"p50 {itl.p50_seconds * 1e3:.1f} ms, p99 {itl.p99_seconds * 1e3:.1f} ms",
        f"queue series of that run as arrays (built on first use, on top of the simulation): {series_seconds:.2f} s "
        f"for {series_events:,} events",
        f"capacity_at_slo (TTFT p90 <= 1 s, TPOT p90 <= 50 ms): min {min(cap_times):.2f} s, median "
        f"{statistics.median(cap_times):.2f} s (target < 5 s) {verdict(value=statistics.median(cap_times), target=5.0)}; "
        f"{cap.max_rate_requests_per_second:.2f} req/s per replica, "
        f"{cap.simulations} simulations of {cap.requests_per_simulation} requests",
        f"converged capacity (decision settings): min {min(conv_times):.2f} s (target < 5 s per option) "
        f"{verdict(value=min(conv_times), target=5.0)}; "
        f"{conv.max_rate_requests_per_second:.2f} req/s, 95% interval {conv.capacity_ci_low:.2f}-{conv.capacity_ci_high:.2f}, "
        f"converged {conv.converged}, {conv.simulations} simulations of {conv.requests_per_simulation} requests",
        f"machine: pure-Python loop {loop_before:.0f} / {loop_after:.0f} ns per iteration before / after "
        "(about 50 when the VM is quiet; higher means other work shares the cores)",
    ]
