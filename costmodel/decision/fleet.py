"""Fleet sizing policy: headroom (target peak utilization) and redundancy (a replica floor), hour by hour.

replicas_h = max(min_replicas, ceil(demand_h / (target_peak_utilization x capacity))) (docs/economics.md,
"Headroom and redundancy"). Defaults depend on whether the workload is interactive (a workload is
interactive unless `batch_allowed`):
- interactive: target 0.8, i.e. 20% headroom, the middle of the "keep ~15-20% headroom" rule this tool
  already warns about (decision/warnings.py), and min_replicas 2 (N+1: one replica can fail or be
  drained for an upgrade while the other keeps serving);
- batch: target 1.0 and min_replicas 1 (a batch job can wait out a restart; results are due within 24 h).
An option's own fields win over the scenario's `fleet:` section, which wins over these defaults.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from costmodel.errors import CostmodelError
from costmodel.scenario import Scenario, SelfHostOption

INTERACTIVE_TARGET_PEAK_UTILIZATION = 0.8
BATCH_TARGET_PEAK_UTILIZATION = 1.0
INTERACTIVE_MIN_REPLICAS = 2
BATCH_MIN_REPLICAS = 1


@dataclass(frozen=True, kw_only=True)
class ResolvedFleetPolicy:
    """The resolved policy of one self-host option, with where each value comes from."""

    target_peak_utilization: float
    min_replicas: int
    reason: str  # for people: which value came from where


def fleet_policy(option: SelfHostOption, scenario: Scenario) -> ResolvedFleetPolicy:
    """The option's headroom and replica floor: its own fields, else the scenario's `fleet:`, else defaults."""
    batch = scenario.workload.batch_allowed
    default_target = BATCH_TARGET_PEAK_UTILIZATION if batch else INTERACTIVE_TARGET_PEAK_UTILIZATION
    default_min = BATCH_MIN_REPLICAS if batch else INTERACTIVE_MIN_REPLICAS
    why_default = ("default for a batch workload (batch_allowed)" if batch
                   else "default for an interactive workload (batch_allowed is false)")

    def pick(own: float | int | None, fleet: float | int | None) -> tuple[float | int | None, str]:
        if own is not None:
            return own, "set on the option"
        if fleet is not None:
            return fleet, "set in the scenario's fleet section"
        return None, why_default

    target, target_why = pick(option.target_peak_utilization, scenario.fleet.target_peak_utilization)
    floor, floor_why = pick(option.min_replicas, scenario.fleet.min_replicas)
    target_value = float(target) if target is not None else default_target
    floor_value = int(floor) if floor is not None else default_min
    redundancy = " (N+1)" if floor_value == 2 else ""
    sizing = f"peak hour at {target_value:.0%} of capacity at the SLO, at least {floor_value} replica(s){redundancy}"
    reason = (f"{sizing}: {target_why}" if target_why == floor_why
              else f"{sizing}: target {target_why}, floor {floor_why}")
    return ResolvedFleetPolicy(target_peak_utilization=target_value, min_replicas=floor_value, reason=reason)


def replicas_for_demand(*, demand_requests_per_second: float, capacity_requests_per_second: float,
                        target_peak_utilization: float, min_replicas: int) -> int:
    """max(min_replicas, ceil(demand / (target x capacity))) for one hour's demand."""
    if capacity_requests_per_second <= 0:
        raise CostmodelError("capacity per replica must be > 0 requests/s (the SLO cannot be met at any load)")
    if not 0 < target_peak_utilization <= 1:
        raise CostmodelError(f"target_peak_utilization must be in (0, 1] (got {target_peak_utilization})")
    needed = math.ceil(demand_requests_per_second / (target_peak_utilization * capacity_requests_per_second) - 1e-12)
    return max(min_replicas, needed)


def replicas_by_hour(*, hourly_requests_per_second: Sequence[float], capacity_requests_per_second: float,
                     target_peak_utilization: float, min_replicas: int) -> tuple[int, ...]:
    """replicas_h for each hour of the day (24 demands in requests/s)."""
    return tuple(replicas_for_demand(demand_requests_per_second=d, capacity_requests_per_second=capacity_requests_per_second,
                                     target_peak_utilization=target_peak_utilization, min_replicas=min_replicas)
                 for d in hourly_requests_per_second)
