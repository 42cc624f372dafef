"""Fleet sizing, hour by hour: replicas for a demand, autoscaled days, warm-up billing, spot overhead.

replicas_h = max(min_replicas, ceil(demand_h / (target_peak_utilization x capacity))), and with N+k spares at
least ceil(demand_h / capacity) + k in every hour with demand (docs/economics.md, "Headroom and redundancy").
The policy itself (its defaults and where each value comes from) is decision/fleet_policy.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from costmodel.decision.fleet_policy import (  # re-exported: tests, the search and the docs import them here
    BATCH_MIN_REPLICAS,
    BATCH_SPARE_REPLICAS,
    BATCH_TARGET_PEAK_UTILIZATION,
    INTERACTIVE_MIN_REPLICAS,
    INTERACTIVE_SPARE_REPLICAS,
    INTERACTIVE_TARGET_PEAK_UTILIZATION,
    MAX_AUTOSCALE_REPLICAS,
    FleetPolicy,
    fleet_policy,
    policy_rule,
)
from costmodel.decision.instances import InstancePacking
from costmodel.decision.results import OptionResult
from costmodel.errors import CostmodelError
from costmodel.scenario import SelfHostOption
from costmodel.units import DAYS_PER_MONTH, HOURS_PER_MONTH, counted

__all__ = ["BATCH_MIN_REPLICAS", "BATCH_SPARE_REPLICAS", "BATCH_TARGET_PEAK_UTILIZATION", "INTERACTIVE_MIN_REPLICAS",
           "INTERACTIVE_SPARE_REPLICAS", "INTERACTIVE_TARGET_PEAK_UTILIZATION", "MAX_AUTOSCALE_REPLICAS",
           "FleetPolicy", "fleet_policy", "policy_rule"]


def replicas_for_demand(*, demand_requests_per_second: float, capacity_requests_per_second: float,
                        target_peak_utilization: float, min_replicas: int, spare_replicas: int = 0) -> int:
    """max(min_replicas, ceil(demand / (target x capacity)), ceil(demand / capacity) + spare) for one hour's
    demand (the spare term only when there is demand)."""
    if capacity_requests_per_second <= 0:
        raise CostmodelError("capacity per replica must be > 0 requests/s (the SLO cannot be met at any load)")
    if not 0 < target_peak_utilization <= 1:
        raise CostmodelError(f"target_peak_utilization must be in (0, 1] (got {target_peak_utilization})")
    needed = math.ceil(demand_requests_per_second / (target_peak_utilization * capacity_requests_per_second) - 1e-12)
    redundant = (math.ceil(demand_requests_per_second / capacity_requests_per_second - 1e-12) + spare_replicas
                 if demand_requests_per_second > 0 else 0)
    return max(min_replicas, needed, redundant)


def replicas_by_hour(*, hourly_requests_per_second: Sequence[float], capacity_requests_per_second: float,
                     target_peak_utilization: float, min_replicas: int, spare_replicas: int = 0) -> tuple[int, ...]:
    """replicas_h for each hour of the day (24 demands in requests/s)."""
    return tuple(replicas_for_demand(demand_requests_per_second=d, capacity_requests_per_second=capacity_requests_per_second,
                                     target_peak_utilization=target_peak_utilization, min_replicas=min_replicas,
                                     spare_replicas=spare_replicas)
                 for d in hourly_requests_per_second)


# Warm-up billing: the GPU price sheet records no billing granularity, so a started replica's warm-up is
# billed as whole hours (ceil(warmup_minutes / 60) hours, at most one since warmup_minutes <= 60).
BILLING_SECONDS = 3_600


def warmup_billed_hours(warmup_minutes: float) -> float:
    """A start's warm-up as billed: ceil(warmup_minutes x 60 / 3,600 s) x 3,600 s, in hours."""
    return math.ceil(warmup_minutes * 60 / BILLING_SECONDS) * BILLING_SECONDS / 3_600


def interrupted_work_seconds(*, ttft_p90_seconds: float, tpot_p90_seconds: float, mean_output_tokens: float) -> float:
    """Replica-time redone per spot interruption: r = (TTFT p90 + E[T_out] x TPOT p90) / 2 (a request is
    interrupted on average half way through; the sequences of a batch share the replica)."""
    return (ttft_p90_seconds + mean_output_tokens * tpot_p90_seconds) / 2.0


def redo_exclusion(result: OptionResult, option: SelfHostOption, *, interruptions_per_replica_hour: float,
                   redo_seconds: float) -> OptionResult | None:
    """The option excluded (this option only; the rest are compared) when it is interrupted on spot and the
    work redone per interruption is not a finite time (an unbounded latency estimate), else None."""
    if interruptions_per_replica_hour == 0 or (math.isfinite(redo_seconds) and redo_seconds >= 0):
        return None
    reason = (f"option '{option.name}': the work redone per spot interruption, (TTFT p90 + output tokens x "
              f"TPOT p90) / 2 = {redo_seconds:g} s, is not a finite time: its latency estimate is unbounded")
    return replace(result, excluded_reason=reason, excluded_kind="non_finite_cost", meets_slo=False,
                   slo_status="misses", slo_reason=reason)


def spot_overhead_replica_hours(*, spot_replica_hours: float, interruptions_per_replica_hour: float,
                                warmup_hours: float, redo_seconds: float) -> float:
    """Replica-hours a day lost to spot interruptions: ρ x spot replica-hours x (w + r): each interruption pays
    a replacement warm-up w and the work in flight redone r (docs/economics.md "Mixed fleets"). Off spot
    (ρ = 0) nothing is redone, whatever r is."""
    if interruptions_per_replica_hour == 0:
        return 0.0
    return spot_replica_hours * interruptions_per_replica_hour * (warmup_hours + redo_seconds / 3_600)


@dataclass(frozen=True, kw_only=True)
class AutoscaledDay:
    """An autoscaled fleet over one day: replicas paid per hour, starts, warm-up and serving GPU-hours."""

    replicas_by_hour: tuple[int, ...]
    starts_per_day: int  # replicas started (each pays its warm-up), the day seen as a cycle
    serving_replica_hours_per_day: int
    warmup_replica_hours_per_day: float
    capped_hours: int  # hours whose demand needs more than max_replicas
    spot_overhead_replica_hours_per_day: float = 0.0  # on a spot offering: interruption warm-ups + work redone
    warmup_hours: float = 0.0  # billed warm-up of one start, ceil(warmup_minutes / 60) h

    def gpu_hours_per_month(self, *, gpus_per_replica: int) -> float:
        """GPU-hours paid a month with GPUs sold singly: (serving + warm-up + spot overhead replica-hours a day)
        x N x D days (`billed_gpu_hours_per_month` with G = 1)."""
        return (self.serving_replica_hours_per_day + self.warmup_replica_hours_per_day
                + self.spot_overhead_replica_hours_per_day) * gpus_per_replica * DAYS_PER_MONTH

    def billed_gpu_hours_per_month(self, *, packing: InstancePacking) -> float:
        """GPU-hours billed a month when each hour's replicas pack into whole instances (decision/instances.py):
        (sum_h instances_h + instance starts x w) x G + spot overhead replica-hours x GPUs billed per replica,
        a day, x D days. Instance starts are the cyclic rises of instances_h (a replica started on an instance
        already running pays no new warm-up)."""
        return billed_gpu_hours_per_day(self.replicas_by_hour, packing=packing, warmup_hours=self.warmup_hours,
                                        overhead_replica_hours=self.spot_overhead_replica_hours_per_day) * DAYS_PER_MONTH


def cyclic_starts(replicas: Sequence[int]) -> int:
    """Replicas (or instances) started in a day seen as a cycle: the sum of the rises between consecutive hours
    (23 -> 0 too)."""
    return sum(max(0, replicas[h] - replicas[h - 1]) for h in range(len(replicas)))


def billed_gpu_hours_per_day(replicas_by_hour: Sequence[int], *, packing: InstancePacking, warmup_hours: float,
                             overhead_replica_hours: float = 0.0) -> float:
    """GPU-hours billed in one day by an hourly fleet packed into whole instances: (sum_h instances_h + cyclic
    instance starts x w) x G + overhead replica-hours x GPUs billed per replica."""
    instances = packing.instances_by_hour(replicas_by_hour)
    return ((sum(instances) + cyclic_starts(instances) * warmup_hours) * packing.gpus_per_instance
            + overhead_replica_hours * packing.billed_gpus_per_replica)


def autoscaled_day(*, hourly_requests_per_second: Sequence[float], capacity_requests_per_second: float,
                   target_peak_utilization: float, min_replicas: int, max_replicas: int,
                   warmup_minutes: float, interruptions_per_replica_hour: float = 0.0,
                   redo_seconds: float = 0.0, spare_replicas: int = 0) -> AutoscaledDay:
    """Replicas follow the hourly demand (replicas_h, clipped to max_replicas); every replica started pays its
    warm-up, billed per hour: starts x ceil(warmup_minutes x 60 / 3,600 s) x 3,600 s / 3,600 replica-hours.
    On spot (interruptions_per_replica_hour > 0) every serving replica-hour is on spot and pays
    `spot_overhead_replica_hours` (the mixed fleet's spot formula with a spot share of 1).

    Starts count the rises between consecutive hours of the cyclic day (hour 23 -> hour 0 included), so a
    steady day starts nothing and a 7-hour nightly window starts its replicas once a day."""
    if min_replicas > max_replicas:
        raise CostmodelError(f"scaling.min_replicas ({min_replicas}) must be <= scaling.max_replicas ({max_replicas})")
    if not 0 <= warmup_minutes <= 60:
        raise CostmodelError(f"scaling.warmup_minutes must be in 0..60 (got {warmup_minutes})")
    if not (math.isfinite(interruptions_per_replica_hour) and interruptions_per_replica_hour >= 0):
        raise CostmodelError("scaling.interruption_rate_per_hour must be finite and >= 0")
    wanted = replicas_by_hour(hourly_requests_per_second=hourly_requests_per_second,
                              capacity_requests_per_second=capacity_requests_per_second,
                              target_peak_utilization=target_peak_utilization, min_replicas=min_replicas,
                              spare_replicas=spare_replicas)
    paid = tuple(min(r, max_replicas) for r in wanted)
    starts = cyclic_starts(paid)
    warmup_hours = warmup_billed_hours(warmup_minutes)
    overhead = spot_overhead_replica_hours(spot_replica_hours=sum(paid),
                                           interruptions_per_replica_hour=interruptions_per_replica_hour,
                                           warmup_hours=warmup_hours, redo_seconds=redo_seconds)
    return AutoscaledDay(replicas_by_hour=paid, starts_per_day=starts, serving_replica_hours_per_day=sum(paid),
                         warmup_replica_hours_per_day=starts * warmup_hours,
                         capped_hours=sum(1 for w, p in zip(wanted, paid, strict=True) if w > p),
                         spot_overhead_replica_hours_per_day=overhead, warmup_hours=warmup_hours)


def spot_interruption_rate(option: SelfHostOption, offering_kind: str | None) -> float:
    """scaling.interruption_rate_per_hour of an autoscaled spot fleet (required: no public rate is bundled);
    0 off spot, where giving one is refused."""
    rate = option.scaling.interruption_rate_per_hour
    if offering_kind == "spot" and rate is None:
        raise CostmodelError(f"option '{option.name}': scaling.interruption_rate_per_hour is required for autoscale "
                             f"on a spot offering ({option.offering}): spot interruptions per replica-hour, measured "
                             "or your provider's figure (no public default is bundled)")
    if offering_kind != "spot" and rate is not None:
        raise CostmodelError(f"option '{option.name}': scaling.interruption_rate_per_hour applies to autoscale only "
                             "on a spot offering; remove it or set offering to a spot row")
    return rate or 0.0


def hourly_ops_usd_per_month(*, ops_usd_per_month: float, ops_usd_per_gpu_month: float,
                             gpu_hours_per_month: float) -> float:
    """Ops = fixed $/month + $/GPU-month x GPU-months paid (GPU-hours / 730.5 h): a fleet that follows the
    day pays the per-GPU part only for the GPU-hours it runs (docs/economics.md "Ops and hosts")."""
    return ops_usd_per_month + ops_usd_per_gpu_month * gpu_hours_per_month / HOURS_PER_MONTH


def fleet_ops_usd_per_month(option: SelfHostOption, *, gpu_hours_per_month: float) -> float:
    """`hourly_ops_usd_per_month` with the option's ops figures."""
    return hourly_ops_usd_per_month(ops_usd_per_month=option.ops_usd_per_month,
                                    ops_usd_per_gpu_month=option.ops_usd_per_gpu_month,
                                    gpu_hours_per_month=gpu_hours_per_month)


def capped_reason(*, max_replicas: int | None, capped_hours: int) -> str:
    """Why an hourly fleet capped by `max_replicas` in `capped_hours` hours of the day misses the SLO: those
    hours cannot serve their demand at the SLO."""
    return (f"max_replicas {max_replicas} is below the replicas needed in {counted(capped_hours, 'hour')} "
            "of the day: raise scaling.max_replicas")
