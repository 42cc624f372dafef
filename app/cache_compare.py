"""Cached Compare-page calls: compare_view (decide + chart data) and its figures."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from app.cache import api_sheet, api_sheet_for, gpu_sheet
from app.cache_capacity import capacity_cache
from app.colors import option_colors
from app.figures_compare import breakdown_figure, traffic_figure, utilization_figure, volume_figure
from costmodel.charts.compare import CompareView, compare_view
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


@st.cache_resource(show_spinner=False, max_entries=32)
def cached_compare_figures(scenario_json: str, calibration_json: str | None = None,
                           overrides_json: str | None = None) -> dict[str, go.Figure]:
    """The Compare page's four figures (building and validating plotly figures costs ~100 ms a rerun).

    cache_resource hands out the same objects (no pickling); st.plotly_chart only reads them."""
    view = cached_compare_view(scenario_json, calibration_json, overrides_json)
    colors = option_colors(o.name for o in view.decision.options)
    return {
        "volume": volume_figure(view, colors),
        "utilization": utilization_figure(view, colors),
        "traffic": traffic_figure(view.traffic, colors),
        "breakdown": breakdown_figure(view.decision),
    }


def clear_price_caches() -> None:
    """After a refresh: re-read the sheets and recompute everything priced from them."""
    api_sheet.clear()
    gpu_sheet.clear()
    api_sheet_for.clear()
    cached_compare_view.clear()
    cached_compare_figures.clear()
