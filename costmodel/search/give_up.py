"""When the search stops a capacity search early: once its capacity provably cannot put any queued candidate that
shares it into the top K (serving/capacity.py `give_up`).

A capacity search brackets the capacity: after the saturation run it lies below the saturation rate, and below
each rate that failed after it. At an upper bound u on the capacity, a candidate costs at least its $/month
at u under the decision's own sizing rule (decision/fleet.py `replicas_for_demand`, monotone in the capacity):
fixed, R(peak, u) replicas all month; autoscale and mixed, sum over the day's hours of min(max_replicas,
R(demand_h, u)) replica-hours, each at the lowest price one of its GPU-hours pays on the ranked basis (a reserved
term past the horizon at max(1, T / H) x its price, search/cost_bound.py), plus the fixed ops: a lower bound of
the cost the search ranks by (decision/commitment.py), compared with the K-th row's. R counts the fleet policy's headroom and N+k spares, which the screen's bound leaves out, so it
is tighter than the screen's and still a lower bound (instance packing, warm-up and an owned GPU's host only
add). When every queued candidate sharing the capacity costs more than the K-th cheapest SLO-feasible row
simulated so far (+ the tie, search/prune.py) at u, none can enter the top K: the wave rule would prune each
of them at that capacity, so the search stops there and they leave the queue (`NotNeeded`).

Whether a capacity is given up depends only on the last bound its search was asked about, which the result
carries (`upper_bound_requests_per_second`), so a simulation started ahead under an older K-th cost (a pool or
a cluster), or a cached capacity, is judged after the fact by the same test: every executor simulates and
returns the same set.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from costmodel.decision.fleet import fleet_policy, replicas_for_demand
from costmodel.scenario import Scenario
from costmodel.search.cost_bound import hourly_demand_requests_per_second
from costmodel.search.screen import Screened
from costmodel.units import DAYS_PER_MONTH, HOURS_PER_MONTH


@dataclass(frozen=True, kw_only=True)
class FleetTerms:
    """The scenario's demand and one scaling mode's fleet policy, as the decision sizes a searched option."""

    hourly: bool
    peak_requests_per_second: float
    hourly_requests_per_second: tuple[float, ...]
    target_peak_utilization: float
    min_replicas: int  # the policy's floor for this scaling (fixed: min_replicas; hourly: `FleetPolicy.floor`)
    spare_replicas: int
    max_replicas: int


def fleet_terms(scenario: Scenario, item: Screened) -> FleetTerms:
    """The terms the decision sizes this candidate's fleet with (decision/fleet_policy.py)."""
    policy = fleet_policy(item.candidate.option(name="search"), scenario)
    return FleetTerms(hourly=policy.hourly, peak_requests_per_second=scenario.workload.peak_requests_per_second(),
                      hourly_requests_per_second=hourly_demand_requests_per_second(scenario),
                      target_peak_utilization=policy.target_peak_utilization, min_replicas=policy.floor,
                      spare_replicas=policy.spare_replicas, max_replicas=policy.max_replicas)


@dataclass(frozen=True, kw_only=True)
class CandidateBound:
    """One candidate's $/month lower bound as a function of an upper bound on its capacity (module docstring)."""

    gpus_per_replica: int
    usd_per_gpu_hour: float  # the lowest price one of its GPU-hours pays, per-GPU ops included
    ops_usd_per_month: float
    capacity_upper_requests_per_second: float  # the screen's
    terms: FleetTerms

    def replicas(self, demand_requests_per_second: float, capacity_upper_requests_per_second: float) -> int:
        t = self.terms
        return replicas_for_demand(demand_requests_per_second=demand_requests_per_second,
                                   capacity_requests_per_second=capacity_upper_requests_per_second,
                                   target_peak_utilization=t.target_peak_utilization, min_replicas=t.min_replicas,
                                   spare_replicas=t.spare_replicas)

    def usd_per_month_lower(self, capacity_upper_requests_per_second: float) -> float:
        """$/month at least, with the capacity below `capacity_upper_requests_per_second` (and the screen's)."""
        u = min(capacity_upper_requests_per_second, self.capacity_upper_requests_per_second)
        if not u > 0:
            return math.inf  # no load meets the SLO: never SLO-feasible, so never in the top K
        t = self.terms
        gpu_usd = self.gpus_per_replica * self.usd_per_gpu_hour
        if t.hourly:
            hours = sum(min(t.max_replicas, self.replicas(d, u)) for d in t.hourly_requests_per_second)
            return hours * gpu_usd * DAYS_PER_MONTH + self.ops_usd_per_month
        return self.replicas(t.peak_requests_per_second, u) * gpu_usd * HOURS_PER_MONTH + self.ops_usd_per_month


@dataclass(frozen=True)
class NotNeeded:
    """`give_up` for one capacity: true at an upper bound where every sharing candidate costs more than `limit`."""

    bounds: tuple[CandidateBound, ...]
    limit_usd_per_month: float

    def __call__(self, capacity_upper_requests_per_second: float) -> bool:
        return all(b.usd_per_month_lower(capacity_upper_requests_per_second) > self.limit_usd_per_month
                   for b in self.bounds)


def not_needed(scenario: Scenario, sharing: Sequence[Screened], *, limit_usd_per_month: float) -> NotNeeded | None:
    """The give-up test for the candidates sharing one capacity (None when nothing can be given up yet: fewer
    than K rows meet the SLO, or a candidate lacks its bound's terms)."""
    if not math.isfinite(limit_usd_per_month) or not sharing:
        return None
    terms: dict[str, FleetTerms] = {}
    bounds = []
    for s in sharing:
        if s.lowest_usd_per_gpu_hour is None or s.ops_usd_per_month is None:
            return None
        scaling = s.candidate.scaling
        if scaling not in terms:
            terms[scaling] = fleet_terms(scenario, s)
        bounds.append(CandidateBound(gpus_per_replica=s.candidate.gpus_per_replica,
                                     usd_per_gpu_hour=s.lowest_usd_per_gpu_hour, ops_usd_per_month=s.ops_usd_per_month,
                                     capacity_upper_requests_per_second=s.replica.capacity_upper_requests_per_second,
                                     terms=terms[scaling]))
    return NotNeeded(tuple(bounds), limit_usd_per_month)
