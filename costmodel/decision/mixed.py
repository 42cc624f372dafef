"""Mixed fleets: a fixed base (reserved or owned) plus an autoscaled on-demand burst, part of it on spot.

Hour h needs replicas_h = min(max_replicas, max(m, ceil(λ_h / (t x μ)))) (decision/fleet.py). With k base
replicas (docs/economics.md, "Mixed fleets"):
- burst_h = max(0, replicas_h - k); the burst starts (cyclic rises of burst_h) pay their warm-up, billed per
  hour like an autoscaled fleet's: w = ceil(warmup_minutes / 60) h;
- a share s of the burst's replica-hours runs on spot and pays, per interruption, a replacement warm-up w and
  the work in flight redone, r = (TTFT p90 + E[T_out] x TPOT p90) / 2 (a request is interrupted on average
  half way through; the sequences of a batch share the replica, so the replica-time lost is about half one
  request's latency), at ρ interruptions per spot replica-hour;
- $/GPU/day = 24 k c_base + (1 - s)(B + W) c_od + s (B + W + ρ B (w + r)) c_spot, with B = Σ_h burst_h and
  W = starts x w; $/month = that x N x D + ops.
k is `scaling.base_replicas` when given, else the count that minimizes $/month among 0 and the distinct
values of replicas_h: between two consecutive values both the base hours and the burst's hours and starts
are linear in k, so the cheapest k lies on one of them (ties go to the smaller base).

Instances (decision/instances.py): the base's replicas pack into the base offering's instances, each hour's
burst into the burst offerings' instances, and whole instances are billed:
$/day = 24 I_b(k) G_b c_b + (1 - s) (sum_h I_od(burst_h) + starts_od w) G_od c_od
        + [s (sum_h I_s(burst_h) + starts_s w) G_s + ρ s B (w + r) g_s] c_s,
with I(n) the instances holding n replicas, G the GPUs per instance and g_s the spot offering's GPUs billed per
replica; with G = 1 everywhere this is N x the per-GPU formula above. Packing makes the cost a step function
of k, so with G > 1 every k from 0 to the peak is tried (up to MAX_BASES_TRIED; beyond, the values above and
the multiples of the base's replicas per instance).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from costmodel.decision.fleet import (
    billed_gpu_hours_per_day,
    cyclic_starts,
    replicas_by_hour,
    spot_overhead_replica_hours,
    warmup_billed_hours,
)
from costmodel.decision.instances import InstancePacking
from costmodel.decision.mixed_bases import bases_usd_per_day, cheapest_base
from costmodel.decision.results import PriceSource
from costmodel.errors import CostmodelError
from costmodel.pricing import GpuPriceRow, PriceSheet
from costmodel.scenario import SelfHostOption
from costmodel.units import DAYS_PER_MONTH, SECONDS_PER_HOUR


@dataclass(frozen=True, kw_only=True)
class BurstPrices:
    """USD per GPU-hour of the burst: on-demand, and spot for its spot share (None when spot_share is 0)."""

    on_demand_usd_per_gpu_hour: float
    spot_usd_per_gpu_hour: float | None
    sources: tuple[PriceSource, ...]


MAX_BASES_TRIED = 2_000  # base sizes tried one by one when instances make the cost a step function of k


@dataclass(frozen=True, kw_only=True)
class MixedPackings:
    """How the base's and the burst's replicas pack into their offerings' instances (decision/instances.py)."""

    base: InstancePacking
    on_demand: InstancePacking
    spot: InstancePacking

    @classmethod
    def single(cls, *, gpus_per_replica: int) -> MixedPackings:
        """GPUs sold singly everywhere (G = 1): the per-GPU formula times N."""
        one = InstancePacking(gpus_per_replica=gpus_per_replica)
        return cls(base=one, on_demand=one, spot=one)

    @property
    def packs(self) -> bool:
        """True when some offering sells instances of more than one GPU."""
        return self.base.packs or self.on_demand.packs or self.spot.packs


@dataclass(frozen=True, kw_only=True)
class MixedDay:
    """One day of a mixed fleet, per replica-slot (multiply GPU figures by N GPUs per replica)."""

    base_replicas: int
    replicas_by_hour: tuple[int, ...]  # base + burst paid in each hour
    burst_replicas_by_hour: tuple[int, ...]
    burst_starts_per_day: int
    burst_serving_replica_hours_per_day: int
    burst_warmup_replica_hours_per_day: float
    spot_overhead_replica_hours_per_day: float  # interruptions: replacement warm-ups + work redone
    usd_per_gpu_per_day: float  # per GPU of a replica, GPUs sold singly (the per-GPU formula)
    capped_hours: int  # hours whose demand needs more than max_replicas
    usd_per_day: float = 0.0  # whole instances billed (module docstring), with the day's packings
    billed_gpu_hours_per_day: float = 0.0  # base + burst GPU-hours billed, whole instances
    base_instances: int = 0
    burst_instances_by_hour: tuple[int, ...] = ()  # on-demand + spot instances of the burst (spot share apart)

    @property
    def replica_hours_per_day(self) -> float:
        """Every paid replica-hour: base, burst serving, burst warm-ups and spot interruption overhead."""
        return (24 * self.base_replicas + self.burst_serving_replica_hours_per_day
                + self.burst_warmup_replica_hours_per_day + self.spot_overhead_replica_hours_per_day)

    def gpu_hours_per_month(self, *, gpus_per_replica: int) -> float:
        """GPU-hours paid a month: replica-hours a day x N x D days."""
        return self.replica_hours_per_day * gpus_per_replica * DAYS_PER_MONTH

    def gpu_usd_per_month(self, *, gpus_per_replica: int) -> float:
        """GPU $/month: $/GPU/day x N x D days."""
        return self.usd_per_gpu_per_day * gpus_per_replica * DAYS_PER_MONTH


@dataclass(frozen=True, kw_only=True)
class _DayTerms:
    """What a mixed day costs besides its base: warm-up and redone work (hours), $/GPU-hour of each part."""

    warmup_hours: float
    redo_hours: float
    base_usd: float
    on_demand_usd: float
    spot_usd: float
    spot_share: float
    interruptions_per_hour: float
    capped_hours: int
    packings: MixedPackings


def _day_for_base(k: int, paid: tuple[int, ...], terms: _DayTerms) -> MixedDay:
    t = terms
    warmup_hours, redo_hours, base_usd, on_demand_usd = t.warmup_hours, t.redo_hours, t.base_usd, t.on_demand_usd
    spot_usd, spot_share, interruptions_per_hour, packings = t.spot_usd, t.spot_share, t.interruptions_per_hour, t.packings
    capped_hours = t.capped_hours
    burst = tuple(max(0, p - k) for p in paid)
    starts = cyclic_starts(burst)
    serving = sum(burst)
    warmup = starts * warmup_hours
    overhead = spot_overhead_replica_hours(spot_replica_hours=spot_share * serving,
                                           interruptions_per_replica_hour=interruptions_per_hour,
                                           warmup_hours=warmup_hours, redo_seconds=redo_hours * SECONDS_PER_HOUR)
    usd = (24 * k * base_usd + (1 - spot_share) * (serving + warmup) * on_demand_usd
           + (spot_share * (serving + warmup) + overhead) * spot_usd)
    base_gpu_hours = 24 * packings.base.gpus_billed(k)
    on_demand_gpu_hours = (1 - spot_share) * billed_gpu_hours_per_day(burst, packing=packings.on_demand,
                                                                      warmup_hours=warmup_hours)
    spot_gpu_hours = (spot_share * billed_gpu_hours_per_day(burst, packing=packings.spot, warmup_hours=warmup_hours)
                      + overhead * packings.spot.billed_gpus_per_replica) if spot_share > 0 else 0.0
    return MixedDay(base_replicas=k, replicas_by_hour=tuple(max(p, k) for p in paid), burst_replicas_by_hour=burst,
                    burst_starts_per_day=starts, burst_serving_replica_hours_per_day=serving,
                    burst_warmup_replica_hours_per_day=warmup, spot_overhead_replica_hours_per_day=overhead,
                    usd_per_gpu_per_day=usd, capped_hours=capped_hours,
                    usd_per_day=base_gpu_hours * base_usd + on_demand_gpu_hours * on_demand_usd + spot_gpu_hours * spot_usd,
                    billed_gpu_hours_per_day=base_gpu_hours + on_demand_gpu_hours + spot_gpu_hours,
                    base_instances=packings.base.instances(k),
                    burst_instances_by_hour=packings.on_demand.instances_by_hour(burst))


def mixed_day(*, hourly_requests_per_second: Sequence[float], capacity_requests_per_second: float,
              target_peak_utilization: float, min_replicas: int, max_replicas: int, warmup_minutes: float,
              base_usd_per_gpu_hour: float, on_demand_usd_per_gpu_hour: float, spot_usd_per_gpu_hour: float = 0.0,
              spot_share: float = 0.0, interruptions_per_replica_hour: float = 0.0, redo_seconds: float = 0.0,
              base_replicas: int | None = None, packings: MixedPackings | None = None,
              spare_replicas: int = 0) -> MixedDay:
    """The mixed fleet's day for the given base, or for the cheapest base (module docstring); `packings`
    default to one GPU per replica sold singly (so `usd_per_day` is then the per-GPU figure)."""
    if min_replicas > max_replicas:
        raise CostmodelError(f"scaling.min_replicas ({min_replicas}) must be <= scaling.max_replicas ({max_replicas})")
    if not 0 <= warmup_minutes <= 60:
        raise CostmodelError(f"scaling.warmup_minutes must be in 0..60 (got {warmup_minutes})")
    if not 0 <= spot_share <= 1:
        raise CostmodelError(f"scaling.spot_share must be in 0..1 (got {spot_share})")
    values = (base_usd_per_gpu_hour, on_demand_usd_per_gpu_hour, spot_usd_per_gpu_hour,
              interruptions_per_replica_hour, redo_seconds)
    if not all(math.isfinite(v) and v >= 0 for v in values):
        raise CostmodelError("mixed fleet: prices, scaling.interruption_rate_per_hour and the redone work must be "
                             "finite and >= 0")
    wanted = replicas_by_hour(hourly_requests_per_second=hourly_requests_per_second,
                              capacity_requests_per_second=capacity_requests_per_second,
                              target_peak_utilization=target_peak_utilization, min_replicas=min_replicas,
                              spare_replicas=spare_replicas)
    paid = tuple(min(r, max_replicas) for r in wanted)
    capped = sum(1 for w, p in zip(wanted, paid, strict=True) if w > p)
    warmup_hours = warmup_billed_hours(warmup_minutes)
    terms = _DayTerms(warmup_hours=warmup_hours, redo_hours=redo_seconds / SECONDS_PER_HOUR,
                      base_usd=base_usd_per_gpu_hour, on_demand_usd=on_demand_usd_per_gpu_hour,
                      spot_usd=spot_usd_per_gpu_hour, spot_share=spot_share,
                      interruptions_per_hour=interruptions_per_replica_hour, capped_hours=capped,
                      packings=packings or MixedPackings.single(gpus_per_replica=1))
    if base_replicas is not None:
        return _day_for_base(base_replicas, paid, terms)
    bases = _bases_to_try(paid, packings)  # priced at once, the cheapest one's day built (decision/mixed_bases.py)
    usd = bases_usd_per_day(bases, paid, warmup_hours=terms.warmup_hours, redo_hours=terms.redo_hours,
                            base_usd=terms.base_usd, on_demand_usd=terms.on_demand_usd, spot_usd=terms.spot_usd,
                            spot_share=terms.spot_share, interruptions_per_hour=terms.interruptions_per_hour,
                            packings=terms.packings)
    return _day_for_base(cheapest_base(bases, usd), paid, terms)


def _bases_to_try(paid: tuple[int, ...], packings: MixedPackings | None) -> list[int]:
    """0 and the distinct replicas_h (linear pieces, GPUs sold singly); with instances every k up to the peak
    (MAX_BASES_TRIED at most, then the base's whole instances as well)."""
    values = {0, *paid}
    if packings is None or not packings.packs:
        return sorted(values)
    peak = max(paid, default=0)
    if peak <= MAX_BASES_TRIED:
        return list(range(peak + 1))
    step = max(1, packings.base.replicas_per_instance)
    if step == 1:  # every k up to the peak, which holds each replicas_h already
        return list(range(peak + 1))
    return sorted(values | set(range(0, peak + 1, step)))


def _burst_row(sheet: PriceSheet[GpuPriceRow], option: SelfHostOption, *, field: str, row_id: str | None,
               kind: str) -> GpuPriceRow:
    """The named row (checked: same accelerator, the right offering kind), else the cheapest row of that kind for
    one replica in whole instances."""
    if row_id is None:
        rows = [r for r in sheet.rows if r.accelerator_id == option.hardware and r.offering == kind]
        if not rows:
            raise CostmodelError(f"option '{option.name}': the GPU price sheet has no {kind} row for "
                                 f"{option.hardware}; set scaling.{field} to a {kind} row id")
        # cheapest per replica-hour in full instances (price x GPUs billed per replica, decision/instances.py); at
        # the same price the smaller instance, which a small burst fills
        return min(rows, key=lambda r: (r.all_in_usd_per_gpu_hour() * InstancePacking(
            gpus_per_replica=option.gpus_per_replica, gpus_per_instance=r.gpus_per_instance).billed_gpus_per_replica,
            r.gpus_per_instance))
    try:
        row = sheet.get(row_id)
    except CostmodelError as err:
        raise CostmodelError(f"option '{option.name}': scaling.{field}: {err}") from err
    if row.offering != kind:
        raise CostmodelError(f"option '{option.name}': scaling.{field} {row_id} is a {row.offering} row; the burst "
                             f"must be {kind} (owned and reserved GPUs are paid whether used or not)")
    if row.accelerator_id != option.hardware:
        raise CostmodelError(f"option '{option.name}': scaling.{field} {row_id} is for {row.accelerator_id}, the "
                             f"option runs on {option.hardware}: the burst uses the same hardware")
    return row


def burst_rows(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow]) -> tuple[GpuPriceRow, GpuPriceRow | None]:
    """The burst's on-demand row and, with spot_share > 0, its spot row (named in the scenario, else cheapest)."""
    scaling = option.scaling
    on_demand = _burst_row(sheet, option, field="burst_offering", row_id=scaling.burst_offering, kind="on-demand")
    spot = (_burst_row(sheet, option, field="spot_offering", row_id=scaling.spot_offering, kind="spot")
            if scaling.spot_share > 0 else None)
    return on_demand, spot


def check_mixed_base(option: SelfHostOption, offering_kind: str | None) -> None:
    """A mixed fleet's base is the option's reserved or owned offering (or its own usd_per_gpu_hour)."""
    if offering_kind in ("on-demand", "spot"):
        raise CostmodelError(f"option '{option.name}': scaling.mode mixed needs a reserved or owned offering as its "
                             f"fixed base ({option.offering} is {offering_kind}); use mode autoscale for an "
                             "all-on-demand fleet")
