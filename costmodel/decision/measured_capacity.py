"""A self-host option's capacity per replica from its deployment's measured step-time model
(`costmodel calibrate-endpoint`) instead of the roofline: latency_source "measured".

The fit describes one replica as it was measured (its engine, GPUs and settings), so it is run at the
scenario's mean prompt and output lengths and SLO: the highest Poisson rate whose simulated p90 TTFT and
TPOT meet the SLO and that the replica keeps up with (measurements/endpoint_calibration.capacity). The fit
has no prefix cache: cached prompt tokens are prefilled in full, so a cached workload is under-stated. The
KV-memory ceiling is not measured (max_batch 0: no KV-growth warning); the server's concurrency limit, when
the sweep reached it, is in the fit's max_num_seqs and binds in the simulation.
"""

from __future__ import annotations

import math
import random
from typing import Protocol

from costmodel.measurements.endpoint_calibration import CAPACITY_REQUESTS, EndpointCalibration, capacity
from costmodel.measurements.endpoint_stepsim import StepModel, simulate
from costmodel.scenario import Scenario
from costmodel.serving.analytic import Capacity

MEASURED_METHOD = "measured"


def step_model(calibration: EndpointCalibration) -> StepModel:
    """The fitted step-time model of a calibrate-endpoint file (its max_num_seqs what-if included)."""
    return StepModel(
        overhead_seconds=calibration.overhead_seconds, prefill_token_seconds=calibration.prefill_token_seconds,
        decode_sequence_seconds=calibration.decode_sequence_seconds,
        context_token_seconds=calibration.context_token_seconds,
        request_fixed_seconds=calibration.request_fixed_seconds, max_num_seqs=calibration.concurrency_limit,
    )


def _poisson_sends(*, rate_per_second: float, count: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    sent, now = [], 0.0
    for _ in range(count):
        now += rng.expovariate(rate_per_second)
        sent.append(now)
    return sent


def _prefill_fraction(model: StepModel, *, prompt: int, output: int) -> float:
    """Share of a request's step time spent on its prefill (splits $ into input vs output)."""
    prefill = model.prefill_token_seconds * prompt
    decode = output * (model.decode_sequence_seconds + model.context_token_seconds * (prompt + output / 2))
    return prefill / (prefill + decode) if prefill + decode > 0 else 0.0


def endpoint_capacity(scenario: Scenario, calibration: EndpointCalibration, *, seed: int = 0) -> Capacity:
    """Capacity per replica at the scenario's SLO from the fitted model; infeasible with the reason when even
    a near-idle replica misses the SLO."""
    model = step_model(calibration)
    workload, slo = scenario.workload, scenario.slo
    prompt = max(1, round(workload.mean_prompt_tokens()))
    output = max(1, round(workload.mean_output_tokens()))
    rate, binding = capacity(model, prompt=prompt, output=output, slo_ttft=slo.ttft_p90_seconds,
                             slo_tpot=slo.tpot_p90_seconds, seed=seed)
    fraction = _prefill_fraction(model, prompt=prompt, output=output)
    at_rate = simulate(model, prompt_tokens=[prompt] * CAPACITY_REQUESTS, output_tokens=[output] * CAPACITY_REQUESTS,
                       sent_seconds=_poisson_sends(rate_per_second=max(rate, 1e-9), count=CAPACITY_REQUESTS,
                                                   seed=seed))
    ttft, tpot = at_rate.percentile("ttft", 90), at_rate.percentile("tpot", 90)
    within = ttft <= slo.ttft_p90_seconds and tpot <= slo.tpot_p90_seconds
    where = f"measured step-time model of {calibration.base_url} at prompt {prompt}, output {output} tokens"
    if rate <= 0 or not within or not math.isfinite(rate):
        return Capacity(feasible=False, reason=f"{where}: even a near-idle replica shows TTFT p90 {ttft:.3f} s, TPOT "
                        f"p90 {tpot * 1e3:.1f} ms against the SLO (binding: {binding})", requests_per_second=0.0,
                        batch=0, ttft_seconds=ttft, tpot_seconds=tpot, prefill_time_fraction=fraction,
                        max_batch=0, method=MEASURED_METHOD)
    reason = (f"meets the SLO at {rate:.2f} requests/s per replica ({where}: TTFT p90 {ttft:.3f} s, TPOT p90 "
              f"{tpot * 1e3:.1f} ms; binding limit {binding.replace('_', ' ')})")
    return Capacity(feasible=True, reason=reason, requests_per_second=rate, batch=at_rate.peak_running,
                    ttft_seconds=ttft, tpot_seconds=tpot, prefill_time_fraction=fraction,
                    max_batch=0, method=MEASURED_METHOD,
                    throughput_bound=binding in ("throughput", "max_num_seqs"))


class CapacityStore(Protocol):
    """What `cached_endpoint_capacity` needs of decision.rank.CapacityCache."""

    def get(self, key: str) -> tuple[Capacity, str] | None: ...

    def put(self, key: str, value: tuple[Capacity, str]) -> None: ...


def cached_endpoint_capacity(scenario: Scenario, calibration: EndpointCalibration, *, source: str,
                             cache: CapacityStore | None) -> tuple[Capacity, str]:
    """`endpoint_capacity` with its provenance, cached by the calibration, the SLO and the lengths."""
    key = "|".join(["measured", calibration.model_dump_json(), scenario.slo.model_dump_json(),
                    scenario.workload.model_dump_json(include={"prompt_tokens", "output_tokens"})])
    cached = cache.get(key) if cache is not None else None
    if cached is not None:
        return cached
    value = endpoint_capacity(scenario, calibration), source
    if cache is not None:
        cache.put(key, value)
    return value
