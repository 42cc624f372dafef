"""AppTest: the Scenario page loads every bundled example, uploads files, edits fields and options,
and shows bad values inline (naming the field) without applying them."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from app.scenario_io import example_names, load_example, scenario_yaml_bytes

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")


def _app() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=60)
    return at.run().switch_page("views/scenario.py").run()  # the Overview page opens first


def _load(at: AppTest, name: str) -> AppTest:
    at.selectbox(key="load_example_name").set_value(name)
    at.button(key="load_example_button").click()
    return at.run()


@pytest.mark.parametrize("name", example_names())
def test_each_bundled_example_renders_and_stays_unchanged(name: str) -> None:
    at = _load(_app(), name)
    assert not at.exception
    assert not at.error
    expected = load_example(name)
    assert at.session_state["scenario"] == expected
    assert at.text_input(key="sc_name").value == expected.name
    assert any(expected.name in s.value for s in at.success)
    # One data editor per option kind, with the example's rows.
    assert sum(len(editor.value) for editor in at.data_editor if "sc_options_" in (editor.key or "")) == len(
        expected.options
    )


def test_upload_replaces_the_scenario() -> None:
    at = _app()
    upload = load_example("rag-service.yaml").model_copy(update={"name": "uploaded rag"})
    at.file_uploader(key="load_upload").upload("mine.yaml", scenario_yaml_bytes(upload), "application/x-yaml")
    at.run()
    assert not at.exception
    assert at.session_state["scenario"] == upload
    assert at.text_input(key="sc_name").value == "uploaded rag"
    assert at.radio(key="sc_traffic_mode").value == "peak-to-mean ratio"


def test_bad_upload_is_an_inline_error() -> None:
    at = _app()
    at.file_uploader(key="load_upload").upload("broken.yaml", b"name: x\nworkload: [1, 2\n", "application/x-yaml")
    at.run()
    assert not at.exception
    assert any("broken.yaml" in e.value and "YAML" in e.value for e in at.error)
    assert at.session_state["scenario"].name == "chat-assistant"


def test_bad_value_is_an_inline_error_naming_the_field() -> None:
    at = _app()
    before = at.session_state["scenario"]
    at.number_input(key="sc_ttft_p90").set_value(0.0).run()
    assert not at.exception
    assert len(at.error) == 1
    assert "slo.ttft_p90_seconds" in at.error[0].value
    assert at.session_state["scenario"] == before  # not applied


def test_inconsistent_uniform_distribution_names_the_field() -> None:
    at = _app()
    at.selectbox(key="sc_output_kind").set_value("uniform").run()
    at.number_input(key="sc_output_low").set_value(500)
    at.number_input(key="sc_output_high").set_value(100)
    at.run()
    assert not at.exception
    assert any("workload.output_tokens" in e.value and "high_tokens" in e.value for e in at.error)


def test_volume_change_is_applied() -> None:
    at = _app()
    at.radio(key="sc_volume_mode").set_value("tokens per month").run()
    at.number_input(key="sc_tokens_per_month").set_value(5e9).run()
    assert not at.exception
    workload = at.session_state["scenario"].workload
    assert workload.tokens_per_month == 5e9 and workload.requests_per_day is None


def test_switching_to_peak_to_mean() -> None:
    at = _app()
    at.radio(key="sc_traffic_mode").set_value("peak-to-mean ratio").run()
    at.number_input(key="sc_peak_to_mean").set_value(3.0).run()
    assert not at.exception
    workload = at.session_state["scenario"].workload
    assert workload.peak_to_mean_ratio == 3.0 and workload.hourly_traffic_weights is None


def test_add_an_api_option_found_by_search() -> None:
    at = _app()
    count = len(at.session_state["scenario"].options)
    at.multiselect(key="add_api_providers").set_value(["groq"])
    at.text_input(key="add_api_search").set_value("llama")
    at.run()
    choices = at.selectbox(key="add_api_row").options  # labels: "id  (in $x, out $y per M tokens)"
    assert choices and all(c.startswith("groq/") and "llama" in c.split()[0] for c in choices)
    chosen = at.selectbox(key="add_api_row").value
    at.button(key="add_api_button").click().run()
    assert not at.exception
    scenario = at.session_state["scenario"]
    assert len(scenario.options) == count + 1
    assert scenario.options[-1].price_id == chosen == choices[0].split()[0]


def test_add_a_self_host_option() -> None:
    at = _app()
    at.selectbox(key="add_sh_model").set_value("qwen2.5-7b")
    at.selectbox(key="add_sh_hardware").set_value("l4").run()
    offering = next(o for o in at.selectbox(key="add_sh_offering").options if o.startswith("l4") or "/l4/" in o)
    at.selectbox(key="add_sh_offering").set_value(offering)
    at.button(key="add_sh_button").click().run()
    assert not at.exception
    added = at.session_state["scenario"].options[-1]
    assert (added.model, added.hardware, added.offering) == ("qwen2.5-7b", "l4", offering)


def test_self_host_without_a_price_is_refused_inline() -> None:
    at = _app()
    count = len(at.session_state["scenario"].options)
    at.selectbox(key="add_sh_offering").set_value(None)
    at.button(key="add_sh_button").click().run()
    assert not at.exception
    assert any("Add option" in e.value and "usd_per_gpu_hour" in e.value for e in at.error)
    assert len(at.session_state["scenario"].options) == count


def test_deleting_a_row_in_the_options_table() -> None:
    at = _app()
    api_key = next(e.key for e in at.data_editor if e.key and e.key.startswith("sc_options_api_"))
    first_api = at.data_editor(key=api_key).value["name"][0]
    # A hybrid names an API option; delete one no hybrid uses.
    hybrid_api = at.session_state["scenario"].option("llama-70b-base-plus-deepinfra").api
    names = list(at.data_editor(key=api_key).value["name"])
    row = next(i for i, n in enumerate(names) if n != hybrid_api)
    at.session_state[api_key] = {"edited_rows": {}, "added_rows": [], "deleted_rows": [row]}
    at.run()
    assert not at.exception
    remaining = [o.name for o in at.session_state["scenario"].options]
    assert names[row] not in remaining and (row != 0 or first_api not in remaining)


def test_renaming_an_api_option_used_by_a_hybrid_names_the_problem() -> None:
    at = _renamed_deepinfra_api()
    assert not at.exception
    assert any("hybrid option" in e.value and "llama-3.3-70b-deepinfra" in e.value for e in at.error)


def test_editing_the_hourly_profile() -> None:
    at = _app()
    editor = next(e.key for e in at.data_editor if e.key and e.key.startswith("sc_hourly_"))
    at.session_state[editor] = {"edited_rows": {3: {"weight": 30.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception and not at.error
    weights = at.session_state["scenario"].workload.hourly_traffic_weights
    expected = list(load_example("chat-assistant.yaml").workload.hourly_traffic_weights)
    expected[3] = 30.0
    assert weights == expected


def test_an_unapplied_table_edit_survives_another_page() -> None:
    """A rename the scenario refuses (a hybrid names the old name) stays in the API table, and its message
    beside it, through a visit to Compare: the table's edits come back like the other widgets' values."""
    at = _renamed_deepinfra_api()
    assert any("hybrid option" in e.value for e in at.error)
    at.switch_page("views/compare.py").run()
    assert not at.exception
    at.switch_page("views/scenario.py").run()
    assert not at.exception
    api_key = next(e.key for e in at.data_editor if e.key and e.key.startswith("sc_options_api_"))
    shown = list(at.data_editor(key=api_key).value["name"])
    assert "renamed" in shown and "llama-3.3-70b-deepinfra" not in shown
    assert any("hybrid option" in e.value and "llama-3.3-70b-deepinfra" in e.value for e in at.error)
    # The scenario itself was never changed by the refused edit.
    assert "llama-3.3-70b-deepinfra" in [o.name for o in at.session_state["scenario"].options]


def test_an_unapplied_hourly_edit_survives_another_page() -> None:
    at = _app()
    editor = next(e.key for e in at.data_editor if e.key and e.key.startswith("sc_hourly_"))
    before = at.session_state["scenario"]
    at.session_state[editor] = {"edited_rows": {3: {"weight": -1.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert any("hourly_traffic_weights" in e.value for e in at.error)
    at.switch_page("views/prices.py").run()
    at.switch_page("views/scenario.py").run()
    assert not at.exception
    editor = next(e.key for e in at.data_editor if e.key and e.key.startswith("sc_hourly_"))
    assert at.data_editor(key=editor).value["weight"][3] == -1.0
    assert any("hourly_traffic_weights" in e.value for e in at.error)
    assert at.session_state["scenario"] == before


def _renamed_deepinfra_api() -> AppTest:
    """The chat example with its DeepInfra API row renamed in the table (a hybrid still names the old name)."""
    at = _app()
    api_key = next(e.key for e in at.data_editor if e.key and e.key.startswith("sc_options_api_"))
    names = list(at.data_editor(key=api_key).value["name"])
    row = names.index("llama-3.3-70b-deepinfra")
    at.session_state[api_key] = {"edited_rows": {row: {"name": "renamed"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    return at
