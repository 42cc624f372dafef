"""AppTest: the landing page answers first; invalid widget values never read "applied"; the internal
tiny-test model is not offered; the Prices page shows no server path; the copy link holds the scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from app import glossary
from app.scenario_io import load_example
from app.state import decode_token
from costmodel.decision.rank import decide
from costmodel.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
MAIN = str(ROOT / "app" / "main.py")


def _app() -> AppTest:
    return AppTest.from_file(MAIN, default_timeout=90).run()


def test_landing_page_shows_the_recommendation_first() -> None:
    at = _app()
    assert not at.exception
    assert at.title[0].value == "Overview"
    expected = decide(load_example("chat-assistant.yaml"))
    chosen = expected.option(expected.recommendation)
    assert expected.recommendation in at.success[0].value
    cost = next(m for m in at.metric if m.label == "Cost")
    assert cost.value == f"${chosen.usd_per_month:,.0f}/month"
    assert all(m.help for m in at.metric)  # every metric has a tooltip
    assert any(h.value == "What would change it" for h in at.subheader)


def test_copy_link_holds_the_scenario() -> None:
    at = _app()
    link = next(c.value for c in at.code if "?s=" in c.value)
    assert decode_token(link.split("?s=", 1)[1], Scenario) == load_example("chat-assistant.yaml")


@pytest.mark.parametrize(("key", "bad"), [
    ("sc_requests_per_day", -5.0),
    ("sc_growth_percent", -200.0),
    ("sc_ttft_p90", 0.0),
])
def test_invalid_value_is_never_applied(key: str, bad: float) -> None:
    at = _app().switch_page("views/scenario.py").run()
    before = at.session_state["scenario"]
    at.number_input(key=key).set_value(bad).run()
    assert not at.exception
    assert at.session_state["scenario"] == before  # the last valid scenario stays
    assert not at.success  # no "applied" banner while a value is invalid
    assert any("not applied" in w.value for w in at.warning)  # the summary at the top
    assert at.error  # and the field's message beside its section
    # The message follows the value: a valid value clears it (never a stale "got ...").
    at.number_input(key=key).set_value(before_value(before, key)).run()
    assert not at.error
    assert at.success


def before_value(scenario: Scenario, key: str) -> float:
    """The widget value the scenario shows for this key (display units)."""
    wl, slo = scenario.workload, scenario.slo
    return {"sc_requests_per_day": float(wl.requests_per_day or 0.0),
            "sc_growth_percent": wl.growth_per_month * 100.0,
            "sc_ttft_p90": slo.ttft_p90_seconds}[key]


def test_tiny_test_is_not_offered() -> None:
    at = _app().switch_page("views/roofline.py").run()
    assert "tiny-test" not in at.selectbox(key="rf_model").options
    at.switch_page("views/scenario.py").run()
    assert "tiny-test" not in at.selectbox(key="add_sh_model").options


def test_prices_page_shows_no_server_path() -> None:
    at = _app().switch_page("views/prices.py").run()
    assert not at.exception
    text = " ".join(c.value for c in at.caption)
    assert "api_prices" in text or "csv" in text
    assert str(ROOT) not in text


def test_glossary_covers_the_terms_the_issue_names() -> None:
    for term in ("TTFT", "TPOT", "ITL", "p90", "saturation", "break-even utilization", "goodput"):
        assert glossary.tip(term).startswith(f"**{term}**")
