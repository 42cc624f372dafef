"""AppTest: the Search page runs the deployment search with a progress bar, shows the two fronts as a chart
and adds a configuration found to the scenario in one click (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from app.page_list import PAGES
from costmodel.scenario import Scenario, SelfHostOption

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")


def _search_page() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=240).run()
    at.switch_page("views/search.py")
    return at.run()


def test_page_is_registered() -> None:
    assert any(p.file == "views/search.py" and p.title == "Search" for p in PAGES)


def test_search_runs_shows_the_front_and_adds_a_configuration() -> None:
    at = _search_page()
    assert not at.exception and not at.error
    assert any("Run the search" in i.value for i in at.info)  # nothing runs until asked
    at.multiselect(key="search_models").set_value(["qwen2.5-0.5b"])
    at.multiselect(key="search_hardware").set_value(["l4"])
    at.number_input(key="search_top_k").set_value(2)
    at.button(key="search_run").click().run()
    assert not at.exception and not at.error
    assert at.get("progress")  # the progress bar, at "Done" once the search returns
    assert at.get("plotly_chart")
    before = at.session_state["scenario"]
    assert isinstance(before, Scenario)
    at.button(key="search_add_1").click().run()
    assert not at.exception and not at.error
    after = at.session_state["scenario"]
    added = [o for o in after.options if o.name not in {p.name for p in before.options}]
    assert len(added) == 1 and isinstance(added[0], SelfHostOption)
    assert added[0].name.startswith("search-1-qwen2.5-0.5b-l4-")
    assert added[0].model == "qwen2.5-0.5b" and added[0].hardware == "l4"
    assert any("Added" in s.value for s in at.success)
    assert at.button(key="search_add_1").disabled  # one click adds it once
