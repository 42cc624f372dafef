"""AppTest: the Search page runs the deployment search with a progress bar, shows the two fronts as a chart
and adds a configuration found to the scenario in one click (issue 15)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def test_cancel_stops_a_running_search_and_leaves_the_page_usable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A click while the search runs reaches the script as a rerun request (what the browser sends); the page's
    wait is interrupted at its next bar update, the worker's next progress call raises Cancelled, and the
    rerun draws the page as before the run, saying the search was stopped."""
    import threading
    import time

    from streamlit.runtime.scriptrunner import RerunData
    from streamlit.runtime.scriptrunner_utils.script_run_context import SCRIPT_RUN_CONTEXT_ATTR_NAME

    from app.background import BackgroundWork, Cancelled
    from app.views import search as search_page

    works: list[BackgroundWork[Any]] = []

    class Recorded(BackgroundWork[Any]):
        def start(self) -> BackgroundWork[Any]:
            works.append(self)
            return super().start()

    monkeypatch.setattr(search_page, "BackgroundWork", Recorded)
    at = _search_page()
    # The widgets as they are before Run is pressed: a rerun with them is a click on any widget but Run
    # (Cancel's own trigger needs its widget id, known only inside the running script).
    before_run = at._tree.get_widget_states()
    clicked = threading.Event()

    def endless_search(scenario: Scenario, *, progress: Any, **_: Any) -> Any:
        for step in range(1_000_000):
            progress(0.5, f"simulated {step:,} configurations")
            if step == 3:
                ctx = next(getattr(t, SCRIPT_RUN_CONTEXT_ATTR_NAME) for t in threading.enumerate()
                           if getattr(t, SCRIPT_RUN_CONTEXT_ATTR_NAME, None) is not None)
                ctx.script_requests.request_rerun(RerunData(widget_states=before_run,
                                                            page_script_hash=ctx.page_script_hash))
                clicked.set()
            time.sleep(0.01)
        raise AssertionError("the search ran to its end: it was never cancelled")

    monkeypatch.setattr(search_page, "search", endless_search)
    at.button(key="search_run").click().run()
    assert clicked.is_set() and len(works) == 1
    assert works[0].join(timeout_seconds=60)  # the worker thread ended ...
    assert works[0].cancelled and isinstance(works[0].error, Cancelled)  # ... on the cancel, not at its end
    assert not at.exception and not at.error
    assert any("The search was stopped at 50% (simulated" in w.value for w in at.warning)
    assert "search_last" not in at.session_state  # nothing kept from the stopped run
    assert not at.get("progress")  # the rerun is the page before the run: no bar, Run ready again
    assert not at.button(key="search_run").disabled
    at.number_input(key="search_top_k").set_value(3).run()  # the page still answers its widgets
    assert not at.exception and at.number_input(key="search_top_k").value == 3


def test_background_work_returns_its_result_and_its_error() -> None:
    from app.background import BackgroundWork

    seen: list[tuple[float, str]] = []
    done = BackgroundWork(lambda progress: (progress(0.5, "half"), 42)[1]).start()
    assert done.wait(lambda f, t: seen.append((f, t)), poll_seconds=0.01) == 42

    def fails(progress: Any) -> int:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        BackgroundWork(fails).start().wait(lambda f, t: None, poll_seconds=0.01)


def test_an_interrupted_wait_cancels_the_work_at_its_next_progress_call() -> None:
    import threading

    from app.background import BackgroundWork, Cancelled

    started, calls = threading.Event(), []

    def work(progress: Any) -> None:
        started.set()
        for step in range(1_000_000):
            calls.append(step)
            progress(step / 1e6, "step")
            threading.Event().wait(0.001)

    class Click(Exception):
        pass

    def draw(fraction: float, text: str) -> None:
        if started.is_set():
            raise Click  # what Streamlit raises inside a st call once a widget was clicked

    job = BackgroundWork(work).start()
    with pytest.raises(Click):
        job.wait(draw, poll_seconds=0.01)
    assert job.join(timeout_seconds=60) and isinstance(job.error, Cancelled)
    assert len(calls) < 1_000_000
