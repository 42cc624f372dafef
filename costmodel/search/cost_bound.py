"""The $/month LOWER bound of a screened candidate (step 2 of the search, `search.screen`), from its replica's
capacity upper bound.

The bound is taken at the offering's price plus the candidate's per-GPU ops per GPU-hour
(ops_usd_per_gpu_month / 730.5 h), plus its fixed ops (search/scope.py `option_terms`): fixed, replicas >=
max(min_replicas, ceil(peak / capacity upper bound)) (`size_self_host`'s own sizing rule, the fleet policy's
floor); autoscale, sum over the day's hours of max(min_replicas, ceil(demand_h / capacity upper bound))
replica-hours x N x D days (`decision.fleet.autoscaled_day` without its headroom and warm-up, which only add);
mixed, the same replica-hours at the lower of the base and the burst's on-demand price (`decision.mixed`: every
hour pays at least its need, each replica-hour at the base's or the burst's price). Owned offerings' host share
is left out of the bound (it only adds).

The bound is of the cost the search ranks by (decision/commitment.py): a reserved row whose term T runs past the
horizon H prices the GPU-hours it commits (a fixed fleet's, a mixed fleet's base) at max(1, T / H) x its price, so
`lower_usd_per_month` at `lowest_usd_per_gpu_hour`'s price bounds the ranked figure (and month 0's $/month when
the factor is 1).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from costmodel.decision.commitment import commitment_factor
from costmodel.decision.economics import diurnal_profile
from costmodel.scenario import Scenario
from costmodel.search.scope import OptionTerms
from costmodel.search.space import Candidate
from costmodel.units import DAYS_PER_MONTH, HOURS_PER_MONTH

if TYPE_CHECKING:  # search.screen imports this module; the type is only named in a signature
    from costmodel.search.screen import ReplicaScreen


def _month_usd(*, replicas: int, gpus: int, usd_per_gpu_hour: float, ops_usd_per_month: float) -> float:
    return replicas * gpus * usd_per_gpu_hour * HOURS_PER_MONTH + ops_usd_per_month


def hourly_demand_requests_per_second(scenario: Scenario) -> tuple[float, ...]:
    """The 24 hourly request rates an autoscaled fleet follows (`decision.options.self_host_result`'s profile)."""
    workload = scenario.workload
    profile = workload.hourly_load_factors() or diurnal_profile(peak_to_mean=workload.peak_to_mean())
    mean = workload.mean_requests_per_second()
    return tuple(mean * w for w in profile)


def autoscaled_replica_hours_lower(*, capacity_upper_requests_per_second: float,
                                   hourly_requests_per_second: tuple[float, ...], min_replicas: int = 0) -> int:
    """Replica-hours a day an autoscaled (or mixed) fleet pays at least:
    sum_h max(min_replicas, ceil(demand_h / capacity upper bound))."""
    cap = capacity_upper_requests_per_second
    return sum(max(min_replicas, math.ceil(d / cap - 1e-12)) for d in hourly_requests_per_second)


def lower_usd_per_month(candidate: Candidate, replica: ReplicaScreen, *, usd_per_gpu_hour: float,
                        ops_usd_per_month: float, peak_requests_per_second: float,
                        hourly_requests_per_second: tuple[float, ...], replica_hours: int | None = None,
                        min_replicas: int = 1) -> float:
    """$/month lower bound of the candidate at its capacity upper bound, fixed or hour by hour (module
    docstring); `usd_per_gpu_hour`: the lowest price any of its GPU-hours pays (mixed: base or burst, per-GPU
    ops included); `replica_hours`: `autoscaled_replica_hours_lower` already computed for this replica."""
    cap = replica.capacity_upper_requests_per_second
    if candidate.scaling in ("autoscale", "mixed"):
        if replica_hours is None:
            replica_hours = autoscaled_replica_hours_lower(capacity_upper_requests_per_second=cap,
                                                           hourly_requests_per_second=hourly_requests_per_second,
                                                           min_replicas=min_replicas)
        return (replica_hours * candidate.gpus_per_replica * usd_per_gpu_hour * DAYS_PER_MONTH
                + ops_usd_per_month)
    replicas = max(min_replicas, math.ceil(peak_requests_per_second / cap - 1e-12))
    return _month_usd(replicas=replicas, gpus=candidate.gpus_per_replica, usd_per_gpu_hour=usd_per_gpu_hour,
                      ops_usd_per_month=ops_usd_per_month)


def lowest_usd_per_gpu_hour(candidate: Candidate, *, prices: dict[str, float], on_demand: dict[str, float],
                             terms: OptionTerms, term_months: dict[str, int | None] | None = None,
                             horizon_months: int = 12) -> float:
    """The lowest price one of the candidate's GPU-hours pays on the ranked basis: its offering's x max(1, T / H)
    (`term_months`: each offering's reserved term; decision/commitment.py), mixed: or the burst's cheapest
    on-demand row's (no term), plus its per-GPU ops spread over the GPU-hours of a month."""
    term = (term_months or {}).get(candidate.offering)
    price = prices[candidate.offering] * commitment_factor(term_months=term, horizon_months=horizon_months,
                                                           scaling=candidate.scaling)
    if candidate.scaling == "mixed":
        price = min(price, on_demand.get(candidate.hardware, price))
    return price + terms.ops_usd_per_gpu_month / HOURS_PER_MONTH

