"""Cached Memo-page calls: the PDF and its page previews."""

from __future__ import annotations

import datetime as dt

import streamlit as st

from app.cache_capacity import capacity_cache
from app.memo_preview import MemoFile, build_memo_file, page_images
from costmodel.measurements.calibration import Calibration
from costmodel.scenario import Scenario


@st.cache_data(show_spinner="Building the PDF memo (charts, sensitivity)...", max_entries=8)
def cached_memo(scenario_json: str, calibration_json: str | None, today_iso: str) -> MemoFile:
    """app.memo_preview.build_memo_file, cached by scenario, calibration and date."""
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    return build_memo_file(Scenario.model_validate_json(scenario_json), calibration=calibration,
                           today=dt.date.fromisoformat(today_iso), capacity_cache=capacity_cache())


@st.cache_data(show_spinner="Rendering the preview...", max_entries=8)
def cached_page_images(pdf: bytes) -> list[bytes]:
    """PNG previews of the memo's pages."""
    return page_images(pdf)
