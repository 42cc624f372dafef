"""Cached Latency-page call: the serving simulator's view of one self-host option."""

from __future__ import annotations

import streamlit as st

from costmodel.charts.latency import OptionLatency, option_latency
from costmodel.measurements.calibration import Calibration
from costmodel.scenario import SelfHostOption, Slo, Workload


@st.cache_data(show_spinner="Simulating the replica under load...", max_entries=64)
def cached_option_latency(option_json: str, workload_json: str, slo_json: str, calibration_json: str | None,
                          *, requests: int, seed: int) -> OptionLatency:
    """`costmodel.charts.latency.option_latency` for one self-host option (about a second; cached)."""
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    return option_latency(
        SelfHostOption.model_validate_json(option_json), Workload.model_validate_json(workload_json),
        Slo.model_validate_json(slo_json), calibration=calibration, requests=requests, seed=seed,
    )
