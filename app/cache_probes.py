"""Cached Probes-page call: the calibration fit of a probe result."""

from __future__ import annotations

import streamlit as st

from costmodel.measurements.fit import CalibrationFit, fit_calibration
from costmodel.measurements.probe_result import ProbeResult


@st.cache_data(show_spinner="Fitting the calibration...", max_entries=16)
def cached_fit(probe_json: str) -> CalibrationFit:
    """`costmodel.measurements.fit.fit_calibration` of a probe result (JSON text)."""
    return fit_calibration(ProbeResult.model_validate_json(probe_json))
