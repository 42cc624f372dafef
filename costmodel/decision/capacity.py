"""Capacity per replica at the SLO for a self-host option, and the cache that shares it.

The simulator's capacity search (or the roofline's, or a measured calibrate-endpoint fit) is the costly step
of a decision; `CapacityCache` keys it by everything it depends on, so the app's pages, the memo, sensitivity
and the search reuse one figure per option and every face reports the same capacity.
"""

from __future__ import annotations

import math
import threading
from dataclasses import replace
from typing import Literal

from costmodel.catalog import AcceleratorSpec, derive_shape, load_model
from costmodel.config import ReplicaConfig
from costmodel.decision.attach import Attached, option_efficiency
from costmodel.decision.evidence import tightened_slo
from costmodel.decision.measured_capacity import cached_endpoint_capacity
from costmodel.decision.mode_capacity import disaggregated_option_capacity, with_option_speculation
from costmodel.errors import NoRequestFitsError
from costmodel.measurements.calibration import Calibration
from costmodel.roofline import Efficiency
from costmodel.scenario import Scenario, SelfHostOption
from costmodel.serving import build_replica
from costmodel.serving.analytic import Capacity, roofline_capacity
from costmodel.serving.breakdown import latency_owner
from costmodel.serving.capacity import (
    CONVERGE_RATE_TOLERANCE,
    CONVERGE_START_REQUESTS,
    CapacitySearch,
    GiveUp,
    capacity_for_replica,
)
from costmodel.serving.profile import option_engine_settings

# Requests per bisection step to start from (doubled until the capacity's interval is within 5%) and the
# bisection's tolerance (capacity under-stated by < 5%): the converged capacity the Latency page shows too.
SIMULATED_REQUESTS = CONVERGE_START_REQUESTS
RATE_TOLERANCE = CONVERGE_RATE_TOLERANCE


CapacityMethod = Literal["simulator", "roofline"]


class CapacityCache:
    """Capacity per replica at the SLO (with its efficiency provenance), keyed by everything it depends on.

    Pass one to every `decide` that shares options (sensitivity, the app's pages, the memo) so an option's
    capacity is simulated once and every page reports the same figure. Not module state: each caller owns one.
    """

    def __init__(self, *, max_entries: int = 256) -> None:
        self._entries: dict[str, tuple[Capacity, str]] = {}
        self._max_entries = max_entries
        self._lock = threading.Lock()  # the app shares one cache across sessions (threads)

    def get(self, key: str) -> tuple[Capacity, str] | None:
        """The cached value for `key`, or None."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, value: tuple[Capacity, str]) -> None:
        """Store `value`; past `max_entries` the oldest half is dropped (bounded memory)."""
        with self._lock:
            if len(self._entries) >= self._max_entries:
                for old in list(self._entries)[: self._max_entries // 2]:
                    del self._entries[old]
            self._entries[key] = value

    def __len__(self) -> int:
        return len(self._entries)


def _simulator_infeasible(quick: Capacity, *, reason: str, zero_load: dict[str, float]) -> Capacity:
    """No load meets the SLO in the simulator: its reason, and for display the p90 TTFT / TPOT of its zero-load run
    (each request alone: the figures the reason quotes; serving/zero_load.py). Not the roofline's mean-prompt
    figures, which are no p90; 0 (shown as none) where the run did not get that far (memory, no p90 limit)."""
    return Capacity(feasible=False, reason=reason, requests_per_second=0.0, batch=0,
                    ttft_seconds=zero_load.get("ttft_p90_seconds", 0.0), tpot_seconds=zero_load.get("tpot_p90_seconds", 0.0),
                    prefill_time_fraction=quick.prefill_time_fraction, max_batch=quick.max_batch, method="simulator")


def _simulated_capacity(scenario: Scenario, option: SelfHostOption, config: ReplicaConfig,
                        quick: Capacity, *, give_up: GiveUp | None = None, retried: bool = False) -> Capacity:
    """Capacity at the SLO percentiles from the continuous-batching simulator (costmodel.serving); `give_up`
    and `retried` (an infeasible answer is retried at looser limits): `capacity_for_replica`'s."""
    workload = scenario.workload
    engine = option_engine_settings(option, longest_prompt_tokens=math.ceil(workload.mean_prompt_tokens()))
    # One capacity search per option (seed 0, SIMULATED_REQUESTS): the same call the app's Latency page makes,
    # so the pages agree. `capacity --json` reports the converged capacity with its interval (serving.capacity
    # converged_capacity); five replications per option made every compare ~5x slower, so the decision keeps one.
    search = CapacitySearch(
        prompt_tokens=workload.prompt_tokens, output_tokens=workload.output_tokens, slo=scenario.slo,
        prefix_cached_fraction=workload.cached_prompt_fraction, requests=SIMULATED_REQUESTS,
        rate_tolerance=RATE_TOLERANCE, kv_policy=engine.kv_policy, max_num_seqs=engine.max_num_seqs,
    )
    if option.disaggregated is not None:  # serving modes: decision/mode_capacity.py
        return disaggregated_option_capacity(scenario, option, config=config, quick=quick, engine=engine, search=search)
    replica = build_replica(option.model, config.hardware, gpus=config.gpus, weight_dtype=config.weight_dtype,
                            kv_dtype=config.kv_dtype, efficiency=config.efficiency,
                            max_batched_tokens=engine.max_batched_tokens, engine=engine)
    result = capacity_for_replica(with_option_speculation(replica, option), search, give_up=give_up,
                                  give_up_before_a_pass=not retried)
    run = result.at_capacity
    if not result.feasible or run is None:
        return replace(_simulator_infeasible(quick, reason=result.reason or "no load meets the SLO",
                                             zero_load=result.zero_load_seconds),
                       upper_bound_requests_per_second=result.upper_bound_requests_per_second)
    reason = (f"meets the SLO at {result.max_rate_requests_per_second:.2f} requests/s per replica "
              f"(simulated: TTFT p90 {run.ttft.p90_seconds:.3f} s, TPOT p90 {run.tpot.p90_seconds * 1e3:.1f} ms)")
    if result.saturation_bound:
        reason += (f"; throughput-bound: the latency limits still hold near saturation "
                   f"({result.saturation_rate_requests_per_second:.2f} requests/s), so this rate has no headroom")
    return Capacity(feasible=True, reason=reason, requests_per_second=result.max_rate_requests_per_second,
                    batch=int(round(run.mean_batch)), ttft_seconds=run.ttft.p90_seconds,
                    tpot_seconds=run.tpot.p90_seconds, prefill_time_fraction=quick.prefill_time_fraction,
                    max_batch=quick.max_batch, method="simulator", throughput_bound=result.saturation_bound,
                    latency_owner=latency_owner(run.breakdown("ttft", 90.0), run.breakdown("tpot", 90.0)),
                    upper_bound_requests_per_second=result.upper_bound_requests_per_second)


def capacity_cache_key(scenario: Scenario, option: SelfHostOption, *, hardware: AcceleratorSpec,
                       efficiency: Efficiency, method: CapacityMethod = "simulator") -> str:
    """The `CapacityCache` key of an option's capacity: everything the capacity per replica depends on."""
    pricing_only = {"name", "offering", "usd_per_gpu_hour", "ops_usd_per_month", "min_replicas",
                    "target_peak_utilization", "scaling", "ops_usd_per_gpu_month", "host_capex_usd_per_gpu",
                    "host_power_kw_per_gpu"}  # fields that do not change the capacity per replica
    return "|".join([method, option.model_dump_json(exclude=pricing_only),
                     scenario.workload.model_dump_json(include={"prompt_tokens", "output_tokens",
                                                                "cached_prompt_fraction"}),
                     scenario.slo.model_dump_json(), repr(efficiency), hardware.model_dump_json()])


def _capacity_at(scenario: Scenario, option: SelfHostOption, *, hardware: AcceleratorSpec, eff: Efficiency,
                 method: CapacityMethod, give_up: GiveUp | None = None, retried: bool = False) -> Capacity:
    """Capacity per replica at the scenario's SLO: the roofline's, or the simulator's where the replica fits."""
    workload = scenario.workload
    config = ReplicaConfig(shape=derive_shape(load_model(option.model)), hardware=hardware,
                           gpus=option.gpus_per_replica, weight_dtype=option.weight_dtype, kv_dtype=option.kv_dtype,
                           efficiency=eff)
    quick = roofline_capacity(
        config, prompt_tokens=workload.mean_prompt_tokens(), output_tokens=workload.mean_output_tokens(),
        cached_prompt_fraction=workload.cached_prompt_fraction,
        ttft_limit_seconds=scenario.slo.ttft_p90_seconds, tpot_limit_seconds=scenario.slo.tpot_p90_seconds,
    )
    if method == "roofline" or not quick.fits:
        return quick
    try:
        return _simulated_capacity(scenario, option, config, quick, give_up=give_up, retried=retried)
    except NoRequestFitsError as exc:  # the engine's KV rule leaves no room the roofline's fit check counted
        return _simulator_infeasible(quick, reason=str(exc), zero_load={})


def _tightened(scenario: Scenario, option: SelfHostOption) -> Scenario:
    return scenario.model_copy(update={"slo": tightened_slo(scenario.slo, engine=option.engine)})


def option_capacity_key(scenario: Scenario, option: SelfHostOption, *, calibration: Calibration | None,
                        method: CapacityMethod = "simulator") -> str:
    """The `CapacityCache` key `self_host_capacity` stores this option's capacity under (no attached files)."""
    hardware, eff = option_efficiency(option, calibration)
    return capacity_cache_key(_tightened(scenario, option), option, hardware=hardware, efficiency=eff, method=method)


def self_host_capacity(scenario: Scenario, option: SelfHostOption, *, calibration: Calibration | None,
                       efficiency_scale: float = 1.0, method: CapacityMethod = "simulator",
                       cache: CapacityCache | None = None, attached: Attached | None = None,
                       give_up: GiveUp | None = None) -> tuple[Capacity, str]:
    """Capacity per replica at the SLO for a self-host option, with the efficiency provenance (cached in
    `cache` when one is given); an attached calibrate-endpoint file replaces the roofline (method "measured").
    `give_up` (the search's): raise `serving.capacity.CapacityNotNeeded` once the capacity, and the one at the
    SLO's own limits when that is tried, provably lie below a rate at which `give_up` is true (nothing cached)."""
    if attached is not None and attached.endpoint is not None:
        return cached_endpoint_capacity(scenario, attached.endpoint, source="; ".join(attached.descriptions),
                                        cache=cache)
    hardware, eff = option_efficiency(option, calibration, attached)
    if efficiency_scale != 1.0:
        eff = replace(eff, eff_compute=eff.eff_compute * efficiency_scale,
                      eff_memory=min(1.0, eff.eff_memory * efficiency_scale))
    # Sized where the band's high end meets the SLO (decision/evidence.py); if no load does, at the point
    # estimate's limits, whose band then straddles a limit (unverified).
    tight = _tightened(scenario, option)
    key = capacity_cache_key(tight, option, hardware=hardware, efficiency=eff, method=method)
    cached = cache.get(key) if cache is not None else None
    if cached is not None:
        return cached
    retried = tight.slo != scenario.slo
    capacity = _capacity_at(tight, option, hardware=hardware, eff=eff, method=method, give_up=give_up,
                            retried=retried)
    if not capacity.feasible and retried:
        at_limits = _capacity_at(scenario, option, hardware=hardware, eff=eff, method=method, give_up=give_up)
        bound = min(capacity.upper_bound_requests_per_second, at_limits.upper_bound_requests_per_second)
        capacity = replace(at_limits if at_limits.feasible else capacity, upper_bound_requests_per_second=bound)
    if cache is not None:
        cache.put(key, (capacity, eff.source))
    return capacity, eff.source
