"""Scenario -> ranked options with SLO verdicts: the object `compare`, the app and the memo render.

Ranking: options that meet the SLO and are not throttled come first, cheapest $/month first; then the
rest. The reference API for break-even is the cheapest API option that meets the SLO (or the cheapest).
"""

from __future__ import annotations

import datetime as dt
import math
import threading
from dataclasses import dataclass, replace
from typing import Literal

from costmodel.catalog import (
    AcceleratorSpec,
    accelerators,
    derive_shape,
    load_accelerator,
    load_model,
    models,
)
from costmodel.decision.economics import diurnal_profile
from costmodel.decision.options import api_result, hybrid_result, self_host_result
from costmodel.decision.results import Decision, OptionResult
from costmodel.decision.validity import excluded_result, option_exclusions
from costmodel.decision.warnings import scenario_warnings
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration, apply_calibration
from costmodel.pricing import ApiPriceRow, GpuPriceRow, PriceSheet, load_api_prices, load_gpu_prices
from costmodel.roofline import Efficiency
from costmodel.scenario import ApiOption, HybridOption, Scenario, SelfHostOption, Workload
from costmodel.serving import capacity_at_slo
from costmodel.serving.analytic import Capacity, roofline_capacity

# Requests per bisection step: enough for a stable p90 (the SLO percentile) at ~0.1 s a simulation.
SIMULATED_REQUESTS = 1000
# Bisection stops when the bracket is within 5% of the rate: capacity is under-stated by < 5%.
RATE_TOLERANCE = 0.05


@dataclass(frozen=True)
class Overrides:
    """Multipliers for sensitivity analysis (1.0 = as given)."""

    gpu_price: float = 1.0
    api_price: float = 1.0
    efficiency: float = 1.0
    volume: float = 1.0


def option_efficiency(option: SelfHostOption, calibration: Calibration | None) -> tuple[AcceleratorSpec, Efficiency]:
    """The option's accelerator and efficiencies: a matching calibration's, else datasheet defaults."""
    hardware = load_accelerator(option.hardware)
    if calibration is not None and calibration.hardware_id == hardware.id:
        return apply_calibration(hardware, calibration)
    return hardware, Efficiency.from_accelerator(hardware)


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


def _simulated_capacity(scenario: Scenario, option: SelfHostOption, hardware: AcceleratorSpec, eff: Efficiency,
                        quick: Capacity) -> Capacity:
    """Capacity at the SLO percentiles from the continuous-batching simulator (costmodel.serving)."""
    workload = scenario.workload
    result = capacity_at_slo(
        option.model, hardware, prompt_tokens=workload.prompt_tokens, output_tokens=workload.output_tokens,
        slo=scenario.slo, gpus=option.gpus_per_replica, weight_dtype=option.weight_dtype, kv_dtype=option.kv_dtype,
        efficiency=eff, prefix_cached_fraction=workload.cached_prompt_fraction, requests=SIMULATED_REQUESTS,
        rate_tolerance=RATE_TOLERANCE,
    )
    run = result.at_capacity
    if not result.feasible or run is None:
        return Capacity(feasible=False, reason=result.reason or "no load meets the SLO", requests_per_second=0.0,
                        batch=0, ttft_seconds=quick.ttft_seconds, tpot_seconds=quick.tpot_seconds,
                        prefill_time_fraction=quick.prefill_time_fraction, max_batch=quick.max_batch,
                        method="simulator")
    reason = (f"meets the SLO at {result.max_rate_requests_per_second:.2f} requests/s per replica "
              f"(simulated: TTFT p90 {run.ttft.p90_seconds:.3f} s, TPOT p90 {run.tpot.p90_seconds * 1e3:.1f} ms)")
    if result.saturation_bound:
        reason += (f"; throughput-bound: the latency limits still hold near saturation "
                   f"({result.saturation_rate_requests_per_second:.2f} requests/s), so this rate has no headroom")
    return Capacity(feasible=True, reason=reason, requests_per_second=result.max_rate_requests_per_second,
                    batch=int(round(run.mean_batch)), ttft_seconds=run.ttft.p90_seconds,
                    tpot_seconds=run.tpot.p90_seconds, prefill_time_fraction=quick.prefill_time_fraction,
                    max_batch=quick.max_batch, method="simulator", throughput_bound=result.saturation_bound)


def self_host_capacity(scenario: Scenario, option: SelfHostOption, *, calibration: Calibration | None,
                       efficiency_scale: float = 1.0, method: CapacityMethod = "simulator",
                       cache: CapacityCache | None = None) -> tuple[Capacity, str]:
    """Capacity per replica at the SLO for a self-host option, with the efficiency provenance (cached in
    `cache` when one is given)."""
    hardware, eff = option_efficiency(option, calibration)
    if efficiency_scale != 1.0:
        eff = replace(eff, eff_compute=eff.eff_compute * efficiency_scale,
                      eff_memory=min(1.0, eff.eff_memory * efficiency_scale))
    workload = scenario.workload
    pricing_only = {"name", "offering", "usd_per_gpu_hour", "ops_usd_per_month", "min_replicas",
                    "target_peak_utilization", "scaling"}  # fields that do not change the capacity per replica
    key = "|".join([method, option.model_dump_json(exclude=pricing_only),
                    workload.model_dump_json(include={"prompt_tokens", "output_tokens", "cached_prompt_fraction"}),
                    scenario.slo.model_dump_json(), repr(eff), hardware.model_dump_json()])
    cached = cache.get(key) if cache is not None else None
    if cached is not None:
        return cached
    quick = roofline_capacity(
        derive_shape(load_model(option.model)), hardware,
        gpus=option.gpus_per_replica, weight_dtype=option.weight_dtype, kv_dtype=option.kv_dtype, efficiency=eff,
        prompt_tokens=workload.mean_prompt_tokens(), output_tokens=workload.mean_output_tokens(),
        cached_prompt_fraction=workload.cached_prompt_fraction,
        ttft_limit_seconds=scenario.slo.ttft_p90_seconds, tpot_limit_seconds=scenario.slo.tpot_p90_seconds,
    )
    capacity = quick if method == "roofline" or not quick.fits else (
        _simulated_capacity(scenario, option, hardware, eff, quick))
    if cache is not None:
        cache.put(key, (capacity, eff.source))
    return capacity, eff.source


def decide(
    scenario: Scenario,
    *,
    calibration: Calibration | None = None,
    api_sheet: PriceSheet[ApiPriceRow] | None = None,
    gpu_sheet: PriceSheet[GpuPriceRow] | None = None,
    today: dt.date | None = None,
    overrides: Overrides | None = None,
    capacity_method: CapacityMethod = "simulator",
    capacity_cache: CapacityCache | None = None,
) -> Decision:
    """Evaluate every option of the scenario and rank them (`capacity_cache`: share capacities across calls)."""
    api_sheet = api_sheet or load_api_prices()
    gpu_sheet = gpu_sheet or load_gpu_prices()
    over = overrides or Overrides()
    excluded = option_exclusions(
        scenario, api_sheet=api_sheet, gpu_offerings={r.id: r.accelerator_id for r in gpu_sheet.rows},
        model_ids=models().keys(), hardware_ids=accelerators().keys(),
    )
    if len(excluded) == len(scenario.options):
        raise CostmodelError("no option of the scenario can be evaluated: "
                             + "; ".join(f"{name}: {e.reason}" for name, e in excluded.items()))
    workload = scenario.workload
    if over.volume != 1.0:
        workload = _scaled_volume(workload, over.volume)
        scenario = scenario.model_copy(update={"workload": workload})
    today = scenario.evaluation_date(override=today)
    profile = workload.hourly_load_factors() or diurnal_profile(peak_to_mean=workload.peak_to_mean())
    results: dict[str, OptionResult] = {o.name: excluded_result(o, excluded[o.name]) for o in scenario.options
                                        if o.name in excluded}
    for option in scenario.options:
        if option.name in excluded:
            continue
        if isinstance(option, ApiOption):
            results[option.name] = api_result(option, scenario, api_sheet, today=today, api_price_scale=over.api_price)
    apis = [r for r in results.values() if r.kind == "api" and r.excluded_reason is None]
    open_models = {o.name: api_sheet.get(o.price_id).open_model_id for o in scenario.options
                   if isinstance(o, ApiOption) and o.name not in excluded}
    capacities: dict[str, tuple[Capacity, str]] = {}
    for option in scenario.options:
        if isinstance(option, SelfHostOption) and option.name not in excluded:
            capacities[option.name] = self_host_capacity(scenario, option, calibration=calibration,
                                                         efficiency_scale=over.efficiency, method=capacity_method,
                                                         cache=capacity_cache)
            # Break-even against an API serving the same open model when the scenario has one.
            same_model = [a for a in apis if open_models.get(a.name) == option.model]
            reference = _reference_api(same_model) or _reference_api(apis)
            results[option.name] = self_host_result(
                option, scenario, gpu_sheet, capacities[option.name], reference=reference, today=today,
                gpu_price_scale=over.gpu_price,
            )
    for option in scenario.options:
        if isinstance(option, HybridOption) and option.name not in excluded:
            results[option.name] = hybrid_result(
                option, scenario, profile=profile, self_host=results[option.self_host],
                capacity=capacities[option.self_host][0], api=results[option.api],
            )
    ranked = rank_options(tuple(_finite_or_excluded(r) for r in results.values()))
    chosen = ranked[0]
    if chosen.excluded_reason is not None:
        if all(r.excluded_kind == "non_finite_cost" for r in ranked):
            raise CostmodelError("no option has a finite cost per month; check the prices and volumes of every option")
        raise CostmodelError("no option of the scenario is usable: "
                             + "; ".join(f"{r.name}: {r.excluded_reason}" for r in ranked))
    efficiency_sources = sorted({src for _, src in capacities.values()}) or ["no self-host options"]
    return Decision(
        scenario_name=scenario.name,
        options=ranked,
        recommendation=chosen.name,
        recommendation_meets_slo=chosen.meets_slo and not chosen.throttled,
        reasons=_reasons(ranked),
        warnings=scenario_warnings(scenario, ranked, capacities={k: v[0] for k, v in capacities.items()}),
        requests_per_month=workload.requests_per_month(),
        tokens_per_month=workload.tokens_per_month_total(),
        mean_prompt_tokens=workload.mean_prompt_tokens(),
        mean_output_tokens=workload.mean_output_tokens(),
        mean_requests_per_second=workload.mean_requests_per_second(),
        peak_requests_per_second=workload.mean_requests_per_second() * max(profile),
        hourly_profile=tuple(profile),
        efficiency_source="; ".join(efficiency_sources),
        calibration_source=calibration.source if calibration else None,
        as_of=today,
        horizon_months=scenario.horizon_months,
    )


def _finite_or_excluded(result: OptionResult) -> OptionResult:
    """A cost that is not a finite number (a bad price that slipped through) never ranks: it is excluded."""
    if result.excluded_reason is not None or math.isfinite(result.usd_per_month):
        return result
    reason = "its cost is not a finite number; check the prices it uses (price sheet or scenario override)"
    return replace(result, excluded_reason=reason, excluded_kind="non_finite_cost", meets_slo=False,
                   slo_status="misses", slo_reason=reason)


def rank_options(results: tuple[OptionResult, ...]) -> tuple[OptionResult, ...]:
    """Usable options first (SLO-meeting and unthrottled, cheapest first), then the rest; excluded last in
    scenario order. Ties (a hybrid keeping 0 base replicas costs what its API costs) go to the simpler."""
    simplicity = {"api": 0, "self-host": 1, "hybrid": 2}
    usable = [r for r in results if r.excluded_reason is None]
    out = [r for r in results if r.excluded_reason is not None]
    ordered = sorted(usable, key=lambda r: (not r.meets_slo, r.throttled, round(r.usd_per_month, 2), simplicity[r.kind]))
    return tuple(ordered + out)


def _scaled_volume(workload: Workload, factor: float) -> Workload:
    if workload.requests_per_day is not None:
        return workload.model_copy(update={"requests_per_day": workload.requests_per_day * factor})
    assert workload.tokens_per_month is not None
    return workload.model_copy(update={"tokens_per_month": workload.tokens_per_month * factor})


def _reference_api(apis: list[OptionResult]) -> OptionResult | None:
    apis = [a for a in apis if math.isfinite(a.usd_per_mtok)]  # break-even against NaN would be NaN
    meeting = [a for a in apis if a.meets_slo and not a.throttled]
    pool = meeting or apis
    return min(pool, key=lambda a: a.usd_per_mtok) if pool else None


def _reasons(ranked: tuple[OptionResult, ...]) -> tuple[str, ...]:
    chosen = ranked[0]
    reasons = []
    if chosen.meets_slo and not chosen.throttled:
        reasons.append(
            f"{chosen.name} is the cheapest option that meets the SLO: ${chosen.usd_per_month:,.0f}/month "
            f"(${chosen.usd_per_mtok:.3f} per million tokens)."
        )
    else:
        reasons.append(f"No option meets the SLO; {chosen.name} is the cheapest (${chosen.usd_per_month:,.0f}/month) "
                       f"but {chosen.slo_reason}.")
    runner_up = next((r for r in ranked[1:] if r.meets_slo and not r.throttled and r.excluded_reason is None
                      and r.usd_per_month > chosen.usd_per_month * 1.005), None)
    if runner_up is not None and runner_up.usd_per_month > 0:
        saving = 1.0 - chosen.usd_per_month / runner_up.usd_per_month
        reasons.append(f"It costs {saving:.0%} less than the runner-up, {runner_up.name} "
                       f"(${runner_up.usd_per_month:,.0f}/month).")
    if chosen.kind != "api" and chosen.break_even_utilization is not None and chosen.utilization is not None:
        reasons.append(
            f"Its replicas run at {chosen.utilization:.0%} utilization; self-hosting beats {chosen.break_even_against} "
            f"above {chosen.break_even_utilization:.0%}."
        )
    elif chosen.kind == "api":
        volumes = [(r.break_even_tokens_per_month, r.name) for r in ranked
                   if r.kind == "self-host" and r.break_even_tokens_per_month]
        if volumes:
            volume, name = min(volumes)
            reasons.append(f"Self-hosting ({name}) would break even at {volume / 1e9:,.1f}B tokens/month.")
        elif any(r.kind == "self-host" for r in ranked):
            reasons.append("No self-host option breaks even with this API at any volume at these prices.")
    return tuple(reasons)
