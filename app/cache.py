"""Cached library calls shared by pages: the catalogs and the price sheets.

Each wrapper is one library call under st.cache_data (or cache_resource for shared read-only objects),
keyed by plain arguments (ids, numbers, JSON text), so reruns after a widget change reuse everything
that did not change. A page's own calls live in its module under app/views/, so the first page does not
import the simulator, the decision or the memo.
"""

from __future__ import annotations

import json

import streamlit as st
from pydantic import ValidationError

from costmodel.catalog import accelerators, models
from costmodel.errors import CostmodelError
from costmodel.pricing import ApiPriceRow, GpuPriceRow, PriceSheet, load_api_prices, load_gpu_prices


@st.cache_data(show_spinner=False)
def model_ids() -> list[str]:
    """Catalog model ids, sorted."""
    return sorted(models())


# Catalog models for tests and CPU probes, not released models: never offered in a picker (a scenario
# or link that names one still validates and shows it).
HIDDEN_MODEL_IDS = frozenset({"tiny-test"})


def picker_model_ids(*, keep: str | None = None) -> list[str]:
    """Model ids a picker offers: the catalog without HIDDEN_MODEL_IDS (`keep` stays when it is one)."""
    return [m for m in model_ids() if m not in HIDDEN_MODEL_IDS or m == keep]


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
