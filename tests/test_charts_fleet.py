"""costmodel.charts.fleet and costmodel.charts.whatif: replicas by hour over the demand, cost by month
(never a made-up flat line), the what-if volume multiplier against `decide(overrides=...)`."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from app.scenario_io import load_example
from costmodel.charts.fleet import HORIZON_NOT_COMPUTED, fleet_chart, months_chart
from costmodel.charts.whatif import at_volume, whatif
from costmodel.decision.capacity import CapacityCache
from costmodel.decision.rank import Overrides, decide
from costmodel.decision.results import Decision
from costmodel.errors import CostmodelError
from costmodel.scenario import Scenario

AS_OF = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def chat() -> tuple[Scenario, Decision, CapacityCache]:
    scenario = load_example("chat-assistant.yaml")
    cache = CapacityCache()
    return scenario, decide(scenario, today=AS_OF, capacity_cache=cache), cache


def test_fleet_chart_is_replicas_by_hour_times_capacity(chat: tuple[Scenario, Decision, CapacityCache]) -> None:
    _, decision, _ = chat
    chart = fleet_chart(decision)
    assert chart.hours == tuple(range(24))
    # Demand in hour h = mean requests/s x the profile's weight (mean 1), so its mean is the mean rate.
    assert sum(chart.demand_requests_per_second) / 24 == pytest.approx(decision.mean_requests_per_second)
    assert max(chart.demand_requests_per_second) == pytest.approx(decision.peak_requests_per_second)
    assert chart.fleets, "chat-assistant keeps self-hosted replicas"
    for fleet in chart.fleets:
        option = decision.option(fleet.name)
        assert fleet.replicas_by_hour == option.replicas_by_hour
        per_replica = option.capacity_requests_per_second
        assert fleet.requests_per_second_by_hour == pytest.approx([r * per_replica for r in fleet.replicas_by_hour])
    # A hybrid that keeps 0 base replicas has no fleet to draw; APIs never do.
    kinds = {decision.option(f.name).kind for f in chart.fleets}
    assert "api" not in kinds
    assert all(max(f.replicas_by_hour) > 0 for f in chart.fleets)


def test_months_chart_says_not_computed_instead_of_a_flat_line(chat: tuple[Scenario, Decision, CapacityCache]) -> None:
    _, decision, _ = chat
    bare = dataclasses.replace(decision, options=tuple(dataclasses.replace(o, usd_by_month=None)
                                                       for o in decision.options))
    chart = months_chart(bare)
    assert not chart.computed and chart.series == ()
    assert chart.note == HORIZON_NOT_COMPUTED


def test_months_chart_draws_the_horizon_when_present(chat: tuple[Scenario, Decision, CapacityCache]) -> None:
    _, decision, _ = chat
    first = decision.usable_options[0]
    # 3 months: 100, 110, 121 USD (10% growth written out), total 331.
    filled = dataclasses.replace(first, usd_by_month=(100.0, 110.0, 121.0), usd_horizon_total=331.0)
    options = (filled, *(dataclasses.replace(o, usd_by_month=None) for o in decision.options[1:]))
    chart = months_chart(dataclasses.replace(decision, options=options, horizon_months=3, ranking_change_month=2))
    assert chart.computed and chart.note == ""
    assert [s.name for s in chart.series] == [first.name]
    assert chart.series[0].usd_by_month == (100.0, 110.0, 121.0)
    assert chart.series[0].usd_horizon_total == 331.0
    assert chart.ranking_change_month == 2


def test_volume_multiplier_matches_decide_at_ten_times(chat: tuple[Scenario, Decision, CapacityCache]) -> None:
    scenario, decision, cache = chat
    found = whatif(scenario, decision, today=AS_OF, capacity_cache=cache)
    assert found is not None
    assert found.sensitivity.recommendation == decision.recommendation
    rows = {r.name: r for r in at_volume(decision, found.model, multiplier=10.0)}
    tenfold = decide(scenario, today=AS_OF, capacity_cache=cache, overrides=Overrides(volume=10.0))
    for name, row in rows.items():
        assert row.usd_per_month_today == pytest.approx(decision.option(name).usd_per_month)
        if row.kind == "api":  # API cost is linear in tokens
            assert row.usd_per_month == pytest.approx(10.0 * row.usd_per_month_today, rel=1e-9)
        if row.kind in ("api", "self-host"):
            assert row.usd_per_month == pytest.approx(tenfold.option(name).usd_per_month, rel=1e-6)
    at_one = at_volume(decision, found.model, multiplier=1.0)
    assert [r.usd_per_month for r in at_one] == pytest.approx([r.usd_per_month_today for r in at_one])


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), 1000.0])
def test_volume_multiplier_out_of_range_is_refused(chat: tuple[Scenario, Decision, CapacityCache], bad: float) -> None:
    scenario, decision, cache = chat
    found = whatif(scenario, decision, today=AS_OF, capacity_cache=cache)
    assert found is not None
    with pytest.raises(CostmodelError, match="volume multiplier"):
        at_volume(decision, found.model, multiplier=bad)
