"""AppTest: the Latency page simulates every self-host option of each bundled example, draws the SLO,
and says why when an option cannot meet it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from app.scenario_io import example_names, load_example
from app.state import encode_token

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")


def _latency(query: dict[str, str] | None = None, example: str | None = None) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=120)
    if query:
        at.query_params.update(query)
    at.run()
    if example is not None:
        at.switch_page("views/scenario.py").run()  # the Overview page opens first
        at.selectbox(key="load_example_name").set_value(example)
        at.button(key="load_example_button").click().run()
    at.switch_page("views/latency.py").run()
    at.selectbox(key="lat_requests").set_value(200)
    return at.run()


@pytest.mark.parametrize("name", example_names())
def test_renders_each_example(name: str) -> None:
    at = _latency(example=name)
    assert not at.exception
    assert not at.error
    self_hosts = [o.name for o in load_example(name).options if o.kind == "self-host"]
    assert list(at.dataframe[0].value["option"]) == self_hosts
    assert len(at.get("plotly_chart")) == 3


def test_slo_is_drawn_on_the_charts() -> None:
    at = _latency()
    charts = {c.proto.id.split("-")[-1]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    tpot = next(spec for key, spec in charts.items() if "lat_tpot_chart" in key)
    assert any(t["name"] == "SLO p90 50 ms" for t in tpot["data"])  # chat-assistant: TPOT p90 <= 50 ms
    curve = next(spec for key, spec in charts.items() if "lat_curve_chart" in key)
    assert any("= 20 tokens/s per user" in t["name"] for t in curve["data"])


def test_deselecting_every_option_asks_for_one() -> None:
    at = _latency()
    at.multiselect(key="lat_options").set_value([]).run()
    assert not at.exception
    assert any("at least one option" in i.value for i in at.info)
    assert not at.get("plotly_chart")


def test_infeasible_slo_is_explained_in_the_table() -> None:
    scenario = load_example("chat-assistant.yaml")
    tight = scenario.model_copy(update={"slo": scenario.slo.model_copy(update={"tpot_p90_seconds": 0.001})})
    at = _latency({"s": encode_token(tight)})
    assert not at.exception
    table = at.dataframe[0].value
    assert not table["meets SLO at some load"].any()
    assert all("decode step" in why for why in table["why not"])
