"""One costing function: a self-host option's plan, and what it costs at a demand.

An `OptionPlan` holds everything a self-host option's bill depends on besides demand and capacity: the
offering's terms (all-in $/GPU-hour, host share, commitment term), its instances (decision/instances.py), the
fleet policy (decision/fleet_policy.py), a mixed fleet's burst terms, and ops. It is built once per option
(decision/terms.py `option_plan`) and `plan_cost` prices it at a demand and a capacity per replica at the SLO.
`decide` (month 0), the horizon (every month, and a reserved base held), the volume sweep and sensitivity
(scaled inputs), the search and the hybrid's base all call it, so they cost the same plan the same way
(docs/economics.md):
- fixed: replicas = max(m, ceil(peak / (t x capacity)), ceil(peak / capacity) + spare), whole instances billed
  all month: GPU $ = GPUs billed x c x 730.5 h, ops = fixed + $/GPU-month x GPUs billed;
- autoscale: decision/fleet.py `autoscaled_day` on the hourly demand; GPU $ = GPU-hours billed x c;
- mixed: decision/mixed.py `mixed_day` (a fixed base, the cheapest unless pinned, plus the burst);
- an hourly fleet's ops = fixed + $/GPU-month x GPU-hours / 730.5 h;
- no load meets the SLO (capacity 0): one replica, all month (what such an option is shown to cost).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from costmodel.decision.economics import HybridPlan, fixed_fleet_usd_per_month, plan_hybrid
from costmodel.decision.fleet import (
    AutoscaledDay,
    autoscaled_day,
    hourly_ops_usd_per_month,
    interrupted_work_seconds,
    replicas_for_demand,
)
from costmodel.decision.fleet_policy import FleetPolicy
from costmodel.decision.instances import InstancePacking
from costmodel.decision.mixed import MixedDay, MixedPackings, mixed_day
from costmodel.scenario import Workload
from costmodel.units import DAYS_PER_MONTH, HOURS_PER_MONTH


@dataclass(frozen=True, kw_only=True)
class BurstTerms:
    """A mixed fleet's burst: on-demand and spot $/GPU-hour (decision-scaled) and their instances."""

    on_demand_usd_per_gpu_hour: float
    spot_usd_per_gpu_hour: float | None  # None: no spot share
    on_demand: InstancePacking
    spot: InstancePacking


@dataclass(frozen=True, kw_only=True)
class OptionPlan:
    """What a self-host option pays for, independent of demand and capacity (module docstring)."""

    name: str
    gpus_per_replica: int  # N
    usd_per_gpu_hour: float  # all-in: the GPU and, for owned GPUs, its host server's share
    host_usd_per_gpu_hour: float  # the host server's share inside usd_per_gpu_hour (0: rented or not counted)
    packing: InstancePacking  # the offering's instances (a mixed fleet's base)
    fleet: FleetPolicy
    ops_usd_per_month: float  # fixed
    ops_usd_per_gpu_month: float  # per GPU billed (hourly fleets: per GPU-month paid)
    offering_kind: str | None = None  # "on-demand" | "reserved" | "spot" | "owned"; None: the option's own price
    term_months: int | None = None  # a reserved row's commitment term (decision/horizon.py)
    interruptions_per_replica_hour: float = 0.0  # spot interruptions that apply (autoscale on spot, mixed spot share)
    burst: BurstTerms | None = None  # mixed fleets only

    def packings(self) -> MixedPackings:
        """The base's and the burst's instances (the base's everywhere without a burst)."""
        if self.burst is None:
            return MixedPackings(base=self.packing, on_demand=self.packing, spot=self.packing)
        return MixedPackings(base=self.packing, on_demand=self.burst.on_demand, spot=self.burst.spot)


@dataclass(frozen=True, kw_only=True)
class Demand:
    """The demand a plan is costed at: requests/s each hour, the sizing peak, and the output length (the work a
    spot interruption redoes)."""

    mean_requests_per_second: float
    peak_requests_per_second: float
    hourly_requests_per_second: tuple[float, ...]
    mean_output_tokens: float


def workload_demand(workload: Workload, *, hourly_profile: Sequence[float]) -> Demand:
    """A workload's demand: mean x the day's 24 factors (mean 1), its busiest hour, its mean output length."""
    mean = workload.mean_requests_per_second()
    return Demand(mean_requests_per_second=mean, peak_requests_per_second=workload.peak_requests_per_second(),
                  hourly_requests_per_second=tuple(mean * w for w in hourly_profile),
                  mean_output_tokens=workload.mean_output_tokens())


@dataclass(frozen=True, kw_only=True)
class PlanCost:
    """A plan's monthly bill at one demand: the fleet, GPU (host share included), ops."""

    replicas_by_hour: tuple[int, ...]  # replicas paid each hour (a fixed fleet: the peak's, all day)
    instances: int  # whole instances billed (an hourly fleet: the busiest hour's; mixed: base + burst)
    gpus_billed: int  # instances x GPUs per instance
    gpu_hours_per_month: float  # GPU-hours billed
    gpu_usd_per_month: float  # GPU-hours x $/GPU-hour (all-in: host share included)
    host_usd_per_month: float  # of gpu_usd_per_month, the host servers' share (owned GPUs)
    ops_usd_per_month: float
    capped_hours: int = 0  # hours whose demand needs more than scaling.max_replicas (they miss the SLO)
    base_replicas: int | None = None  # mixed: the fixed base
    burst_replicas_by_hour: tuple[int, ...] | None = None  # mixed
    autoscaled: AutoscaledDay | None = None  # the day behind an autoscaled bill, for its notes
    mixed: MixedDay | None = None  # the day behind a mixed bill

    @property
    def usd_per_month(self) -> float:
        """GPU $ + ops $ a month."""
        return self.gpu_usd_per_month + self.ops_usd_per_month

    @property
    def replicas(self) -> int:
        """Replicas in the busiest hour."""
        return max(self.replicas_by_hour)

    def utilization(self, *, mean_requests_per_second: float, capacity_requests_per_second: float) -> float | None:
        """Mean demand / the mean paid replicas' capacity at the SLO (None when nothing is paid)."""
        mean_paid = sum(self.replicas_by_hour) / len(self.replicas_by_hour)
        return mean_requests_per_second / (mean_paid * capacity_requests_per_second) if mean_paid > 0 else None


def plan_cost(plan: OptionPlan, demand: Demand, *, capacity_requests_per_second: float, ttft_p90_seconds: float = 0.0,
              tpot_p90_seconds: float = 0.0, gpu_price_scale: float = 1.0,
              base_replicas: int | None = None) -> PlanCost:
    """The plan's bill at `demand` with `capacity_requests_per_second` per replica at the SLO (module docstring);
    `gpu_price_scale` multiplies every $/GPU-hour; `base_replicas` pins a mixed fleet's base (a reserved base
    still committed, decision/horizon.py). The p90 figures size the work a spot interruption redoes."""
    if capacity_requests_per_second <= 0 or plan.fleet.scaling == "fixed":
        replicas = 1 if capacity_requests_per_second <= 0 else peak_replicas(
            plan, demand, capacity_requests_per_second=capacity_requests_per_second)
        return fixed_cost(plan, replicas=replicas, gpu_price_scale=gpu_price_scale)
    redo_seconds = interrupted_work_seconds(ttft_p90_seconds=ttft_p90_seconds, tpot_p90_seconds=tpot_p90_seconds,
                                            mean_output_tokens=demand.mean_output_tokens)
    if plan.interruptions_per_replica_hour == 0:
        redo_seconds = 0.0  # nothing is redone off spot
    if plan.fleet.scaling == "mixed":
        return _mixed_cost(plan, demand, capacity_requests_per_second=capacity_requests_per_second,
                           redo_seconds=redo_seconds, gpu_price_scale=gpu_price_scale, base_replicas=base_replicas)
    return _autoscaled_cost(plan, demand, capacity_requests_per_second=capacity_requests_per_second,
                            redo_seconds=redo_seconds, gpu_price_scale=gpu_price_scale)


def peak_replicas(plan: OptionPlan, demand: Demand, *, capacity_requests_per_second: float) -> int:
    """A fixed fleet's replicas: the policy's count for the peak hour (decision/fleet.py `replicas_for_demand`)."""
    return replicas_for_demand(demand_requests_per_second=demand.peak_requests_per_second,
                               capacity_requests_per_second=capacity_requests_per_second,
                               target_peak_utilization=plan.fleet.target_peak_utilization,
                               min_replicas=plan.fleet.min_replicas, spare_replicas=plan.fleet.spare_replicas)


def fixed_cost(plan: OptionPlan, *, replicas: int, gpu_price_scale: float = 1.0) -> PlanCost:
    """`replicas` paid all month in whole instances (economics.size_self_host's bill)."""
    gpus_billed = plan.packing.gpus_billed(replicas)
    gpu_usd, ops_usd = fixed_fleet_usd_per_month(gpus_billed=gpus_billed,
                                                 usd_per_gpu_hour=plan.usd_per_gpu_hour * gpu_price_scale,
                                                 ops_usd_per_month=plan.ops_usd_per_month,
                                                 ops_usd_per_gpu_month=plan.ops_usd_per_gpu_month)
    return PlanCost(
        replicas_by_hour=(replicas,) * 24, instances=plan.packing.instances(replicas), gpus_billed=gpus_billed,
        gpu_hours_per_month=gpus_billed * HOURS_PER_MONTH, gpu_usd_per_month=gpu_usd,
        host_usd_per_month=_host_usd(plan, replicas=replicas, gpu_price_scale=gpu_price_scale),
        ops_usd_per_month=ops_usd)


def _host_usd(plan: OptionPlan, *, replicas: int, gpu_price_scale: float) -> float:
    """The host servers' share of the GPU line: host $/GPU-hour x the owned replicas' GPUs x 730.5 h."""
    if plan.host_usd_per_gpu_hour == 0:
        return 0.0
    return plan.host_usd_per_gpu_hour * gpu_price_scale * replicas * plan.gpus_per_replica * HOURS_PER_MONTH


def _hourly_ops(plan: OptionPlan, *, gpu_hours_per_month: float) -> float:
    return hourly_ops_usd_per_month(ops_usd_per_month=plan.ops_usd_per_month,
                                    ops_usd_per_gpu_month=plan.ops_usd_per_gpu_month,
                                    gpu_hours_per_month=gpu_hours_per_month)


def _autoscaled_cost(plan: OptionPlan, demand: Demand, *, capacity_requests_per_second: float, redo_seconds: float,
                     gpu_price_scale: float) -> PlanCost:
    fleet = plan.fleet
    day = autoscaled_day(hourly_requests_per_second=demand.hourly_requests_per_second,
                         capacity_requests_per_second=capacity_requests_per_second,
                         target_peak_utilization=fleet.target_peak_utilization, min_replicas=fleet.floor,
                         max_replicas=fleet.max_replicas, warmup_minutes=fleet.warmup_minutes,
                         interruptions_per_replica_hour=plan.interruptions_per_replica_hour,
                         redo_seconds=redo_seconds, spare_replicas=fleet.spare_replicas)
    gpu_hours = day.billed_gpu_hours_per_month(packing=plan.packing)
    instances = max(plan.packing.instances_by_hour(day.replicas_by_hour))
    return PlanCost(replicas_by_hour=day.replicas_by_hour, instances=instances,
                    gpus_billed=instances * plan.packing.gpus_per_instance, gpu_hours_per_month=gpu_hours,
                    gpu_usd_per_month=gpu_hours * (plan.usd_per_gpu_hour * gpu_price_scale),
                    host_usd_per_month=_host_usd(plan, replicas=max(day.replicas_by_hour),
                                                 gpu_price_scale=gpu_price_scale),
                    ops_usd_per_month=_hourly_ops(plan, gpu_hours_per_month=gpu_hours),
                    capped_hours=day.capped_hours, autoscaled=day)


def _mixed_cost(plan: OptionPlan, demand: Demand, *, capacity_requests_per_second: float, redo_seconds: float,
                gpu_price_scale: float, base_replicas: int | None) -> PlanCost:
    fleet, burst = plan.fleet, plan.burst
    assert burst is not None  # built with the plan of a mixed option (decision/terms.py)
    packings = plan.packings()
    day = mixed_day(hourly_requests_per_second=demand.hourly_requests_per_second,
                    capacity_requests_per_second=capacity_requests_per_second,
                    target_peak_utilization=fleet.target_peak_utilization, min_replicas=fleet.floor,
                    max_replicas=fleet.max_replicas, warmup_minutes=fleet.warmup_minutes,
                    base_usd_per_gpu_hour=plan.usd_per_gpu_hour * gpu_price_scale,
                    on_demand_usd_per_gpu_hour=burst.on_demand_usd_per_gpu_hour * gpu_price_scale,
                    spot_usd_per_gpu_hour=(burst.spot_usd_per_gpu_hour or 0.0) * gpu_price_scale,
                    spot_share=fleet.spot_share, interruptions_per_replica_hour=plan.interruptions_per_replica_hour,
                    redo_seconds=redo_seconds,
                    base_replicas=base_replicas if base_replicas is not None else fleet.base_replicas,
                    spare_replicas=fleet.spare_replicas, packings=packings)
    gpu_hours = day.billed_gpu_hours_per_day * DAYS_PER_MONTH
    burst_gpus = max((i * packings.on_demand.gpus_per_instance for i in day.burst_instances_by_hour), default=0)
    return PlanCost(
        replicas_by_hour=day.replicas_by_hour,
        instances=day.base_instances + max(day.burst_instances_by_hour, default=0),
        gpus_billed=day.base_instances * packings.base.gpus_per_instance + burst_gpus, gpu_hours_per_month=gpu_hours,
        gpu_usd_per_month=day.usd_per_day * DAYS_PER_MONTH,
        host_usd_per_month=_host_usd(plan, replicas=day.base_replicas, gpu_price_scale=gpu_price_scale),
        ops_usd_per_month=_hourly_ops(plan, gpu_hours_per_month=gpu_hours),
        capped_hours=day.capped_hours, base_replicas=day.base_replicas,
        burst_replicas_by_hour=day.burst_replicas_by_hour, mixed=day)


def committed_usd_per_month(plan: OptionPlan, *, replicas: int, gpu_price_scale: float = 1.0) -> float:
    """What `replicas` committed replicas cost a month whether used or not: GPUs billed x c x 730.5 h."""
    return plan.packing.gpus_billed(replicas) * (plan.usd_per_gpu_hour * gpu_price_scale * HOURS_PER_MONTH)


# The hybrid keeps its base at full capacity at the SLO with no spare: the API overflow absorbs the burst and a
# replica down (docs/economics.md, "Hybrid").
HYBRID_TARGET_PEAK_UTILIZATION = 1.0


def hybrid_base_floor(plan: OptionPlan) -> int:
    """The fewest base replicas a hybrid keeps when it keeps any (the self-host plan's floor, at least 1); it may
    also keep none, so the hybrid itself has no replica floor."""
    return plan.fleet.floor or 1


def hybrid_cost(plan: OptionPlan, *, mean_requests_per_second: float, hourly_profile: Sequence[float],
                capacity_requests_per_second: float, api_usd_per_request: float, max_base_replicas: int,
                gpu_price_scale: float = 1.0) -> HybridPlan:
    """A hybrid on this self-host plan: base replicas billed by whole instance at the plan's $/GPU-hour and
    per-GPU ops, its fixed ops, the rest of each hour to the API (`economics.plan_hybrid`); the base floor is
    the plan's (at least 1), its ceiling the self-host fleet's busiest hour (`max_base_replicas`)."""
    n = plan.gpus_per_replica
    usd_per_gpu_hour = plan.usd_per_gpu_hour * gpu_price_scale
    packing = InstancePacking(gpus_per_replica=n, gpus_per_instance=plan.packing.gpus_per_instance)
    capacity = capacity_requests_per_second * HYBRID_TARGET_PEAK_UTILIZATION
    return plan_hybrid(
        mean_requests_per_second=mean_requests_per_second, hourly_profile=hourly_profile,
        capacity_requests_per_second=capacity if capacity > 0 and math.isfinite(capacity) else 0.0,
        min_base_replicas=hybrid_base_floor(plan),
        replica_usd_per_month=n * usd_per_gpu_hour * HOURS_PER_MONTH + n * plan.ops_usd_per_gpu_month,
        ops_usd_per_month=plan.ops_usd_per_month, api_usd_per_request=api_usd_per_request,
        max_base_replicas=max_base_replicas, packing=packing,
        usd_per_gpu_month=usd_per_gpu_hour * HOURS_PER_MONTH + plan.ops_usd_per_gpu_month,
    )
