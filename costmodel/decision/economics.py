"""Self-host economics: replicas for the peak hour, $/month, $/M tokens, utilization, break-even, hybrid.

Pure functions of numbers (no catalogs, no price sheets): the decision module feeds them. Units: requests/s,
tokens/s, USD/month, USD per million tokens (usd_per_mtok). A month is 730.5 h (365.25 x 24 / 12).

Formulas (docs/economics.md):
- replicas = max(min_replicas, ceil(peak requests/s / (target_peak_utilization x capacity requests/s per
  replica at the SLO))): headroom and redundancy (decision/fleet.py)
- $/month = GPUs billed x usd_per_gpu_hour x 730.5 + ops, ops = fixed + $/GPU-month x GPUs billed; GPUs billed =
  whole instances x GPUs per instance (decision/instances.py; replicas x GPUs/replica when sold singly)
- utilization = mean requests/s / (replicas x capacity requests/s)
- break-even utilization u* = usd_per_gpu_hour x N x 1e6 / (3600 x X x api_usd_per_mtok), X = tokens/s per
  replica at the SLO (input + output: API $/M is blended over both)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from costmodel.decision.fleet import replicas_for_demand
from costmodel.decision.instances import InstancePacking
from costmodel.errors import CostmodelError
from costmodel.units import HOURS_PER_MONTH, SECONDS_PER_HOUR, SECONDS_PER_MONTH


def normalized_profile(weights: Sequence[float]) -> tuple[float, ...]:
    """24 hourly weights scaled to mean 1 (so weight x mean rate = that hour's rate)."""
    values = np.asarray(weights, dtype=np.float64)
    if values.shape != (24,) or np.any(values < 0) or values.sum() <= 0:
        raise CostmodelError("traffic profile needs 24 non-negative hourly weights with a positive sum")
    return tuple(float(v) for v in values * 24.0 / values.sum())


def diurnal_profile(*, peak_to_mean: float) -> tuple[float, ...]:
    """A smooth day (peak at 14:00) whose peak/mean equals `peak_to_mean`: w_h = exp(a cos(2 pi (h-14)/24)).

    Used when a scenario gives only a peak-to-mean ratio. The exponential (a von Mises shape) reaches any
    ratio, unlike a clipped cosine (at most pi); a is found by bisection.
    """
    if peak_to_mean < 1.0:
        raise CostmodelError(f"peak_to_mean must be >= 1 (got {peak_to_mean}); peak cannot be below the mean")
    hours = np.arange(24)
    cosine = np.cos(2 * np.pi * (hours - 14) / 24.0)

    def ratio(a: float) -> float:
        w = np.exp(a * cosine)
        return float(w.max() / w.mean())

    low, high = 0.0, 1.0
    while ratio(high) < peak_to_mean and high < 500:
        high *= 2.0
    for _ in range(100):
        mid = (low + high) / 2.0
        low, high = (mid, high) if ratio(mid) < peak_to_mean else (low, mid)
    return normalized_profile(list(np.exp(high * cosine)))


@dataclass(frozen=True)
class SelfHostCost:
    """A self-hosted option sized for the peak hour."""

    replicas: int
    gpus: int  # GPUs the replicas use (replicas x GPUs per replica)
    capacity_requests_per_second: float  # per replica, at the SLO
    tokens_per_second_per_replica: float  # input + output tokens/s per replica at the SLO
    gpu_usd_per_month: float
    ops_usd_per_month: float
    usd_per_month: float
    usd_per_mtok: float  # blended over input + output tokens
    utilization: float  # mean demand / provisioned capacity
    usd_per_mtok_at_full_utilization: float  # every provisioned replica busy at the SLO, ops included
    instances: int = 0  # whole instances billed (decision/instances.py)
    gpus_billed: int = 0  # instances x GPUs per instance (= gpus when the offering sells single GPUs)


def fixed_fleet_usd_per_month(*, gpus_billed: int, usd_per_gpu_hour: float, ops_usd_per_month: float,
                              ops_usd_per_gpu_month: float) -> tuple[float, float]:
    """(GPU $, ops $) a month of GPUs billed all month: GPUs billed x c x 730.5 h, and fixed ops + $/GPU-month x
    GPUs billed (the fixed fleet's bill; decision/plan.py `fixed_cost` and `size_self_host` share it)."""
    return (gpus_billed * usd_per_gpu_hour * HOURS_PER_MONTH,
            ops_usd_per_month + gpus_billed * ops_usd_per_gpu_month)


def size_self_host(
    *,
    mean_requests_per_second: float,
    peak_requests_per_second: float,
    capacity_requests_per_second: float,
    tokens_per_request: float,
    gpus_per_replica: int,
    usd_per_gpu_hour: float,
    ops_usd_per_month: float = 0.0,
    min_replicas: int = 1,
    target_peak_utilization: float = 1.0,
    ops_usd_per_gpu_month: float = 0.0,
    spare_replicas: int = 0,
    packing: InstancePacking | None = None,
) -> SelfHostCost:
    """Replicas for the peak (at `target_peak_utilization` of capacity, at least `min_replicas`), $/month, $/M
    and utilization (see module docstring). The replicas pack into `packing`'s instances (default: GPUs sold
    singly) and whole instances are billed; ops = ops_usd_per_month + ops_usd_per_gpu_month x GPUs billed."""
    if capacity_requests_per_second <= 0:
        raise CostmodelError("capacity per replica must be > 0 requests/s (the SLO cannot be met at any load)")
    if mean_requests_per_second < 0 or peak_requests_per_second < mean_requests_per_second:
        raise CostmodelError("need 0 <= mean requests/s <= peak requests/s")
    if not 0 < target_peak_utilization <= 1:
        raise CostmodelError(f"target_peak_utilization must be in (0, 1] (got {target_peak_utilization})")
    replicas = replicas_for_demand(demand_requests_per_second=peak_requests_per_second,
                                   capacity_requests_per_second=capacity_requests_per_second,
                                   target_peak_utilization=target_peak_utilization, min_replicas=min_replicas,
                                   spare_replicas=spare_replicas)
    gpus = replicas * gpus_per_replica
    packing = packing or InstancePacking(gpus_per_replica=gpus_per_replica)
    if packing.gpus_per_replica != gpus_per_replica:
        raise CostmodelError(f"instance packing is for {packing.gpus_per_replica}-GPU replicas, not {gpus_per_replica}")
    gpus_billed = packing.gpus_billed(replicas)
    gpu_usd, ops_usd_per_month = fixed_fleet_usd_per_month(
        gpus_billed=gpus_billed, usd_per_gpu_hour=usd_per_gpu_hour, ops_usd_per_month=ops_usd_per_month,
        ops_usd_per_gpu_month=ops_usd_per_gpu_month)
    total = gpu_usd + ops_usd_per_month
    tokens_per_month = mean_requests_per_second * tokens_per_request * SECONDS_PER_MONTH
    per_replica_tps = capacity_requests_per_second * tokens_per_request
    return SelfHostCost(
        replicas=replicas,
        gpus=gpus,
        capacity_requests_per_second=capacity_requests_per_second,
        tokens_per_second_per_replica=per_replica_tps,
        gpu_usd_per_month=gpu_usd,
        ops_usd_per_month=ops_usd_per_month,
        usd_per_month=total,
        usd_per_mtok=total / (tokens_per_month / 1e6) if tokens_per_month > 0 else math.inf,
        utilization=mean_requests_per_second / (replicas * capacity_requests_per_second) if replicas else 0.0,
        usd_per_mtok_at_full_utilization=total * 1e6 / (replicas * per_replica_tps * SECONDS_PER_MONTH),
        instances=packing.instances(replicas), gpus_billed=gpus_billed,
    )


def break_even_utilization(*, usd_per_gpu_hour: float, gpus_per_replica: int, tokens_per_second_per_replica: float,
                           api_usd_per_mtok: float, ops_usd_per_month: float = 0.0, replicas: int = 1) -> float:
    """u* = usd_per_gpu_hour x N x 1e6 / (3600 x X x api_usd_per_mtok), scaled by (1 + ops / GPU $/month of the
    `replicas` provisioned) so fixed operations cost counts; > 1 means never cheaper at this size.

    Equals (self-host $/M at 100% utilization) / (API $/M), both with ops included."""
    if api_usd_per_mtok <= 0:
        return math.inf
    gpu_usd_per_month = replicas * gpus_per_replica * usd_per_gpu_hour * HOURS_PER_MONTH
    ops_factor = 1.0 + ops_usd_per_month / gpu_usd_per_month
    return ops_factor * usd_per_gpu_hour * gpus_per_replica * 1e6 / (
        SECONDS_PER_HOUR * tokens_per_second_per_replica * api_usd_per_mtok)


def break_even_tokens_per_month(
    *,
    replica_usd_per_month: float,
    ops_usd_per_month: float,
    tokens_per_month_per_replica_at_peak: float,
    api_usd_per_mtok: float,
    max_replicas: int = 100_000,
    min_replicas: int = 1,
) -> float | None:
    """Smallest monthly volume at which self-host $/month <= API $/month (None: never); the fleet never
    drops below `min_replicas` (its first step serves volumes up to min_replicas x V).

    Self-host cost is a step function: k replicas (k x R + ops) serve volumes up to k x V_k, where V_k is
    one replica's monthly tokens when sized for the peak hour. On step k the API costs V x p / 1e6, so the
    crossing is V = (k R + ops) 1e6 / p if that lies on the step.
    """
    if api_usd_per_mtok <= 0 or tokens_per_month_per_replica_at_peak <= 0:
        return None
    volume_per_replica = tokens_per_month_per_replica_at_peak

    def crossing(k: int) -> float:  # tokens/month at which k replicas cost what the API does
        return (k * replica_usd_per_month + ops_usd_per_month) * 1e6 / api_usd_per_mtok

    # Each extra replica adds R but V more volume; if R costs at least V at API prices, the gap to the API
    # never closes after the first step. Else (k R + ops) 1e6 / p <= k V first holds at
    # k >= ops' / (V - R'), with primes in tokens at API prices: closed form, O(1) whatever the volume.
    replica_tokens_at_api_price = replica_usd_per_month * 1e6 / api_usd_per_mtok
    if crossing(1) > volume_per_replica and replica_tokens_at_api_price >= volume_per_replica:
        return None
    k = 1
    if crossing(1) > volume_per_replica:
        ops_tokens = ops_usd_per_month * 1e6 / api_usd_per_mtok
        k = max(1, math.ceil(ops_tokens / (volume_per_replica - replica_tokens_at_api_price)))
        while k > 1 and crossing(k - 1) <= (k - 1) * volume_per_replica:  # guard the float rounding of ceil
            k -= 1
        while crossing(k) > k * volume_per_replica:
            k += 1
    if k < min_replicas:  # the floor's step: min_replicas x R + ops for every volume up to min_replicas x V
        k = min_replicas
        if crossing(k) > k * volume_per_replica:
            return None
    if k > max_replicas:
        return None
    return max(crossing(k), (k - 1) * volume_per_replica if k > min_replicas else 0.0)


@dataclass(frozen=True)
class HybridPlan:
    """k self-hosted base replicas, the overflow of each hour to an API."""

    base_replicas: int
    self_host_usd_per_month: float
    api_usd_per_month: float
    usd_per_month: float
    overflow_fraction: float  # share of requests sent to the API
    utilization: float  # of the self-hosted replicas


def plan_hybrid(
    *,
    mean_requests_per_second: float,
    hourly_profile: Sequence[float],
    capacity_requests_per_second: float,
    replica_usd_per_month: float,
    ops_usd_per_month: float,
    api_usd_per_request: float,
    max_base_replicas: int,
    min_base_replicas: int = 1,
    packing: InstancePacking | None = None,
    usd_per_gpu_month: float | None = None,
) -> HybridPlan:
    """Choose the base replica count (0, or min_base_replicas..max_base_replicas) that minimizes $/month over
    the day's load-duration curve. `capacity_requests_per_second` is what one base replica may serve (the
    caller applies the headroom policy). With `packing` (and `usd_per_gpu_month`, per-GPU ops included) the
    base is billed by whole instance: packing.gpus_billed(k) x usd_per_gpu_month instead of k x replica cost."""
    hourly = mean_requests_per_second * np.asarray(normalized_profile(hourly_profile))
    requests_per_hour_to_month = SECONDS_PER_HOUR * HOURS_PER_MONTH / 24.0  # each hour of the day recurs 30.4 times
    total_requests = float(hourly.sum()) * requests_per_hour_to_month

    billed = packing is not None and usd_per_gpu_month is not None

    def base_usd(k: int) -> float:
        if billed:
            assert packing is not None and usd_per_gpu_month is not None
            return packing.gpus_billed(k) * usd_per_gpu_month
        return k * replica_usd_per_month

    def plan(k: int) -> HybridPlan:
        served = np.minimum(hourly, k * capacity_requests_per_second)
        overflow = float((hourly - served).sum()) * requests_per_hour_to_month
        self_host = base_usd(k) + (ops_usd_per_month if k else 0.0)
        api = overflow * api_usd_per_request
        return HybridPlan(
            base_replicas=k,
            self_host_usd_per_month=self_host,
            api_usd_per_month=api,
            usd_per_month=self_host + api,
            overflow_fraction=overflow / total_requests if total_requests else 0.0,
            utilization=float(served.mean() / (k * capacity_requests_per_second)) if k else 0.0,
        )

    # For k >= 1 the cost is k R + ops + p x overflow(k), and overflow(k) = sum_h max(0, d_h - k C) is convex
    # and decreasing in k, so the cost is convex: bisect for the first k whose next step no longer saves
    # (O(log max_base_replicas) plans, not one per possible replica count). Ties go to fewer replicas.
    # With instances shared by r replicas, a k that leaves its last instance part-empty costs what the full one
    # costs and overflows more, so only whole instances (k = j r), the floor and the cap are candidates; over
    # j the cost is convex again (j instances + p x overflow(j r)).
    step = packing.replicas_per_instance if billed and packing is not None and packing.replicas_per_instance > 1 else 1
    best = plan(0)
    for candidate in _base_candidates(plan, first=max(1, min_base_replicas), last=max_base_replicas, step=step):
        if candidate.usd_per_month < best.usd_per_month - 1e-9:
            best = candidate
    return best


def _base_candidates(plan: Callable[[int], HybridPlan], *, first: int, last: int, step: int) -> list[HybridPlan]:
    """The floor, the cap and the cheapest whole step k = j x step between them (bisection on the convex cost)."""
    if last < first:
        return []
    low, high = math.ceil(first / step), last // step
    while low < high:
        mid = (low + high) // 2
        if plan((mid + 1) * step).usd_per_month < plan(mid * step).usd_per_month - 1e-9:
            low = mid + 1
        else:
            high = mid
    inside = [low * step] if first <= low * step <= last else []
    return [plan(k) for k in sorted({first, last, *inside})]
