"""The mixed fleet's cheapest base, priced for every candidate at once (decision/mixed_bases.py), against
building every candidate's day (`mixed._day_for_base`) and taking the cheapest, as the module docstring says.

Random days of demand, instance sizes (GPUs sold singly, replicas sharing an instance, replicas spanning
several), spot shares, interruption rates, warm-ups and peaks past MAX_BASES_TRIED: the $/day of every
candidate must be the same bits, and the chosen day the same day.
"""

from __future__ import annotations

import random

import pytest

from costmodel.decision.instances import InstancePacking
from costmodel.decision.mixed import MixedPackings, _bases_to_try, _day_for_base, _DayTerms, mixed_day
from costmodel.decision.mixed_bases import bases_usd_per_day, cheapest_base


def _packings(rng: random.Random) -> MixedPackings:
    n = rng.choice([1, 2, 4, 8])
    return MixedPackings(**{part: InstancePacking(gpus_per_replica=n, gpus_per_instance=rng.choice([1, 2, 8]))
                            for part in ("base", "on_demand", "spot")})


@pytest.mark.parametrize("seed", range(40))
def test_every_base_priced_as_its_own_day(seed: int) -> None:
    rng = random.Random(seed)
    peak = rng.choice([1, 5, 40, 2_500])
    paid = tuple(rng.choice([0, rng.randint(0, peak)]) for _ in range(24))
    packings = _packings(rng)
    settings = {"warmup_hours": rng.choice([0.0, 1.0]), "redo_hours": rng.choice([0.0, 0.01, 3.7]),
                "base_usd": rng.uniform(0, 5), "on_demand_usd": rng.uniform(0, 9), "spot_usd": rng.uniform(0, 3),
                "spot_share": rng.choice([0.0, 1.0, rng.random()]),
                "interruptions_per_hour": rng.choice([0.0, 1.0, rng.random()]), "packings": packings}
    bases = _bases_to_try(paid, packings)
    days = [_day_for_base(k, paid, _DayTerms(capped_hours=0, **settings)) for k in bases]  # type: ignore[arg-type]
    priced = bases_usd_per_day(bases, paid, **settings)  # type: ignore[arg-type]
    assert priced == [d.usd_per_day for d in days]
    assert cheapest_base(bases, priced) == min(days, key=lambda d: (round(d.usd_per_day, 9), d.base_replicas)).base_replicas


def test_mixed_day_picks_the_cheapest_built_day() -> None:
    demand = [0.5] * 8 + [40.0] * 10 + [3.0] * 6
    packings = MixedPackings(base=InstancePacking(gpus_per_replica=2, gpus_per_instance=8),
                             on_demand=InstancePacking(gpus_per_replica=2, gpus_per_instance=8),
                             spot=InstancePacking(gpus_per_replica=2, gpus_per_instance=1))
    kwargs = {"hourly_requests_per_second": demand, "capacity_requests_per_second": 1.3, "target_peak_utilization": 0.8,
              "min_replicas": 1, "max_replicas": 1_000, "warmup_minutes": 10.0, "base_usd_per_gpu_hour": 2.0,
              "on_demand_usd_per_gpu_hour": 4.0, "spot_usd_per_gpu_hour": 1.5, "spot_share": 0.3,
              "interruptions_per_replica_hour": 0.05, "redo_seconds": 20.0, "packings": packings}
    chosen = mixed_day(**kwargs)  # type: ignore[arg-type]
    peak = max(chosen.replicas_by_hour)
    every = [mixed_day(**kwargs, base_replicas=k) for k in range(peak + 1)]  # type: ignore[arg-type]
    best = min(every, key=lambda d: (round(d.usd_per_day, 9), d.base_replicas))
    assert chosen == best


@pytest.mark.parametrize("seed", range(200))
def test_cheapest_base_keys_only_the_near_ties_as_the_full_min_would(seed: int) -> None:
    """Only $/day within 1e-9 (and the float spacing) of the lowest are keyed: near-ties around a rounding
    boundary, at $/day from 1e-6 to 1e12, give the base that keying every candidate gives."""
    rng = random.Random(seed)
    scale = 10.0 ** rng.randint(-6, 12)
    low = scale * rng.random()
    usd = [low + rng.choice([0.0, 1.0, -1.0, 4.0]) * rng.choice([1e-10, 4e-10, 5e-10, 6e-10, 1e-9, 2e-9, 1.0])
           for _ in range(rng.randint(1, 60))]
    bases = rng.sample(range(10_000), len(usd))
    assert cheapest_base(bases, usd) == min(zip(bases, usd, strict=True),
                                            key=lambda pair: (round(pair[1], 9), pair[0]))[0]
