"""A hybrid option: base replicas of a self-host option's plan, each hour's overflow to an API option.

The base count minimizes $/month over the day's load-duration curve (decision/plan.py `hybrid_cost`, on
`economics.plan_hybrid`); the result carries the base's figures where it keeps one, the API's otherwise.
"""

from __future__ import annotations

from costmodel.decision.evidence import USABLE_STATUSES, weakest_status
from costmodel.decision.instances import InstancePacking
from costmodel.decision.plan import HYBRID_TARGET_PEAK_UTILIZATION, fixed_cost, hybrid_base_floor, hybrid_cost
from costmodel.decision.results import CostBreakdown, OptionResult, SloStatus
from costmodel.scenario import HybridOption, Scenario
from costmodel.serving.analytic import Capacity
from costmodel.units import HOURS_PER_MONTH, TOKENS_PER_MTOK, counted


def hybrid_slo_status(*, base_replicas: int, overflow_fraction: float, self_host_status: SloStatus,
                      api_status: SloStatus, base_feasible: bool) -> SloStatus:
    """The weakest status of the parts that serve (the base when kept, the API when it takes any request); a
    kept base that meets no load misses."""
    if not base_feasible and base_replicas:
        return "misses"
    parts = ((self_host_status,) if base_replicas else ()) + (
        (api_status,) if overflow_fraction > 0 or not base_replicas else ())
    return weakest_status(parts)


def _fleet_reason(*, floor: int, self_host: str, api: str) -> str:
    keeps = f", 0 or at least {counted(floor, 'replica')} ({self_host}'s floor)" if floor > 1 else ""
    return (f"base at 100% of capacity at the SLO{keeps}, no spare replica: bursts and a replica down overflow "
            f"to {api}")


def hybrid_result(option: HybridOption, scenario: Scenario, *, profile: tuple[float, ...], self_host: OptionResult,
                  capacity: Capacity, api: OptionResult) -> OptionResult:
    """Base replicas of the self-host option, overflow to the API, base count minimizing $/month."""
    workload = scenario.workload
    assert self_host.usd_per_gpu_hour is not None and self_host.gpus_per_replica is not None
    assert api.api_usd_per_request is not None and self_host.plan is not None
    own = self_host.plan
    ops_per_gpu = own.ops_usd_per_gpu_month
    target = HYBRID_TARGET_PEAK_UTILIZATION
    packing = InstancePacking(gpus_per_replica=self_host.gpus_per_replica, gpus_per_instance=own.packing.gpus_per_instance)
    plan = hybrid_cost(own, mean_requests_per_second=workload.mean_requests_per_second(), hourly_profile=profile,
                       capacity_requests_per_second=capacity.requests_per_second if capacity.feasible else 0.0,
                       api_usd_per_request=api.api_usd_per_request,
                       max_base_replicas=self_host.replicas if capacity.feasible else 0)
    base = fixed_cost(own, replicas=plan.base_replicas)  # the base's bill, as a fixed fleet of the same plan
    status = hybrid_slo_status(base_replicas=plan.base_replicas, overflow_fraction=plan.overflow_fraction,
                               self_host_status=self_host.slo_status, api_status=api.slo_status,
                               base_feasible=capacity.feasible)
    meets = status in USABLE_STATUSES
    shown = self_host if plan.base_replicas else api  # whose p90 figures and band the row shows
    serve = "serves" if plan.base_replicas == 1 else "serve"
    reason = (f"{counted(plan.base_replicas, 'base replica')} of {self_host.name} {serve} {1 - plan.overflow_fraction:.0%} of "
              f"requests; the rest overflow to {api.name} ({api.slo_reason})")
    tokens_month = workload.tokens_per_month_total()
    return OptionResult(
        name=option.name, kind="hybrid", usd_per_month=plan.usd_per_month,
        usd_per_mtok=plan.usd_per_month / tokens_month * TOKENS_PER_MTOK,
        usd_per_mtok_input=float("nan"), usd_per_mtok_output=float("nan"), meets_slo=meets,
        slo_status=status, latency_source=shown.latency_source, slo_reason=reason,
        ttft_p90_seconds=shown.ttft_p90_seconds, tpot_p90_seconds=shown.tpot_p90_seconds,
        ttft_p90_seconds_low=shown.ttft_p90_seconds_low, ttft_p90_seconds_high=shown.ttft_p90_seconds_high,
        tpot_p90_seconds_low=shown.tpot_p90_seconds_low, tpot_p90_seconds_high=shown.tpot_p90_seconds_high,
        latency_basis=shown.latency_basis, engine=self_host.engine,
        gpus=plan.base_replicas * self_host.gpus_per_replica, replicas=plan.base_replicas,
        utilization=plan.utilization * target if plan.base_replicas else None,
        throttled=api.throttled and plan.overflow_fraction > 0, retired=api.retired,
        capacity_requests_per_second=capacity.requests_per_second if capacity.feasible else None,
        tokens_per_second_per_replica=self_host.tokens_per_second_per_replica,
        breakdown=CostBreakdown(gpu_usd_per_month=base.gpu_usd_per_month, api_usd_per_month=plan.api_usd_per_month,
                                ops_usd_per_month=base.ops_usd_per_month if plan.base_replicas else 0.0,
                                host_usd_per_month=base.host_usd_per_month),
        instances=packing.instances(plan.base_replicas), gpus_billed=packing.gpus_billed(plan.base_replicas),
        gpus_per_instance=packing.gpus_per_instance,
        host_not_counted=self_host.host_not_counted and plan.base_replicas > 0,
        price_sources=self_host.price_sources + api.price_sources,
        notes=(f"overflow to the API: {plan.overflow_fraction:.1%} of requests" if plan.base_replicas else
               f"no base replica pays off: every request goes to {api.name}",),
        model_id=self_host.model_id, hardware_id=self_host.hardware_id, gpus_per_replica=self_host.gpus_per_replica,
        usd_per_gpu_hour=self_host.usd_per_gpu_hour, api_usd_per_request=api.api_usd_per_request,
        priced_via_batch_api=api.priced_via_batch_api and plan.overflow_fraction > 0,
        # The plan may keep no base replica (the API takes every request): the hybrid's floor is 0.
        min_replicas=0, target_peak_utilization=target,
        fleet_reason=_fleet_reason(floor=hybrid_base_floor(own), self_host=self_host.name, api=api.name), scaling="fixed", replicas_by_hour=(plan.base_replicas,) * 24,
        gpu_hours_per_month=packing.gpus_billed(plan.base_replicas) * HOURS_PER_MONTH,
        ops_usd_per_gpu_month=ops_per_gpu,
    )
