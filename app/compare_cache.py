"""The Compare page's cached library calls (decide + chart data, the what-if panel), in a module that
imports neither plotly nor pandas: the Overview page (the first one a user sees) reads the same cache
without paying for the Compare page's figure imports (~0.6 s CPU of a cold first render)."""

from __future__ import annotations

import streamlit as st

from app.cache import api_sheet_for, gpu_sheet
from app.cache_capacity import capacity_cache
from costmodel.charts.compare import CompareView, compare_view
from costmodel.charts.whatif import WhatIf, whatif
from costmodel.measurements.calibration import Calibration
from costmodel.scenario import Scenario


@st.cache_data(show_spinner="Evaluating the options...", max_entries=64)
def cached_compare_view(scenario_json: str, calibration_json: str | None = None,
                        overrides_json: str | None = None) -> CompareView:
    """`costmodel.charts.compare.compare_view` (decide + chart data), keyed by the scenario's JSON."""
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    return compare_view(Scenario.model_validate_json(scenario_json), calibration=calibration,
                        api_sheet=api_sheet_for(overrides_json), gpu_sheet=gpu_sheet(),
                        capacity_cache=capacity_cache())


@st.cache_data(show_spinner="Testing the decision's sensitivity...", max_entries=64)
def cached_whatif(scenario_json: str, calibration_json: str | None = None,
                  overrides_json: str | None = None) -> WhatIf | None:
    """`costmodel.charts.whatif.whatif` (tornado, flip volumes) on the cached decision and capacities."""
    view = cached_compare_view(scenario_json, calibration_json, overrides_json)
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    return whatif(Scenario.model_validate_json(scenario_json), view.decision, calibration=calibration,
                  api_sheet=api_sheet_for(overrides_json), capacity_cache=capacity_cache())
