"""The cheapest base of a mixed fleet: every candidate base size priced at once (numpy), one day built.

`mixed.mixed_day` picks the base k with the lowest whole-instance $/day (ties: the smaller base) among the
candidates of `mixed._bases_to_try`, up to MAX_BASES_TRIED of them and more past it. Building a `MixedDay` per
candidate cost a Python loop over 24 hours each, and the break-even search prices a mixed fleet at tens of
volumes, so the $/day of every candidate is computed here as arrays with the same operations, in the same
order, as `mixed._day_for_base` (IEEE add and multiply give the same bits elementwise), and only the chosen
base's day is built. tests/test_mixed_bases.py checks the choice against building every day.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from costmodel.decision.instances import InstancePacking
from costmodel.units import SECONDS_PER_HOUR

if TYPE_CHECKING:  # mixed.py imports this module
    from costmodel.decision.mixed import MixedPackings

_ROWS_PER_CHUNK = 4096  # candidate bases per array block (x 24 hours): bounded memory for a 10^6-replica peak


def _instances(replicas: np.ndarray, packing: InstancePacking) -> np.ndarray:
    """`InstancePacking.instances` elementwise (replicas >= 0): ceil(r / floor(G / N)) (float division, as
    math.ceil of r / rpi), or r x ceil(N / G) when a replica spans instances."""
    if packing.replicas_per_instance >= 1:
        return np.ceil(replicas / packing.replicas_per_instance).astype(np.int64)
    return replicas * packing.instances_per_replica


def _billed(instances: np.ndarray, *, packing: InstancePacking, warmup_hours: float) -> np.ndarray:
    """`fleet.billed_gpu_hours_per_day` per row (no overhead term): (sum_h I_h + cyclic starts x w) x G + 0."""
    starts = np.maximum(0, instances - np.roll(instances, 1, axis=1)).sum(axis=1)
    return (instances.sum(axis=1) + starts * warmup_hours) * packing.gpus_per_instance + 0.0 * packing.billed_gpus_per_replica


def bases_usd_per_day(bases: list[int], paid: tuple[int, ...], *, warmup_hours: float, redo_hours: float,
                      base_usd: float, on_demand_usd: float, spot_usd: float, spot_share: float,
                      interruptions_per_hour: float, packings: MixedPackings) -> list[float]:
    """`mixed._day_for_base(k, paid, ...).usd_per_day` for every k in `bases`."""
    base, on_demand, spot = packings.base, packings.on_demand, packings.spot
    hours = np.asarray(paid, dtype=np.int64)[None, :]
    # spot_overhead_replica_hours: rho x spot replica-hours x (w + r / 3,600 s), 0 off spot
    per_spot_hour = warmup_hours + redo_hours * SECONDS_PER_HOUR / 3_600
    out: list[float] = []
    for start in range(0, len(bases), _ROWS_PER_CHUNK):
        ks = np.asarray(bases[start:start + _ROWS_PER_CHUNK], dtype=np.int64)
        burst = np.maximum(0, hours - ks[:, None])
        serving = burst.sum(axis=1)
        base_gpu_hours = 24 * (_instances(ks, base) * base.gpus_per_instance)
        on_demand_hours = (1 - spot_share) * _billed(_instances(burst, on_demand), packing=on_demand,
                                                     warmup_hours=warmup_hours)
        usd = base_gpu_hours * base_usd + on_demand_hours * on_demand_usd
        if spot_share > 0:
            overhead = (spot_share * serving * interruptions_per_hour * per_spot_hour if interruptions_per_hour != 0
                        else np.zeros(len(ks)))
            spot_hours = (spot_share * _billed(_instances(burst, spot), packing=spot, warmup_hours=warmup_hours)
                          + overhead * spot.billed_gpus_per_replica)
            usd = usd + spot_hours * spot_usd
        else:
            usd = usd + 0.0 * spot_usd
        out += usd.tolist()
    return out


def cheapest_base(bases: list[int], usd_per_day: list[float]) -> int:
    """The base with the lowest (round($/day, 9), k), as `min` over the built days picks it.

    round(x, 9) never decreases with x, so the lowest rounded $/day is round(min $/day, 9), and a base that
    rounds to it lies within 1e-9 (plus the float spacing) of the minimum: only those few are keyed in Python
    (thousands of candidates at a large peak, tens of volumes in a break-even search)."""
    if len(bases) != len(usd_per_day):
        raise ValueError("cheapest_base: one $/day per base")
    usd = np.asarray(usd_per_day, dtype=np.float64)
    lowest = float(usd.min()) if len(usd) else math.nan
    if math.isfinite(lowest):
        near = np.flatnonzero(usd <= lowest + 2e-9 + 4 * float(np.spacing(abs(lowest))))
        bases = [bases[i] for i in near]
        usd_per_day = [usd_per_day[i] for i in near]
    return min(zip(bases, usd_per_day, strict=True), key=lambda pair: (round(pair[1], 9), pair[0]))[0]
