"""AppTest: the Prices page lists both sheets with source and age, filters them, overrides a GPU price
(saved in the scenario) and an API price (this session, used by Compare), and refreshes safely."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from app.state import decode_token
from costmodel.decision.rank import decide
from costmodel.pricing import load_api_prices, load_gpu_prices
from costmodel.pricing.sheets import default_sheet_path
from costmodel.scenario import Scenario

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")


def _prices() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=60).run()
    at.switch_page("views/prices.py")
    return at.run()


def test_both_sheets_with_source_and_age() -> None:
    at = _prices()
    assert not at.exception and not at.error
    api, gpu = at.dataframe[0].value, at.dataframe[1].value
    assert len(api) == len(load_api_prices().rows) and len(gpu) == len(load_gpu_prices().rows)
    for table in (api, gpu):
        assert {"source", "checked", "age (days)"} <= set(table.columns)
        assert (table["age (days)"] >= 0).all()
    assert any("days old" in c.value or "day old" in c.value for c in at.caption)


def test_filters() -> None:
    at = _prices()
    at.multiselect(key="pr_api_providers").set_value(["anthropic"])
    at.text_input(key="pr_api_search").set_value("haiku")
    at.multiselect(key="pr_gpu_accelerators").set_value(["h100-sxm"])
    at.multiselect(key="pr_gpu_offerings").set_value(["spot"])
    at.run()
    api, gpu = at.dataframe[0].value, at.dataframe[1].value
    assert len(api) >= 1 and all(i.startswith("anthropic/") and "haiku" in i for i in api["id"])
    assert len(gpu) >= 1 and set(gpu["accelerator"]) == {"h100-sxm"} and set(gpu["offering"]) == {"spot"}


def test_gpu_override_is_saved_in_the_scenario_and_link() -> None:
    at = _prices()
    at.selectbox(key="pr_ovr_gpu_option").set_value("llama-3.1-8b-l40s")
    at.number_input(key="pr_ovr_gpu_price").set_value(0.5)
    at.button(key="pr_ovr_gpu_apply").click().run()
    assert not at.exception
    linked = decode_token(at.query_params["s"], Scenario)
    assert linked.option("llama-3.1-8b-l40s").usd_per_gpu_hour == 0.5  # type: ignore[union-attr]
    at.switch_page("views/compare.py").run()
    # $0.50/GPU-hour makes the L40S option the cheapest (decide on the same scenario agrees).
    assert f"**{decide(linked).recommendation}**" in at.success[0].value
    at.switch_page("views/prices.py").run()
    at.selectbox(key="pr_ovr_gpu_option").set_value("llama-3.1-8b-l40s").run()
    at.button(key="pr_ovr_gpu_clear").click().run()
    assert decode_token(at.query_params["s"], Scenario).option("llama-3.1-8b-l40s").usd_per_gpu_hour is None  # type: ignore[union-attr]


def test_gpu_override_without_a_price_is_an_inline_error() -> None:
    at = _prices()
    at.button(key="pr_ovr_gpu_apply").click().run()
    assert not at.exception
    assert any("enter a \\$/GPU-hour" in e.value for e in at.error)  # "$" escaped for Markdown


def test_api_override_reaches_the_compare_page() -> None:
    at = _prices()
    at.selectbox(key="pr_ovr_api_row").set_value("deepinfra/llama-3.3-70b")
    at.number_input(key="pr_ovr_api_out").set_value(50.0)
    at.button(key="pr_ovr_api_apply").click().run()
    assert not at.exception
    assert at.session_state["api_price_overrides"] == {"deepinfra/llama-3.3-70b": {"output_usd_per_mtok": 50.0}}
    at.switch_page("views/compare.py").run()
    assert any("overrides" in i.value for i in at.info)
    table = at.dataframe[0].value
    row = table[table["option"] == "llama-3.3-70b-deepinfra"].iloc[0]
    default = decide(at.session_state["scenario"]).option("llama-3.3-70b-deepinfra")
    assert row["$/month"] > default.usd_per_month  # 50 $/M output instead of the sheet's price


def test_failed_refresh_is_inline_and_keeps_the_file() -> None:
    path = default_sheet_path("gpu")
    before = path.read_bytes()
    at = _prices()
    at.radio(key="pr_refresh_kind").set_value("gpu")
    at.text_input(key="pr_refresh_url").set_value("http://127.0.0.1:9/prices.csv")  # discard port: refused
    at.button(key="pr_refresh_button").click().run()
    assert not at.exception
    assert any("Refresh of the gpu sheet failed" in e.value and "unchanged" in e.value for e in at.error)
    assert path.read_bytes() == before
