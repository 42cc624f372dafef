"""A self-host option's month-0 result: its plan (decision/terms.py) costed at the workload's demand.

The stages: the plan (terms, instances, fleet policy, host, ops), the capacity at the SLO (given), the
latency evidence (decision/evidence.py), the fleet and its bill (`plan.plan_cost`), then one `OptionResult`
with the figures every face shows. Sizing and pricing formulas are decision/plan.py's.
"""

from __future__ import annotations

import datetime as dt
import math

from costmodel.decision.economics import diurnal_profile
from costmodel.decision.evidence import (
    LatencyEvidence,
    SloVerdict,
    measured_evidence,
    simulated_evidence,
    slo_verdict,
)
from costmodel.decision.fleet import capped_reason, interrupted_work_seconds, redo_exclusion
from costmodel.decision.measured_capacity import MEASURED_METHOD
from costmodel.decision.plan import (
    OptionPlan,
    PlanCost,
    fixed_cost,
    peak_replicas,
    plan_cost,
    workload_demand,
)
from costmodel.decision.results import CostBreakdown, OptionResult, SloStatus
from costmodel.decision.terms import PlannedOption, option_plan
from costmodel.pricing import GpuPriceRow, PriceSheet
from costmodel.scenario import Scenario, SelfHostOption
from costmodel.serving.analytic import Capacity
from costmodel.units import SECONDS_PER_MONTH, TOKENS_PER_MTOK, counted


def self_host_evidence(option: SelfHostOption, scenario: Scenario,
                       capacity: Capacity) -> tuple[LatencyEvidence, SloVerdict]:
    """The capacity's p90 figures as evidence: measured (a calibrate-endpoint fit of the deployment) or
    simulated with the engine's documented error (decision/evidence.py)."""
    ttft, tpot = capacity.ttft_seconds or None, capacity.tpot_seconds or None
    if capacity.method == MEASURED_METHOD:
        evidence = measured_evidence(ttft_p90_seconds=ttft, tpot_p90_seconds=tpot,
                                     basis="measured: the deployment's calibrate-endpoint step-time model")
    else:
        evidence = simulated_evidence(ttft_p90_seconds=ttft, tpot_p90_seconds=tpot, engine=option.engine)
    return evidence, slo_verdict(evidence, scenario.slo)


def self_host_result(option: SelfHostOption, scenario: Scenario, sheet: PriceSheet[GpuPriceRow],
                     capacity_and_source: tuple[Capacity, str], *, reference: OptionResult | None, today: dt.date,
                     gpu_price_scale: float = 1.0) -> OptionResult:
    """A self-host option's plan (GPU prices x `gpu_price_scale`) sized by its fleet policy from its capacity at
    the SLO and costed by `plan_cost`."""
    capacity, efficiency_source = capacity_and_source
    planned = option_plan(option, scenario, sheet, today=today, gpu_price_scale=gpu_price_scale)
    if not capacity.feasible:
        return _infeasible_result(option, planned, capacity, efficiency_source,
                                  reference=reference.name if reference else None)
    evidence, verdict = self_host_evidence(option, scenario, capacity)
    ttft, tpot = evidence.ttft.point or 0.0, evidence.tpot.point or 0.0
    plan = planned.plan
    demand = workload_demand(scenario.workload, hourly_profile=_profile(scenario))
    redo = interrupted_work_seconds(ttft_p90_seconds=ttft, tpot_p90_seconds=tpot,
                                    mean_output_tokens=demand.mean_output_tokens)
    unbounded = plan.fleet.hourly and plan.interruptions_per_replica_hour > 0 and not (
        math.isfinite(redo) and redo >= 0)
    cost = (fixed_cost(plan, replicas=peak_replicas(plan, demand, capacity_requests_per_second=capacity.requests_per_second))
            if unbounded
            else plan_cost(plan, demand, capacity_requests_per_second=capacity.requests_per_second,
                           ttft_p90_seconds=ttft, tpot_p90_seconds=tpot))
    result = _feasible_result(option, scenario, planned, cost, capacity, efficiency_source,
                              evidence=evidence, verdict=verdict, reference=reference)
    if unbounded:
        excluded = redo_exclusion(result, option, interruptions_per_replica_hour=plan.interruptions_per_replica_hour,
                                  redo_seconds=redo)
        assert excluded is not None
        return excluded
    return result


def _profile(scenario: Scenario) -> tuple[float, ...]:
    workload = scenario.workload
    return workload.hourly_load_factors() or diurnal_profile(peak_to_mean=workload.peak_to_mean())


def _infeasible_result(option: SelfHostOption, planned: PlannedOption, capacity: Capacity, efficiency_source: str, *,
                       reference: str | None) -> OptionResult:
    """No load meets the SLO: shown at one replica's cost, never ranked (decision/feasibility.py)."""
    plan = planned.plan
    one = fixed_cost(plan, replicas=1)
    return OptionResult(
        name=option.name, kind="self-host", model_id=option.model, hardware_id=option.hardware,
        gpus_per_replica=option.gpus_per_replica, usd_per_gpu_hour=plan.usd_per_gpu_hour,
        price_sources=planned.price_sources, efficiency_source=efficiency_source, latency_source="simulated",
        ttft_p90_seconds=capacity.ttft_seconds or None, tpot_p90_seconds=capacity.tpot_seconds or None,
        usd_per_month=one.usd_per_month, usd_per_mtok=math.inf, usd_per_mtok_input=math.inf,
        usd_per_mtok_output=math.inf, meets_slo=False, slo_status="misses",
        slo_reason=f"cannot meet the SLO at any load: {capacity.reason}", gpus=option.gpus_per_replica, replicas=1,
        capacity_requests_per_second=0.0, tokens_per_second_per_replica=0.0,
        breakdown=CostBreakdown(gpu_usd_per_month=one.gpu_usd_per_month, ops_usd_per_month=one.ops_usd_per_month,
                                host_usd_per_month=one.host_usd_per_month),
        instances=one.instances, gpus_billed=one.gpus_billed, gpus_per_instance=plan.packing.gpus_per_instance,
        min_replicas=plan.fleet.min_replicas, target_peak_utilization=plan.fleet.target_peak_utilization,
        fleet_reason=plan.fleet.reason, scaling="fixed", capacity_method=capacity.method,
        break_even_against=reference, notes=planned.notes, ops_usd_per_gpu_month=plan.ops_usd_per_gpu_month,
        engine=option.engine, host_not_counted=planned.host_not_counted, plan=plan,
    )


def _feasible_result(option: SelfHostOption, scenario: Scenario, planned: PlannedOption, cost: PlanCost,
                     capacity: Capacity, efficiency_source: str, *, evidence: LatencyEvidence, verdict: SloVerdict,
                     reference: OptionResult | None) -> OptionResult:
    """The result of a fleet that meets some load: its bill, $/M tokens split by GPU time, fleet and verdict."""
    workload, plan = scenario.workload, planned.plan
    mean = workload.mean_requests_per_second()
    tokens_per_request = workload.mean_tokens_per_request()
    tokens_month, output_month = workload.tokens_per_month_total(), workload.output_tokens_per_month()
    total = cost.usd_per_month
    sized_tokens = mean * tokens_per_request * SECONDS_PER_MONTH  # economics.size_self_host's $/M basis
    input_usd = total * capacity.prefill_time_fraction
    hourly = cost.autoscaled is not None or cost.mixed is not None
    status = _fleet_status(verdict=verdict, cost=cost, plan=plan, evidence_reason=(
        f"{capacity.reason}; sized for the peak hour at {capacity.requests_per_second:.2f} requests/s per replica "
        f"(batch {capacity.batch}); {plan.fleet.reason}"))
    fleet = plan.fleet
    burst = plan.burst
    return OptionResult(
        name=option.name, kind="self-host", model_id=option.model, hardware_id=option.hardware,
        gpus_per_replica=option.gpus_per_replica, usd_per_gpu_hour=plan.usd_per_gpu_hour,
        price_sources=planned.price_sources, efficiency_source=efficiency_source,
        latency_source=evidence.source, latency_basis=evidence.basis,
        ttft_p90_seconds=evidence.ttft.point, tpot_p90_seconds=evidence.tpot.point,
        ttft_p90_seconds_low=evidence.ttft.low, ttft_p90_seconds_high=evidence.ttft.high,
        tpot_p90_seconds_low=evidence.tpot.low, tpot_p90_seconds_high=evidence.tpot.high,
        usd_per_month=total, usd_per_mtok=total / (sized_tokens / 1e6) if sized_tokens > 0 else math.inf,
        usd_per_mtok_input=input_usd / (tokens_month - output_month) * TOKENS_PER_MTOK,
        usd_per_mtok_output=(total - input_usd) / output_month * TOKENS_PER_MTOK,
        meets_slo=status[0], slo_status=status[1], slo_reason=status[2],
        gpus=cost.replicas * option.gpus_per_replica, replicas=cost.replicas,
        utilization=cost.utilization(mean_requests_per_second=mean,
                                     capacity_requests_per_second=capacity.requests_per_second),
        throughput_bound=capacity.throughput_bound, capacity_requests_per_second=capacity.requests_per_second,
        tokens_per_second_per_replica=capacity.requests_per_second * tokens_per_request,
        breakdown=CostBreakdown(gpu_usd_per_month=cost.gpu_usd_per_month, ops_usd_per_month=cost.ops_usd_per_month,
                                host_usd_per_month=cost.host_usd_per_month),
        notes=(f"capacity method: {capacity.method}", *planned.notes, *fleet_notes(plan, cost)),
        latency_owner=capacity.latency_owner, capacity_method=capacity.method,
        replicas_by_hour=cost.replicas_by_hour, gpu_hours_per_month=cost.gpu_hours_per_month,
        instances=cost.instances, gpus_billed=cost.gpus_billed, gpus_per_instance=plan.packing.gpus_per_instance,
        host_not_counted=planned.host_not_counted,
        min_replicas=fleet.floor if hourly else fleet.min_replicas,
        target_peak_utilization=fleet.target_peak_utilization, fleet_reason=fleet.reason,
        scaling=fleet.scaling if hourly else "fixed", ops_usd_per_gpu_month=plan.ops_usd_per_gpu_month,
        engine=option.engine, spare_replicas=fleet.spare_replicas,
        base_replicas=cost.base_replicas, burst_replicas_by_hour=cost.burst_replicas_by_hour,
        burst_usd_per_gpu_hour=burst.on_demand_usd_per_gpu_hour if burst and cost.mixed else None,
        burst_spot_usd_per_gpu_hour=burst.spot_usd_per_gpu_hour if burst and cost.mixed else None,
        burst_gpus_per_instance=burst.on_demand.gpus_per_instance if burst and cost.mixed else None,
        burst_spot_gpus_per_instance=(burst.spot.gpus_per_instance if burst and cost.mixed and fleet.spot_share > 0
                                      else None),
        break_even_against=reference.name if reference is not None else None, plan=plan,
    )


def _fleet_status(*, verdict: SloVerdict, cost: PlanCost, plan: OptionPlan,
                  evidence_reason: str) -> tuple[bool, SloStatus, str]:
    """(meets_slo, slo_status, slo_reason): the evidence's verdict, unless max_replicas caps some hours."""
    if cost.capped_hours:
        return False, "misses", capped_reason(max_replicas=plan.fleet.max_replicas_set, capped_hours=cost.capped_hours)
    return verdict.meets_slo, verdict.status, verdict.reason + (f"; {evidence_reason}" if evidence_reason else "")


def fleet_notes(plan: OptionPlan, cost: PlanCost) -> tuple[str, ...]:
    """How an hourly fleet's bill was found, for people (nothing for a fixed fleet)."""
    fleet = plan.fleet
    if cost.autoscaled is not None:
        day = cost.autoscaled
        note = (f"autoscaled: {day.serving_replica_hours_per_day} replica-hours a day, {counted(day.starts_per_day, 'start')} "
                f"a day paying {fleet.warmup_minutes:g} min warm-up each, billed per hour (the sheet records no finer "
                "billing granularity)")
        rate = plan.interruptions_per_replica_hour
        if rate > 0:
            note += (f"; on spot at {rate:g} interruptions per replica-hour "
                     f"({day.spot_overhead_replica_hours_per_day:.2f} replica-hours a day redone or warming up)")
        return (note,)
    if cost.mixed is not None:
        mixed = cost.mixed
        base_why = ("set in scaling.base_replicas" if fleet.base_replicas is not None
                    else "the cheapest base for this day")
        spot = (f"; {fleet.spot_share:.0%} of the burst on spot at {fleet.interruptions_per_replica_hour:g} "
                f"interruptions per replica-hour ({mixed.spot_overhead_replica_hours_per_day:.2f} replica-hours a day "
                "redone or warming up)" if fleet.spot_share > 0 else "")
        return (f"mixed: {counted(mixed.base_replicas, 'base replica')} 24/7 ({base_why}) plus an on-demand burst of "
                f"{mixed.burst_serving_replica_hours_per_day} replica-hours a day, "
                f"{counted(mixed.burst_starts_per_day, 'start')} paying {fleet.warmup_minutes:g} min warm-up each, billed per hour{spot}",)
    return ()
