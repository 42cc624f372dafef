"""AppTest: the Search page runs the deployment search with a progress bar, shows the two fronts as a chart
and adds a configuration found to the scenario in one click (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from app.page_list import PAGES
from app.scenario_io import load_example
from app.state import QUERY_PARAM, encode_token
from costmodel.scenario import Scenario, SelfHostOption

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")


def _search_page(scenario: Scenario | None = None) -> AppTest:
    """The Search page on the default example, or on `scenario` opened as a shared link (`?s=`)."""
    at = AppTest.from_file(MAIN, default_timeout=240)
    if scenario is not None:
        at.query_params[QUERY_PARAM] = encode_token(scenario)
    at.run()
    at.switch_page("views/search.py")
    return at.run()


def _search_qwen_on_l4(at: AppTest) -> None:
    at.multiselect(key="search_models").set_value(["qwen2.5-0.5b"])
    at.multiselect(key="search_hardware").set_value(["l4"])
    at.number_input(key="search_top_k").set_value(2)
    at.button(key="search_run").click().run()


def test_page_is_registered() -> None:
    assert any(p.file == "views/search.py" and p.title == "Search" for p in PAGES)


def test_search_runs_shows_the_front_and_adds_a_configuration() -> None:
    # The search follows the decision's rules (search/scope.py): the bundled chat example's quality floor
    # (at least llama-3.3-70b) rules out qwen2.5-0.5b, which has no lmarena-text score, and the page says so.
    refused = _search_page()
    assert not refused.exception and not refused.error
    _search_qwen_on_l4(refused)
    assert not refused.exception
    assert any("qwen2.5-0.5b: no lmarena-text score" in e.value and "quality floor" in e.value for e in refused.error)
    # The page's mechanism (run, front, add) on a small model: the chat example without its quality floor,
    # opened as a shared link, so a 0.5B model on one L4 is searched in seconds.
    at = _search_page(load_example("chat-assistant.yaml").model_copy(update={"quality": None}))
    assert not at.exception and not at.error
    assert at.session_state["scenario"].quality is None
    assert any("Run the search" in i.value for i in at.info)  # nothing runs until asked
    _search_qwen_on_l4(at)
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


def test_configurations_found_show_engine_and_scaling() -> None:
    # A search result put in the session (no search runs): two configurations that differ only in engine
    # profile and scaling, so the table must name both for the rows to differ before their prices.
    from app.views.search import LastSearch, search_basis
    from costmodel.search import Configuration, SearchResult

    base = {"model": "qwen2.5-7b", "hardware": "h100-sxm", "gpus_per_replica": 1, "weight_dtype": "bf16",
            "kv_dtype": "bf16", "offering": "lambda/h100-sxm/on-demand", "tokens_per_second_per_user": 40.0,
            "ttft_p90_seconds": 0.3, "meets_slo": True}
    autoscaled = Configuration(engine="vllm", scaling="autoscale", usd_per_month=1200.0, usd_per_mtok=0.3,
                               **base)  # type: ignore[arg-type]
    fixed = Configuration(engine="sglang", scaling="fixed", usd_per_month=2000.0, usd_per_mtok=0.5,
                          **base)  # type: ignore[arg-type]
    result = SearchResult(candidates_enumerated=2, candidates_pruned=0, candidates_simulated=2, seconds=1.0,
                          best=(autoscaled, fixed), frontier=(autoscaled, fixed))
    at = AppTest.from_file(MAIN, default_timeout=240).run()
    at.session_state["search_last"] = LastSearch(basis=search_basis(at.session_state["scenario"]), result=result,
                                                 top_k=2)
    at.switch_page("views/search.py").run()
    assert not at.exception and not at.error and not at.warning
    cells = [m.value for m in at.markdown]
    header = cells.index("**configuration**")
    assert cells[header:header + 7] == ["**configuration**", "**engine**", "**scaling**", "**$/month**",
                                        "**$/M tokens**", "**tok/s per user**", "**TTFT p90**"]
    first = cells.index("qwen2.5-7b, 1x h100-sxm bf16/bf16 (lambda/h100-sxm/on-demand) (cheapest)")
    assert cells[first + 1:first + 4] == ["vllm", "autoscale", "\\$1,200"]
    second = cells.index("qwen2.5-7b, 1x h100-sxm bf16/bf16 (lambda/h100-sxm/on-demand)")
    assert cells[second + 1:second + 4] == ["sglang", "fixed", "\\$2,000"]
