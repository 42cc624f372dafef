"""Cached library calls: catalogs, price sheets and the expensive computations the pages render.

Each wrapper is one library call under st.cache_data, keyed by plain arguments (ids, numbers, JSON
text), so reruns after a widget change reuse everything that did not change.
"""

from __future__ import annotations

import datetime as dt
import json

import plotly.graph_objects as go
import streamlit as st
from pydantic import ValidationError

from app.colors import option_colors
from app.figures_compare import breakdown_figure, traffic_figure, utilization_figure, volume_figure
from app.memo_preview import MemoFile, build_memo_file, page_images
from costmodel.calibrate_fit import CalibrationFit, fit_calibration
from costmodel.calibration import Calibration
from costmodel.catalog import accelerators, models
from costmodel.charts_compare import CompareView, compare_view
from costmodel.charts_data import RooflineView, roofline_view
from costmodel.charts_latency import OptionLatency, option_latency
from costmodel.errors import CostmodelError
from costmodel.pricing import ApiPriceRow, GpuPriceRow, PriceSheet, load_api_prices, load_gpu_prices
from costmodel.probe_result import ProbeResult
from costmodel.scenario import Scenario, SelfHostOption, Slo, Workload


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


@st.cache_resource(show_spinner=False)
def api_sheet() -> PriceSheet[ApiPriceRow]:
    """The bundled API price sheet (one shared, read-only object)."""
    return load_api_prices()


@st.cache_resource(show_spinner=False)
def gpu_sheet() -> PriceSheet[GpuPriceRow]:
    """The bundled GPU-hour price sheet."""
    return load_gpu_prices()


@st.cache_resource(show_spinner=False, max_entries=16)
def api_sheet_for(overrides_json: str | None) -> PriceSheet[ApiPriceRow]:
    """The API sheet with this session's price overrides applied (validated like a sheet row)."""
    sheet = api_sheet()
    if not overrides_json:
        return sheet
    overrides: dict[str, dict[str, float]] = json.loads(overrides_json)
    rows = []
    for row in sheet.rows:
        if row.id in overrides:
            data = row.model_dump() | overrides[row.id] | {"source": "manual", "notes": "price overridden in the app"}
            try:
                row = ApiPriceRow.model_validate(data)
            except ValidationError as exc:
                raise CostmodelError(f"override of {row.id}: {exc.errors()[0]['msg']}") from None
        rows.append(row)
    return PriceSheet(kind="api", where=f"{sheet.where} (with overrides)", rows=tuple(rows))


def clear_price_caches() -> None:
    """After a refresh: re-read the sheets and recompute everything priced from them."""
    api_sheet.clear()
    gpu_sheet.clear()
    api_sheet_for.clear()
    cached_compare_view.clear()
    cached_compare_figures.clear()


def api_price_rows() -> dict[str, ApiPriceRow]:
    """API price rows by id, in sheet order."""
    return {row.id: row for row in api_sheet().rows}


def api_price_ids() -> list[str]:
    """API price row ids, in sheet order."""
    return list(api_sheet().ids())


def gpu_offering_ids() -> list[str]:
    """GPU offering row ids, in sheet order."""
    return list(gpu_sheet().ids())


def gpu_offering_accelerators() -> dict[str, str]:
    """GPU offering id -> accelerator id (check_scenario_ids wants this)."""
    return {row.id: row.accelerator_id for row in gpu_sheet().rows}


def gpu_offerings_for(hardware_id: str) -> list[str]:
    """Offerings of one accelerator."""
    return [row.id for row in gpu_sheet().rows if row.accelerator_id == hardware_id]


@st.cache_data(show_spinner="Evaluating the options...", max_entries=64)
def cached_compare_view(scenario_json: str, calibration_json: str | None = None,
                        overrides_json: str | None = None) -> CompareView:
    """`costmodel.charts_compare.compare_view` (decide + chart data), keyed by the scenario's JSON."""
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    return compare_view(Scenario.model_validate_json(scenario_json), calibration=calibration,
                        api_sheet=api_sheet_for(overrides_json), gpu_sheet=gpu_sheet())


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


@st.cache_data(show_spinner="Simulating the replica under load...", max_entries=64)
def cached_option_latency(option_json: str, workload_json: str, slo_json: str, calibration_json: str | None,
                          *, requests: int, seed: int) -> OptionLatency:
    """`costmodel.charts_latency.option_latency` for one self-host option (about a second; cached)."""
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    return option_latency(
        SelfHostOption.model_validate_json(option_json), Workload.model_validate_json(workload_json),
        Slo.model_validate_json(slo_json), calibration=calibration, requests=requests, seed=seed,
    )


@st.cache_data(show_spinner="Fitting the calibration...", max_entries=16)
def cached_fit(probe_json: str) -> CalibrationFit:
    """`costmodel.calibrate_fit.fit_calibration` of a probe result (JSON text)."""
    return fit_calibration(ProbeResult.model_validate_json(probe_json))


@st.cache_data(show_spinner="Building the PDF memo (charts, sensitivity)...", max_entries=8)
def cached_memo(scenario_json: str, calibration_json: str | None, today_iso: str) -> MemoFile:
    """app.memo_preview.build_memo_file, cached by scenario, calibration and date."""
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    return build_memo_file(Scenario.model_validate_json(scenario_json), calibration=calibration,
                           today=dt.date.fromisoformat(today_iso))


@st.cache_data(show_spinner="Rendering the preview...", max_entries=8)
def cached_page_images(pdf: bytes) -> list[bytes]:
    """PNG previews of the memo's pages."""
    return page_images(pdf)
