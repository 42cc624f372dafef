"""Cached library calls: catalogs, price sheets and the expensive computations the pages render.

Each wrapper is one library call under st.cache_data, keyed by plain arguments (ids, numbers, JSON
text), so reruns after a widget change reuse everything that did not change.
"""

from __future__ import annotations

import streamlit as st

from costmodel.calibration import Calibration
from costmodel.catalog import accelerators, models
from costmodel.charts_data import RooflineView, roofline_view


@st.cache_data(show_spinner=False)
def model_ids() -> list[str]:
    """Catalog model ids, sorted."""
    return sorted(models())


@st.cache_data(show_spinner=False)
def hardware_ids() -> list[str]:
    """Catalog accelerator ids, in catalog order."""
    return list(accelerators())


@st.cache_data(show_spinner=False)
def model_names() -> dict[str, str]:
    """Model id -> display name."""
    return {model_id: spec.name for model_id, spec in models().items()}


@st.cache_data(show_spinner=False)
def hardware_names() -> dict[str, str]:
    """Accelerator id -> display name."""
    return {hw_id: spec.name for hw_id, spec in accelerators().items()}


@st.cache_data(show_spinner=False, max_entries=128)
def cached_roofline_view(
    model: str,
    hardware: str,
    *,
    gpus: int,
    weight_dtype: str,
    kv_dtype: str,
    batch: int,
    prompt_tokens: int,
    output_tokens: int,
    calibration_json: str | None = None,
) -> RooflineView:
    """`costmodel.charts_data.roofline_view`, cached; the calibration travels as its JSON text."""
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    return roofline_view(
        model, hardware, gpus=gpus, weight_dtype=weight_dtype, kv_dtype=kv_dtype, batch=batch,
        prompt_tokens=prompt_tokens, output_tokens=output_tokens, calibration=calibration,
    )
