"""The memo's finishing touches without building a PDF: a tornado with no spread becomes a sentence, the
operating sections (Drawbacks, Rollback, Monitoring) take their thresholds from the SLO and the decision,
and the no-feasible memo still lists the prices it used. The Search chart's axes start where the data does."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.views.search import axis_range
from costmodel.decision.sensitivity import Advantage, Sensitivity, SensitivityBar
from costmodel.memo.blocks import Bullets, Figure, Para, Table
from costmodel.memo.content import _tornado_blocks
from costmodel.memo.operate import monitoring_blocks
from costmodel.memo.review import reliability_blocks
from costmodel.memo.risks import sources_table
from costmodel.scenario import parse_scenario
from tests.test_app_round_trip import batch_floor


def _sensitivity(low: float, high: float, base: float = 0.0) -> Sensitivity:
    bar = SensitivityBar(factor="gpu", label="GPU price", method="economics", low_scale=0.8, high_scale=1.2,
                         low=Advantage(usd_per_month=low, alternative="b"),
                         high=Advantage(usd_per_month=high, alternative="b"))
    return Sensitivity(recommendation="a", fraction=0.2, base=Advantage(usd_per_month=base, alternative="b"),
                       bars=(bar,), flip_below=None, flip_above=None)


def test_a_tornado_with_no_spread_is_a_sentence() -> None:
    decision = SimpleNamespace(chosen_name=lambda: "a")
    flat = _tornado_blocks(decision, _sensitivity(-0.2, 0.3))  # type: ignore[arg-type]
    assert len(flat) == 1 and isinstance(flat[0], Para) and "no tornado" in flat[0].text
    wide = _tornado_blocks(decision, _sensitivity(-500.0, 800.0))  # type: ignore[arg-type]
    assert isinstance(wide[0], Figure) and isinstance(wide[1], Table)


def _decision(**chosen: object) -> SimpleNamespace:
    option = SimpleNamespace(**{"name": "own", "kind": "self-host", "target_peak_utilization": 0.8, "min_replicas": 2,
                                "spare_replicas": 1, "usd_per_month": 1000.0, "meets_slo": True, **chosen})
    runner = SimpleNamespace(name="api", kind="api", usd_per_month=1500.0, meets_slo=True)
    return SimpleNamespace(chosen=lambda: option, usable_options=[option, runner], options=[option, runner])


def test_monitoring_thresholds_come_from_the_slo_and_the_decision() -> None:
    scenario = parse_scenario(batch_floor())  # TTFT p90 30 s, TPOT p90 200 ms, E2E p99 120 s
    table = monitoring_blocks(_decision(), scenario, _sensitivity(-500.0, 800.0))[0]  # type: ignore[arg-type]
    assert isinstance(table, Table)
    rows = {row[0].split(" (")[0]: row[1] for row in table.rows}
    assert rows["TTFT p90"] == "above 30.00 s" and rows["TPOT p90"] == "above 200 ms" and rows["E2E p99"] == "above 120.00 s"
    assert rows["Peak-hour utilization of the self-hosted replicas"] == "above 80%"
    assert rows["Healthy replicas"] == "fewer than 2"
    assert rows["Monthly bill"] == "above $1,500"  # the runner-up's bill, where the choice stops paying


def test_replica_alert_and_reliability_follow_the_fleet_policy() -> None:
    scenario = parse_scenario(batch_floor())
    for spare, named in ((1, True), (0, False)):  # N+1 is named only where the policy keeps a spare
        table = monitoring_blocks(_decision(min_replicas=1, spare_replicas=spare), scenario,  # type: ignore[arg-type]
                                  _sensitivity(-500.0, 800.0))[0]
        assert isinstance(table, Table)
        why = {row[0]: row[2] for row in table.rows}["Healthy replicas"]
        assert ("(N+1)" in why) is named
    # One replica for the peak, none to spare: the batch policy (spare_replicas 0) is stated, not overruled.
    for spare, advice in ((0, "keeps no spare replica"), (1, "add a spare replica for N+1")):
        option = SimpleNamespace(name="own", kind="self-host", replicas=1, capacity_requests_per_second=2.0,
                                 spare_replicas=spare)
        decision = SimpleNamespace(usable_options=[option], peak_requests_per_second=1.5)
        (bullets,) = reliability_blocks(decision)  # type: ignore[arg-type]
        assert isinstance(bullets, Bullets) and len(bullets.items) == 1 and advice in bullets.items[0]


def test_a_hybrid_with_no_replica_floor_gets_no_healthy_replicas_alert() -> None:
    # A hybrid's floor is 0 (decision/hybrid.py): its API takes a base replica down, so no alert on a count.
    scenario = parse_scenario(batch_floor())
    table = monitoring_blocks(_decision(kind="hybrid", min_replicas=0), scenario,  # type: ignore[arg-type]
                              _sensitivity(-500.0, 800.0))[0]
    assert isinstance(table, Table)
    assert "Healthy replicas" not in {row[0] for row in table.rows}


def test_sources_of_a_memo_with_nothing_feasible() -> None:
    source = SimpleNamespace(what="API price x", source="sheet", checked="2026-12-01", age_days=3)
    option = SimpleNamespace(price_sources=[source])
    table = sources_table(SimpleNamespace(usable_options=[], options=[option]))  # type: ignore[arg-type]
    assert table.rows == (("API price x", "sheet", "2026-12-01", "3 d"),)


@pytest.mark.parametrize(("values", "expected"), [
    ([0.5], [0.4, 0.6]),  # one point: +-20%, never a negative axis
    ([1.0, 2.0], [0.88, 2.12]),
    ([0.01, 5.0], [0.0, 5.5988]),
])
def test_search_axes_start_where_the_data_does(values: list[float], expected: list[float]) -> None:
    assert axis_range(values) == pytest.approx(expected)


def test_chart_legends_fall_back_to_a_cjk_font_when_a_name_needs_it() -> None:
    from costmodel.memo.charts import _cjk_family
    from costmodel.memo.cjk import cjk_font_path

    assert _cjk_family(["plain-name"]) is None  # no CJK: DejaVu alone, no font loaded
    if cjk_font_path() is None:
        pytest.skip("needs Debian's fonts-noto-cjk")
    assert "CJK" in str(_cjk_family(["東京-haiku"]))
