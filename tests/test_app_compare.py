"""AppTest: the Compare page renders the ranked decision on every bundled example; changing the volume
changes the table and the recommendation; a bad volume is an inline error."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from app.scenario_io import example_names, load_example
from app.state import decode_token
from costmodel.decision.rank import decide
from costmodel.scenario import Scenario

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")


def _compare(example: str | None = None) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=60).run()
    if example is not None:
        at.switch_page("views/scenario.py").run()  # the Overview page opens first
        at.selectbox(key="load_example_name").set_value(example)
        at.button(key="load_example_button").click().run()
    at.switch_page("views/compare.py")
    return at.run()


def _figure(at: AppTest, key: str) -> dict:
    chart = next(c for c in at.get("plotly_chart") if key in c.proto.id)
    return json.loads(chart.proto.spec)


def _array(values: object) -> list[float]:
    if isinstance(values, dict):  # plotly 7 base64-encodes numeric arrays
        return list(np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]))
    return list(values)  # type: ignore[call-overload]


@pytest.mark.parametrize("name", example_names())
def test_renders_the_ranked_decision(name: str) -> None:
    at = _compare(name)
    assert not at.exception
    assert not at.error
    decision = decide(load_example(name))
    table = at.dataframe[0].value
    assert list(table["option"]) == [o.name for o in decision.options]
    assert list(table["$/month"]) == pytest.approx([o.usd_per_month for o in decision.options])
    assert list(table["latency owner"]) == [o.latency_owner or "" for o in decision.options]
    assert f"**{decision.recommendation}**" in at.success[0].value
    months = any(o.usd_by_month for o in decision.usable_options)
    assert len(at.get("plotly_chart")) == 4 + months  # volume, utilization, breakdown, fleet (+ months)
    assert [w.value for w in at.warning] == list(decision.warnings)


def test_volume_change_changes_table_recommendation_and_link() -> None:
    at = _compare()
    before = at.dataframe[0].value
    base = decide(load_example("chat-assistant.yaml"))
    assert f"**{base.recommendation}**" in at.success[0].value
    at.number_input(key="cmp_requests_per_day").set_value(2_000_000.0).run()
    assert not at.exception
    after = at.dataframe[0].value
    scaled = load_example("chat-assistant.yaml")
    scaled = scaled.model_copy(update={"workload": scaled.workload.model_copy(update={"requests_per_day": 2e6})})
    decision = decide(scaled)
    # At 10x the volume the Llama 3.3 70B H100 fleet undercuts claude-haiku, the cheapest API with latency
    # evidence past the quality floor (decide says so; the 8B model is below the floor).
    assert decision.recommendation == "llama-3.3-70b-h100-tp4" != base.recommendation
    assert f"**{decision.recommendation}**" in at.success[0].value
    assert list(after["option"]) == [o.name for o in decision.options]
    assert list(after["$/month"]) != list(before["$/month"])  # the table follows the new volume
    assert decode_token(at.query_params["s"], Scenario).workload.requests_per_day == 2e6
    # The Scenario page shows the new volume too.
    at.switch_page("views/scenario.py").run()
    assert at.number_input(key="sc_requests_per_day").value == 2e6


def test_bad_volume_is_an_inline_error() -> None:
    at = _compare()
    at.number_input(key="cmp_requests_per_day").set_value(0.0).run()
    assert not at.exception
    assert len(at.error) == 1
    assert "workload.requests_per_day" in at.error[0].value
    assert at.session_state["scenario"].workload.requests_per_day == 200_000  # unchanged
    assert at.dataframe[0].value is not None


def test_volume_chart_marks_break_even_and_uses_one_color_per_option() -> None:
    # batch-summarizer: the one bundled example whose self-host option crosses its reference API within 1/100x ..
    # 100x of today's volume (rag-service's TP4 H100 fleet no longer crosses Fireworks: priced with the measured
    # all-reduce its capacity at the SLO is 11% lower, and its cost then grows ~5% faster than Fireworks' with volume).
    at = _compare("batch-summarizer.yaml")
    fig = _figure(at, "cmp_volume_chart")
    marks = next(t for t in fig["data"] if t.get("name") == "break-even")
    assert "llama-3.1-8b-l40s-spot = llama-3.1-8b-deepinfra" in marks["text"]
    # The one break-even (decide's break_even_tokens_per_month, where the re-sized fleet's cost line crosses the
    # API's), shown in billions on the chart.
    expected = decide(load_example("batch-summarizer.yaml")).option("llama-3.1-8b-l40s-spot").break_even_tokens_per_month
    assert expected is not None and _array(marks["x"])[0] == pytest.approx(expected / 1e9)
    volume_colors = {t["name"].split(" (")[0]: t["line"]["color"] for t in fig["data"] if " (" in t.get("name", "")}
    util = _figure(at, "cmp_utilization_chart")
    for trace in util["data"]:
        name = trace["name"].split(" (")[0].removesuffix(" now")
        if name in volume_colors:
            color = trace.get("line", {}).get("color") or trace.get("marker", {}).get("color")
            assert color == volume_colors[name]


def test_traffic_chart_shows_the_hourly_profile() -> None:
    at = _compare()
    fig = _figure(at, "cmp_traffic_chart")
    bars = next(t for t in fig["data"] if t["type"] == "bar")
    decision = decide(load_example("chat-assistant.yaml"))
    assert max(_array(bars["y"])) == pytest.approx(decision.peak_requests_per_second)
    assert any("replica" in t.get("name", "") for t in fig["data"])


def test_volume_edited_on_the_scenario_page_reaches_compare() -> None:
    at = _compare()
    at.switch_page("views/scenario.py").run()
    at.number_input(key="sc_requests_per_day").set_value(50_000.0).run()
    at.switch_page("views/compare.py").run()
    assert at.number_input(key="cmp_requests_per_day").value == 50_000.0
    scaled = load_example("chat-assistant.yaml")
    scaled = scaled.model_copy(update={"workload": scaled.workload.model_copy(update={"requests_per_day": 5e4})})
    assert list(at.dataframe[0].value["option"]) == [o.name for o in decide(scaled).options]


def test_tokens_per_month_scenarios_get_a_tokens_box() -> None:
    from app.state import encode_token

    scenario = load_example("batch-summarizer.yaml")
    data = scenario.model_dump(mode="json")
    data["workload"].pop("requests_per_day")
    data["workload"]["tokens_per_month"] = 6.7e9
    tokens = Scenario.model_validate(data)
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.query_params["s"] = encode_token(tokens)
    at.run()
    at.switch_page("views/compare.py").run()
    assert not at.exception
    box = at.number_input(key="cmp_tokens_per_month")
    assert box.value == 6.7e9 and box.label.startswith("Tokens per month")
    box.set_value(6.7e10).run()
    assert at.session_state["scenario"].workload.tokens_per_month == 6.7e10
    assert f"**{decide(at.session_state['scenario']).recommendation}**" in at.success[0].value


def test_fleet_chart_draws_replicas_by_hour_and_months_say_not_computed() -> None:
    at = _compare()
    decision = decide(load_example("chat-assistant.yaml"))
    fig = _figure(at, "cmp_traffic_chart")
    lines = [t for t in fig["data"] if t["type"] == "scatter"]
    drawn = {o.name for o in decision.usable_options if o.kind != "api" and max(o.replicas_by_hour or (0,)) > 0}
    assert {t["name"].split(" (")[0].split(":")[0] for t in lines} == drawn
    for trace in (t for t in lines if " (" in t["name"].split(":")[0]):  # the fleets (a mixed base is dashed)
        option = decision.option(trace["name"].split(" (")[0])
        assert _array(trace["y"]) == list(option.replicas_by_hour)  # the chart is in replicas
        expected = [r * option.capacity_requests_per_second for r in option.replicas_by_hour]
        assert _array(trace["customdata"]) == pytest.approx(expected)  # requests/s they carry, in the hover
    assert fig["layout"]["yaxis"]["title"]["text"] == "replicas paid"
    if not any(o.usd_by_month for o in decision.usable_options):  # no horizon yet: say so, draw nothing
        assert any("Horizon not computed" in i.value for i in at.info)
        assert not any("cmp_months_chart" in c.proto.id for c in at.get("plotly_chart"))


def _whatif_table(at: AppTest):  # type: ignore[no-untyped-def]
    return next(d.value for d in at.dataframe if "$/month today" in d.value.columns)


def test_whatif_panel_tornado_flip_sentence_and_multiplier() -> None:
    at = _compare()
    assert not any("cmp_tornado_chart" in c.proto.id for c in at.get("plotly_chart"))  # off: reruns stay fast
    at.toggle(key="cmp_whatif_on").set_value(True).run()
    tornado = _figure(at, "cmp_tornado_chart")
    assert {t["name"] for t in tornado["data"]} == {"input -20%", "input +20%"}
    assert any("flip" in m.value for m in at.markdown)
    table = _whatif_table(at)
    assert "$/month at 1x" in table.columns
    at.select_slider(key="cmp_whatif_multiplier").set_value(10.0).run()
    assert not at.exception
    scaled = _whatif_table(at)
    assert "$/month at 10x" in scaled.columns
    decision = decide(load_example("chat-assistant.yaml"))
    api = next(o for o in decision.usable_options if o.kind == "api")
    row = scaled[scaled["option"] == api.name].iloc[0]
    assert row["$/month at 10x"] == f"${10 * api.usd_per_month:,.0f}"  # API cost is linear in volume
