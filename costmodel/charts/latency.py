"""Curve data for the Latency page: the serving simulator's percentiles vs arrival rate for one
self-host option, its capacity at the SLO, and its throughput-vs-interactivity curve.

Every number comes from `costmodel.serving` (one seeded set of requests reused at every rate, so the
curves compare like for like). Rates are per replica.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from costmodel.catalog.loader import load_accelerator
from costmodel.decision.evidence import tightened_slo
from costmodel.decision.mode_capacity import with_option_speculation
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.scenario import SelfHostOption, Slo, SloLimit, Workload
from costmodel.serving.breakdown import latency_owner
from costmodel.serving.capacity import CONVERGE_RATE_TOLERANCE as DECISION_RATE_TOLERANCE
from costmodel.serving.capacity import CONVERGE_START_REQUESTS as DECISION_REQUESTS
from costmodel.serving.capacity import CapacitySearch, capacity_for_replica
from costmodel.serving.curve import DEFAULT_CONCURRENCY, CurvePoint, throughput_interactivity_curve
from costmodel.serving.profile import option_engine_settings
from costmodel.serving.replica import build_replica
from costmodel.serving.results import SimulationResult
from costmodel.serving.simulation import simulate

# Arrival rates as fractions of the saturation rate (all requests at once), 10% .. 100%.
DEFAULT_LOAD_FRACTIONS: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
DEFAULT_REQUESTS = 400


@dataclass(frozen=True)
class LoadPoint:
    """Latency percentiles of one replica at one Poisson arrival rate."""

    rate_requests_per_second: float
    ttft_p50_seconds: float
    ttft_p90_seconds: float
    ttft_p99_seconds: float
    tpot_p50_seconds: float
    tpot_p90_seconds: float
    tpot_p99_seconds: float
    e2e_p90_seconds: float
    output_tokens_per_second: float
    meets_slo: bool


@dataclass(frozen=True)
class InteractivityPoint:
    """A throughput-vs-interactivity point with its SLO verdict on TPOT p90."""

    point: CurvePoint
    meets_tpot_limit: bool


@dataclass(frozen=True)
class OptionLatency:
    """One self-host option under load."""

    name: str
    model_id: str
    hardware_id: str
    gpus: int
    feasible: bool
    reason: str  # why no load meets the SLO ("" when feasible)
    capacity_requests_per_second: float  # per replica at the SLO (0 when infeasible)
    saturation_requests_per_second: float
    load: tuple[LoadPoint, ...]
    curve: tuple[InteractivityPoint, ...]
    slo_limits: tuple[SloLimit, ...]
    requests_per_simulation: int
    efficiency_source: str
    latency_owner: str = ""  # who owns p90 TTFT/TPOT at the capacity, with the lever (the figure compare prints)
    # The limits the capacity was searched at (the decision's: the SLO tightened by the engine's documented
    # error, or the SLO's own where no load meets those); the load points are judged against `slo_limits`.
    search_slo_limits: tuple[SloLimit, ...] = ()


def capacity_search_slos(slo: Slo, *, engine: str) -> tuple[Slo, ...]:
    """The SLOs the capacity is searched at, in order, as `decision.capacity.self_host_capacity` searches them:
    the limits tightened by the engine's documented error (decision/evidence.py), then, only where no load meets
    those, the SLO's own limits."""
    tight = tightened_slo(slo, engine=engine)
    return (tight,) if tight == slo else (tight, slo)


def option_latency(
    option: SelfHostOption,
    workload: Workload,
    slo: Slo,
    *,
    calibration: Calibration | None = None,
    requests: int = DEFAULT_REQUESTS,
    load_fractions: Sequence[float] = DEFAULT_LOAD_FRACTIONS,
    concurrency: Sequence[int] | None = None,
    seed: int = 0,
) -> OptionLatency:
    """Capacity at the SLO, percentiles over arrival rates up to saturation, and the interactivity curve."""
    if option.disaggregated is not None:  # two pools: charts/latency_modes.py (it imports this module's types)
        from costmodel.charts.latency_modes import disaggregated_latency

        return disaggregated_latency(option, workload, slo, requests=requests, load_fractions=load_fractions, seed=seed)
    use_calibration = calibration if calibration is not None and calibration.hardware_id == option.hardware else None
    engine = option_engine_settings(option, longest_prompt_tokens=math.ceil(workload.mean_prompt_tokens()))
    replica = build_replica(option.model, load_accelerator(option.hardware), gpus=option.gpus_per_replica,
                            weight_dtype=option.weight_dtype, kv_dtype=option.kv_dtype, calibration=use_calibration,
                            engine=engine)
    replica = with_option_speculation(replica, option)  # speculative decoding, as the decision runs it
    prompts, outputs = workload.prompt_tokens, workload.output_tokens
    cached = min(workload.cached_prompt_fraction, 0.99)  # the simulator computes at least one prompt token
    # The capacity search with the decision's settings (seed 0, its request count and tolerance): the figure
    # `compare` and the memo print for this option, searched at the decision's (tightened) limits.
    for search_slo in capacity_search_slos(slo, engine=option.engine):
        capacity = capacity_for_replica(replica, CapacitySearch(
            prompt_tokens=prompts, output_tokens=outputs, slo=search_slo, prefix_cached_fraction=cached,
            requests=DECISION_REQUESTS, rate_tolerance=DECISION_RATE_TOLERANCE, kv_policy=engine.kv_policy,
            max_num_seqs=engine.max_num_seqs,
        ))
        if capacity.feasible:
            break
    saturation = capacity.saturation_rate_requests_per_second
    load: list[LoadPoint] = []
    curve: tuple[InteractivityPoint, ...] = ()
    if replica.fits and saturation > 0:
        rates = {saturation * f for f in load_fractions}
        if capacity.feasible:
            rates.add(capacity.max_rate_requests_per_second)
        for rate in sorted(rates):
            result = simulate(replica, prompt_tokens=prompts, output_tokens=outputs, rate_per_second=rate,
                              requests=requests, seed=seed, slo=slo, prefix_cached_fraction=cached,
                              kv_policy=engine.kv_policy, max_num_seqs=engine.max_num_seqs)
            load.append(LoadPoint(
                rate_requests_per_second=rate,
                ttft_p50_seconds=result.ttft.p50_seconds, ttft_p90_seconds=result.ttft.p90_seconds,
                ttft_p99_seconds=result.ttft.p99_seconds, tpot_p50_seconds=result.tpot.p50_seconds,
                tpot_p90_seconds=result.tpot.p90_seconds, tpot_p99_seconds=result.tpot.p99_seconds,
                e2e_p90_seconds=result.e2e.p90_seconds, output_tokens_per_second=result.output_tokens_per_second,
                meets_slo=bool(result.meets_slo),
            ))
        points = throughput_interactivity_curve(
            replica, prompt_tokens=prompts, output_tokens=outputs, prefix_cached_fraction=cached, seed=seed,
            concurrency=DEFAULT_CONCURRENCY if concurrency is None else concurrency, kv_policy=engine.kv_policy,
        )
        curve = tuple(InteractivityPoint(point=p, meets_tpot_limit=p.tpot_p90_seconds <= slo.tpot_p90_seconds)
                      for p in points)
    return OptionLatency(
        name=option.name, model_id=option.model, hardware_id=option.hardware, gpus=option.gpus_per_replica,
        feasible=capacity.feasible, reason=capacity.reason or ("" if replica.fits else replica.memory.message),
        capacity_requests_per_second=capacity.max_rate_requests_per_second,
        saturation_requests_per_second=saturation, load=tuple(load), curve=curve, slo_limits=slo.limits(),
        requests_per_simulation=requests, efficiency_source=replica.efficiency.source,
        latency_owner=_owner(capacity.at_capacity), search_slo_limits=search_slo.limits(),
    )


def _owner(run: SimulationResult | None) -> str:
    """`serving.breakdown.latency_owner` of the run at capacity, as `decide` computes it ("" without one)."""
    if run is None:
        return ""
    return latency_owner(run.breakdown("ttft", 90.0), run.breakdown("tpot", 90.0)) or ""


def self_host_options(options: Sequence[object]) -> tuple[SelfHostOption, ...]:
    """The scenario's self-host options (the ones the simulator can run)."""
    found = tuple(o for o in options if isinstance(o, SelfHostOption))
    if not found:
        raise CostmodelError("the scenario has no self-host option; add one on the Scenario page to simulate it")
    return found


def interactivity_floor(slo: Slo) -> float:
    """Tokens/s per user that the TPOT p90 limit guarantees the slowest 10% of requests: 1 / limit."""
    return 1.0 / slo.tpot_p90_seconds
