"""A mixed fleet's base/burst split in the fleet chart data, the app's Compare figure and the memo's Figure 2.

The fleet is priced by decision/mixed.py (tests/test_fleet_mixed.py checks its arithmetic); here we check that
what is drawn is that split: base k replicas all day, burst_h = replicas_h - k above it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from costmodel.charts.fleet import HourlyFleet, fleet_cell, fleet_chart
from costmodel.decision.rank import decide
from costmodel.scenario import parse_scenario
from tests.test_fleet import TODAY
from tests.test_fleet_mixed import mixed_scenario

WEIGHTS = [1.0] * 17 + [3.0] * 7  # a 7-hour window on top of a steady base
SCALING = {"mode": "mixed", "warmup_minutes": 10, "base_replicas": 1,
           "burst_offering": "lambda/h100-sxm/on-demand"}


@pytest.fixture(scope="module")
def mixed():  # type: ignore[no-untyped-def]
    scenario = parse_scenario(mixed_scenario(SCALING, weights=WEIGHTS))
    return scenario, decide(scenario, today=TODAY, capacity_method="roofline")


def test_split_label_written_out() -> None:
    fleet = HourlyFleet(name="h", kind="self-host", scaling="mixed", replicas_by_hour=(2,) * 18 + (4,) * 6,
                        requests_per_second_by_hour=(10.0,) * 18 + (20.0,) * 6, base_replicas=2,
                        burst_replicas_by_hour=(0,) * 18 + (2,) * 6, base_requests_per_second=10.0)
    assert fleet.split == "base 2 + burst 0..2"
    plain = dataclasses.replace(fleet, scaling="fixed", base_replicas=None, burst_replicas_by_hour=None,
                                base_requests_per_second=None)
    assert plain.split == ""


def test_fleet_chart_carries_the_mixed_split(mixed) -> None:  # type: ignore[no-untyped-def]
    _, decision = mixed
    option = decision.option("h100")
    assert option.scaling == "mixed" and option.base_replicas == 1
    fleet = next(f for f in fleet_chart(decision).fleets if f.name == "h100")
    burst = option.burst_replicas_by_hour
    assert fleet.base_replicas == 1 and fleet.burst_replicas_by_hour == burst
    # Paid in hour h = max(base, base + burst_h): the base plus the burst on top of it.
    assert fleet.replicas_by_hour == tuple(1 + b for b in burst)
    assert fleet.base_requests_per_second == pytest.approx(1 * option.capacity_requests_per_second)
    assert fleet.split == f"base 1 + burst {min(burst)}..{max(burst)}"
    assert max(burst) > 0, "the 3x window needs a burst above one base replica"
    # Fixed fleets and hybrids carry no split.
    assert all(f.split == "" for f in fleet_chart(decision).fleets if f.name != "h100")


def test_app_fleet_figure_draws_the_base_under_the_fleet(mixed) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("plotly")
    from app.compare_panels import fleet_figure

    _, decision = mixed
    chart = fleet_chart(decision)
    fig = fleet_figure(chart, {f.name: "#123456" for f in chart.fleets})
    fleet = next(f for f in chart.fleets if f.name == "h100")
    # The figure draws replicas paid by hour on the left axis (demand bars on the right, app/compare_panels.py):
    # the base dashed and filled at k = 1 all day, the fleet's steps at k + burst_h above it.
    base = next(t for t in fig.data if t.name == "h100: base 1 replica 24/7")
    assert list(base.y) == [1] * 24 and base.fill == "tozeroy" and base.line.dash == "dash"
    paid = next(t for t in fig.data if t.name == "h100 (mixed): base + burst on-demand, "
                                                 f"{min(fleet.replicas_by_hour)}..{max(fleet.replicas_by_hour)} replicas")
    assert list(paid.y) == list(fleet.replicas_by_hour)
    assert [p - b for p, b in zip(paid.y, base.y, strict=True)] == list(fleet.burst_replicas_by_hour or ())
    assert list(paid.customdata) == pytest.approx(list(fleet.requests_per_second_by_hour))


def test_memo_figure_two_states_the_split(mixed) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("reportlab")
    from costmodel.memo.blocks import Figure
    from costmodel.memo.charts import mixed_splits, render_charts
    from costmodel.memo.content import memo_content

    scenario, decision = mixed
    content = memo_content(scenario, decision, today=dt.date(2026, 12, 1))
    assert content.charts is not None
    splits = mixed_splits(content.charts)
    option = decision.option("h100")
    burst = option.burst_replicas_by_hour
    assert splits == {"h100": (f"base 1 + burst {min(burst)}..{max(burst)}",
                               pytest.approx(option.capacity_requests_per_second))}
    caption = next(b for b in content.blocks if isinstance(b, Figure) and b.key == "traffic").caption
    assert f"h100: base 1 + burst {min(burst)}..{max(burst)}" in caption
    image = render_charts(content.charts, {"traffic"})["traffic"]  # draws the dashed base without error
    assert image.size[0] > 0 and image.size[1] > 0


def test_table_fleet_cell_names_the_split(mixed) -> None:  # type: ignore[no-untyped-def]
    _, decision = mixed
    option = decision.option("h100")
    burst = option.burst_replicas_by_hour
    assert fleet_cell(option) == f"mixed: base 1 + burst {min(burst)}..{max(burst)}"
    assert fleet_cell(decision.option("api")) == ""
    fixed = dataclasses.replace(option, scaling="fixed", replicas_by_hour=(3,) * 24, base_replicas=None,
                                burst_replicas_by_hour=None)
    assert fleet_cell(fixed) == "fixed: 3"
    auto = dataclasses.replace(fixed, scaling="autoscale", replicas_by_hour=(0,) * 17 + (5,) * 7)
    assert fleet_cell(auto) == "autoscale: 0..5 by hour"
