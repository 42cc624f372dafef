"""The horizon holds a mixed fleet's reserved base over its term, like a fixed fleet's (decision/horizon.py
`mixed_horizon`). Capacities from the roofline closed form (no simulation); prices from
pricing_data/gpu_prices.csv: semianalysis/h100-sxm/reserved $1.30/GPU-h, "3 years, 25% upfront" (a 36-month
term); lambda/h100-sxm/on-demand $3.99/GPU-h for the burst.
"""

from __future__ import annotations

import math

import pytest

from costmodel.decision.horizon import committed_replicas
from tests.test_fleet import decided
from tests.test_fleet_mixed import mixed_scenario

HOURS_PER_MONTH = 365.25 * 24 / 12  # 730.5 h
RESERVED = 1.30
SCALING = {"mode": "mixed", "warmup_minutes": 10, "burst_offering": "lambda/h100-sxm/on-demand"}


def shrinking(*, requests_per_day: float, weights: list[float], growth: float, horizon: int):  # type: ignore[no-untyped-def]
    data = mixed_scenario(SCALING, weights=weights, requests_per_day=requests_per_day)
    data["workload"]["growth_per_month"] = growth
    data["horizon_months"] = horizon
    data["options"][1]["ops_usd_per_month"] = 0.0
    data["options"][1]["ops_usd_per_gpu_month"] = 0.0
    return data


def capacity() -> float:
    result = decided(shrinking(requests_per_day=10_000, weights=[1.0] * 24, growth=0.0, horizon=1)).option("h100")
    assert result.capacity_requests_per_second and result.gpus_per_replica == 1
    return result.capacity_requests_per_second


def test_reserved_base_is_held_over_its_term_when_volume_shrinks() -> None:
    mu = capacity()
    # Flat demand worth 3.5 replicas at the 0.8 target in month 0, shrinking 25%/month:
    # needed_m = max(2, ceil(3.5 x 0.75^m)) = 4, 3, 2, 2. Flat demand has no burst hours worth renting on
    # demand ($3.99 against $1.30 all day), so each month's cheapest base is the whole fleet.
    rpd = 3.5 * 0.8 * mu * 86_400
    needed = [max(2, math.ceil(3.5 * 0.75**m)) for m in range(4)]
    assert needed == [4, 3, 2, 2]
    decision = decided(shrinking(requests_per_day=rpd, weights=[1.0] * 24, growth=-0.25, horizon=4))
    h100 = decision.option("h100")
    assert h100.scaling == "mixed" and h100.base_replicas == 4
    # The 4 base replicas reserved in month 0 stay paid for 36 months: 4 x 1 GPU x $1.30 x 730.5 h = $3,798.60
    # a month in each of the 4 months (no burst: the held base covers every hour), not 4, 3, 2, 2 replicas.
    replica_usd = 1 * RESERVED * HOURS_PER_MONTH
    assert 4 * replica_usd == pytest.approx(3798.60)
    assert h100.usd_by_month is not None
    assert list(h100.usd_by_month) == pytest.approx([4 * replica_usd] * 4)
    assert h100.usd_horizon_total == pytest.approx(4 * 4 * replica_usd)
    # After the horizon: 4 replicas x (36 - 4) months = 128 replica-months x $949.65 = $121,555 still owed.
    assert committed_replicas(needed, term_months=36) == ((4, 4, 4, 4), 4 * 32)
    assert any("$121,555 stays committed after the horizon" in note for note in h100.notes)


def test_held_base_absorbs_the_burst_of_a_later_month() -> None:
    mu = capacity()
    # 17 hours at weight 1, 7 at weight 3 (mean 31/24); month 1 at half the volume. Each month priced alone
    # picks its cheapest base; held, month 1 keeps month 0's base and is priced at that base (pinned below).
    weights = [1.0] * 17 + [3.0] * 7
    rpd = 3.0 * 0.8 * mu * 86_400 * 24 / 31  # the trough needs 3 replicas at 0.8, the window 9
    held = decided(shrinking(requests_per_day=rpd, weights=weights, growth=-0.5, horizon=2)).option("h100")
    base = held.base_replicas
    assert base is not None and base >= 3
    alone = decided(shrinking(requests_per_day=rpd * 0.5, weights=weights, growth=0.0, horizon=1)).option("h100")
    assert alone.base_replicas is not None and alone.base_replicas < base  # the smaller month wants less base
    pinned_data = shrinking(requests_per_day=rpd * 0.5, weights=weights, growth=0.0, horizon=1)
    pinned_data["options"][1]["scaling"] = {**SCALING, "base_replicas": base}
    pinned = decided(pinned_data).option("h100")
    assert held.usd_by_month is not None
    assert held.usd_by_month[0] == pytest.approx(held.usd_per_month)
    assert held.usd_by_month[1] == pytest.approx(pinned.usd_per_month)
    assert held.usd_by_month[1] > alone.usd_per_month  # holding the term costs more than re-choosing the base
    # The pinned month pays 24 x base reserved replica-hours a day: at least base x $1.30 x 730.5 h.
    assert pinned.usd_per_month >= base * RESERVED * HOURS_PER_MONTH - 1e-6
