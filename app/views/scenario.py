"""Scenario page: load (bundled example, upload, link) and save the scenario; edit its workload, SLO
and options. Widgets -> one library call (parse_scenario + check_scenario_ids) -> the current scenario.

Owns: the load/save expander and applying the edited draft; the widgets themselves are in
app.scenario_form (workload and SLO) and app.scenario_options (the options tables and pickers).
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from pydantic import ValidationError

from app import cache, state
from app.option_details import option_details
from app.scenario_form import workload_and_slo
from app.scenario_io import (
    example_names,
    file_stem,
    load_example,
    parse_upload,
    scenario_json_bytes,
    scenario_yaml_bytes,
)
from app.scenario_options import add_pickers, options_editor
from app.scenario_settings import settings_editor
from app.widgets import md
from costmodel.errors import CostmodelError
from costmodel.scenario import Scenario, check_scenario_ids
from costmodel.scenario.model import scenario_error_lines

LOAD_ERROR_KEY = "load_error"


def _load_example() -> None:
    name = st.session_state["load_example_name"]
    state.set_scenario(load_example(name), source=f"example {name}")


def _load_upload() -> None:
    uploaded = st.session_state.get("load_upload")
    if uploaded is None:
        return
    try:
        state.set_scenario(parse_upload(uploaded.name, uploaded.getvalue()), source=f"uploaded {uploaded.name}")
    except CostmodelError as exc:
        st.session_state[LOAD_ERROR_KEY] = f"{uploaded.name}: {exc}"


def _load_or_save(scenario: Scenario) -> None:
    """Load a bundled example or an uploaded file; download the scenario as YAML or JSON."""
    with st.expander("Load or save", expanded=False):
        cols = st.columns([2, 1, 3])
        cols[0].selectbox("Bundled example", example_names(), key="load_example_name")
        cols[1].button("Load example", key="load_example_button", on_click=_load_example)
        cols[2].file_uploader("Upload a scenario (.yaml, .yml, .json)", type=["yaml", "yml", "json"], key="load_upload",
                              on_change=_load_upload)
        cols = st.columns(3)
        cols[0].download_button("Download YAML", scenario_yaml_bytes(scenario), file_name=f"{file_stem(scenario)}.yaml",
                                mime="application/x-yaml", key="save_yaml")
        cols[1].download_button("Download JSON", scenario_json_bytes(scenario), file_name=f"{file_stem(scenario)}.json",
                                mime="application/json", key="save_json")
        cols[2].caption(f"Loaded from: {st.session_state.get(state.SOURCE_KEY, '?')}")


# Which page section shows the error of a scenario field (its first path element); others go to the top.
SECTION_OF = {"workload": "workload", "slo": "slo", "options": "options", "fleet": "settings",
              "horizon_months": "settings", "quality": "settings", "substitutes": "settings",
              "accept_unverified_latency": "settings", "owner": "settings", "goals": "settings",
              "non_goals": "settings", "constraints": "settings", "search": "settings",
              "": "options"}  # the scenario's own checks (unique names, hybrids' references) are about options


def _validate(draft: dict[str, Any]) -> tuple[Scenario | None, list[tuple[str, str]]]:
    """The draft as a Scenario with known ids, or (None, [(section, message), ...])."""
    try:
        edited = Scenario.model_validate(draft)
    except ValidationError as exc:
        return None, [(SECTION_OF.get(top, "top"), text) for top, text in scenario_error_lines(exc)]
    try:
        check_scenario_ids(
            edited, api_price_ids=cache.api_price_ids(), gpu_offerings=cache.gpu_offering_accelerators(),
            model_ids=cache.model_ids(), hardware_ids=cache.hardware_ids(),
        )
    except CostmodelError as exc:
        return None, [("options", str(exc))]
    return edited, []


def render() -> None:
    """The Scenario page."""
    st.title("Scenario")
    st.caption("Your workload, its latency SLO and the options to compare. Every change is checked and applied "
               "at once; the page's link (the `s` query parameter) and the files below hold the whole scenario.")
    scenario = state.current()
    errors = st.container()
    load_error = st.session_state.pop(LOAD_ERROR_KEY, None)
    if load_error:
        errors.error(f"**Scenario file**: {md(load_error)}")

    _load_or_save(scenario)

    # The draft starts as the whole scenario: a field no widget changed stays exactly as loaded.
    draft: dict[str, Any] = scenario.model_dump(mode="json", exclude_none=True)
    slots: dict[str, Any] = {"top": errors}
    draft |= workload_and_slo(scenario, slots=slots)
    st.subheader("Options to compare")
    draft["options"] = options_editor(scenario)
    slots["options"] = st.container()
    option_details(scenario)
    add_pickers(scenario)
    settings_editor(scenario, draft)
    slots["settings"] = st.container()

    edited, problems = _validate(draft)
    if edited is None:
        errors.warning("Scenario not applied (the other pages still show the last valid one): "
                       + md("; ".join(text for _, text in problems)))
        for section, text in problems:
            slots[section].error(md(text))
        return
    if edited != scenario:
        state.set_scenario(edited, source="edited", reload_widgets=False)
    errors.success(f"**{md(edited.name)}**: {len(edited.options)} options; the other pages use this scenario.")


if __name__ == "__main__":  # st.navigation runs this file as a script: render through the imported module
    from app.views import scenario

    scenario.render()
