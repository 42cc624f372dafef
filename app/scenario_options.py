"""Scenario page, part 2: the options to compare, as three editable tables (API, self-host, hybrid)
plus pickers that add a row: API prices searchable by provider and model, self-host model x
accelerator x GPUs x dtypes x offering, hybrid self-host + API.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app import cache, state
from app.widgets import md
from costmodel.decision.feasibility import add_months
from costmodel.dtypes import KV_DTYPES, WEIGHT_DTYPES
from costmodel.errors import CostmodelError
from costmodel.scenario import ApiOption, HybridOption, Scenario, SelfHostOption, parse_scenario

ADD_ERROR_KEY = "add_option_error"
ADD_MESSAGE_KEY = "add_option_message"  # shown beside the pickers and as a toast (the tables are above, out of view)
COLUMNS: dict[str, dict[str, str]] = {
    # column -> pandas dtype of an empty table (object: text, float64: numbers, boolean: checkboxes)
    "api": {"name": "object", "price_id": "object", "use_batch_api": "boolean",
            "requests_per_minute_limit": "float64", "tokens_per_minute_limit": "float64",
            "ttft_p90_seconds": "float64", "tpot_p90_ms": "float64"},
    "self-host": {"name": "object", "model": "object", "hardware": "object", "gpus_per_replica": "float64",
                  "weight_dtype": "object", "kv_dtype": "object", "offering": "object",
                  "usd_per_gpu_hour": "float64", "ops_usd_per_month": "float64"},
    "hybrid": {"name": "object", "self_host": "object", "api": "object"},
}
KIND_CLASSES = {"api": ApiOption, "self-host": SelfHostOption, "hybrid": HybridOption}


# Columns shown in another unit than the field: column -> (field, display units per field unit). TPOT is in ms
# everywhere in the app, as the SLO's TPOT limit is.
SCALED = {"tpot_p90_ms": ("tpot_p90_seconds", 1e3)}


def _shown(row: dict[str, Any]) -> dict[str, Any]:
    for column, (field, scale) in SCALED.items():
        if row.get(field) is not None:
            row[column] = row[field] * scale
    return row


def _table(scenario: Scenario, kind: str) -> pd.DataFrame:
    rows = [_shown(o.model_dump(exclude={"kind"})) for o in scenario.options if isinstance(o, KIND_CLASSES[kind])]
    columns = COLUMNS[kind]
    frame = pd.DataFrame(rows, columns=list(columns))
    return frame.astype(columns)


def _column_config(kind: str, scenario: Scenario) -> dict[str, Any]:
    col = st.column_config
    if kind == "api":
        return {
            "name": col.TextColumn("name", required=True),
            "price_id": col.SelectboxColumn("API price id", options=cache.api_price_ids(), required=True),
            "use_batch_api": col.CheckboxColumn("batch API when allowed", default=True),
            "requests_per_minute_limit": col.NumberColumn("RPM limit (requests/min)", min_value=1, step=1, format="%d",
                                                          help="Your account's rate limit; empty: no limit"),
            "tokens_per_minute_limit": col.NumberColumn("TPM limit (tokens/min)", min_value=1, step=1, format="%d",
                                                        help="Your account's rate limit; empty: no limit"),
            "ttft_p90_seconds": col.NumberColumn("TTFT p90 (s)", min_value=0.0, format="%.3f",
                                                 help="Your own measured p90; empty: the published latency sheet"),
            "tpot_p90_ms": col.NumberColumn("TPOT p90 (ms)", min_value=0.0, format="%.1f",
                                            help="Your own measured p90; empty: the published latency sheet"),
        }
    if kind == "self-host":
        return {
            "name": col.TextColumn("name", required=True),
            "model": col.SelectboxColumn("model", options=cache.model_ids(), required=True),
            "hardware": col.SelectboxColumn("accelerator", options=cache.hardware_ids(), required=True),
            "gpus_per_replica": col.NumberColumn("GPUs/replica", min_value=1, max_value=64, step=1, format="%d",
                                                 help="Tensor-parallel GPUs per replica; empty: 1"),
            "weight_dtype": col.SelectboxColumn("weights", options=list(WEIGHT_DTYPES), default="bf16"),
            "kv_dtype": col.SelectboxColumn("KV", options=list(KV_DTYPES), default="bf16"),
            "offering": col.SelectboxColumn("GPU offering", options=cache.gpu_offering_ids(),
                                            help="A row of the GPU price sheet; empty: priced at own $/GPU-hour"),
            "usd_per_gpu_hour": col.NumberColumn("own $/GPU-hour", min_value=0.0, format="$%.2f",
                                                 help="Your own price; empty: the offering's"),
            "ops_usd_per_month": col.NumberColumn("ops $/month", min_value=0.0, format="$%.0f",
                                                  help="Fixed operations cost; empty: $0"),
        }
    self_hosts = [o.name for o in scenario.options if isinstance(o, SelfHostOption)]
    apis = [o.name for o in scenario.options if isinstance(o, ApiOption)]
    return {
        "name": col.TextColumn("name", required=True),
        "self_host": col.SelectboxColumn("self-host base", options=self_hosts, required=True),
        "api": col.SelectboxColumn("API overflow", options=apis, required=True),
    }


def _records(frame: pd.DataFrame, kind: str, originals: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows as option dicts; empty cells are left out (schema defaults), blank new rows dropped.

    A row the table started with (its index is its position in `originals`) keeps every field the table
    has no column for (engine, scaling, calibration, headroom, host, ...): the table edits its columns only."""
    result = []
    columns = set(COLUMNS[kind])
    for index, record in zip(frame.index, frame.astype(object).where(frame.notna(), None).to_dict("records"),
                             strict=True):
        data = {k: v for k, v in record.items() if v is not None and v != ""}
        if not data:
            continue
        original = originals[index] if isinstance(index, int) and 0 <= index < len(originals) else {}
        kept = {k: v for k, v in original.items() if k not in columns and k != "kind"}
        for column, (field, scale) in SCALED.items():
            kept.pop(field, None)
            if column in data:
                shown = data.pop(column)
                exact = original.get(field)  # unchanged cell: the field exactly as loaded (no ms rounding)
                data[field] = exact if exact is not None and exact * scale == shown else shown / scale
        result.append({"kind": kind, **kept, **data})
    return result


def _originals(scenario: Scenario, kind: str) -> list[dict[str, Any]]:
    """The scenario's options of one kind as plain dicts, in table order (None fields left out)."""
    return [o.model_dump(mode="json", exclude_none=True) for o in scenario.options
            if isinstance(o, KIND_CLASSES[kind])]


# The tables as last shown, edits included: (frame, the original option of each row). The keys are plain values
# (not widgets), so the Scenario form's keep/restore (app/state.py) carries them over a visit to another page,
# and a loaded scenario drops them with the other sc_ keys. A data_editor's own state is a delta over its base
# frame that Streamlit forgets once its page is not shown.
TABLE_STASH_PREFIX = "sc_table_stash_"


def _as_base(edited: pd.DataFrame, originals: list[dict[str, Any]]) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """An edited table as the base of a fresh editor: rows renumbered 0..n-1, each with its original option
    (a row the table started with keeps the fields it has no column for; an added row has none)."""
    aligned = [originals[label] if isinstance(label, int | np.integer) and 0 <= label < len(originals) else {}
               for label in edited.index]
    return edited.reset_index(drop=True), aligned


def options_editor(scenario: Scenario) -> list[dict[str, Any]]:
    """Render the three tables (rows can be edited, added, deleted); return the options, in the
    scenario's order (new ones last)."""
    options: list[dict[str, Any]] = []
    for kind, title in (("api", "API options"), ("self-host", "Self-host options"), ("hybrid", "Hybrid options")):
        key = f"sc_options_{kind}_{state.revision()}"
        base_key = f"{key}_base"
        originals_key = f"{key}_originals"
        stash_key = f"{TABLE_STASH_PREFIX}{kind}"
        if key not in st.session_state or base_key not in st.session_state or originals_key not in st.session_state:
            stash = st.session_state.get(stash_key)  # the table as last shown (back from another page)
            st.session_state[base_key], st.session_state[originals_key] = (
                stash if stash is not None else (_table(scenario, kind), _originals(scenario, kind)))
        st.markdown(f"**{title}**")
        edited = st.data_editor(
            st.session_state[base_key], key=key, num_rows="dynamic", hide_index=True, placeholder="",
            column_config=_column_config(kind, scenario),
        )
        options.extend(_records(edited, kind, st.session_state[originals_key]))
        st.session_state[stash_key] = _as_base(edited, st.session_state[originals_key])
    order = {o.name: index for index, o in enumerate(scenario.options)}
    return sorted(options, key=lambda o: order.get(str(o.get("name")), len(order)))


def _unique_name(scenario: Scenario, wanted: str) -> str:
    names = {o.name for o in scenario.options}
    name, suffix = wanted, 2
    while name in names:
        name, suffix = f"{wanted}-{suffix}", suffix + 1
    return name


def _add(option: dict[str, Any]) -> None:
    """Append an option to the current scenario and reload the widgets (errors shown inline)."""
    scenario = state.current()
    option = {**option, "name": _unique_name(scenario, option["name"])}
    data = scenario.model_dump(mode="json")
    data["options"].append(option)
    try:
        state.set_scenario(parse_scenario(data, where="new option"), source="edited")
    except CostmodelError as exc:
        st.session_state[ADD_ERROR_KEY] = str(exc)
        return
    st.session_state[ADD_MESSAGE_KEY] = (f"Added **{option['name']}** ({option['kind']}): the last row of the "
                                         f"{option['kind']} table above; Compare and Overview include it now.")


# Button callbacks read the pickers' values from session state at click time (not from args bound
# during the previous run, which would miss a picker changed just before the click).
def _add_api() -> None:
    choice = st.session_state["add_api_row"]
    _add({"kind": "api", "name": choice.split("/", 1)[1], "price_id": choice})


def _add_self_host() -> None:
    get = st.session_state.get
    model, hardware, gpus = get("add_sh_model"), get("add_sh_hardware"), get("add_sh_gpus")
    option: dict[str, Any] = {"kind": "self-host", "name": f"{model}-{hardware}-tp{gpus}", "model": model,
                              "hardware": hardware, "gpus_per_replica": gpus, "weight_dtype": get("add_sh_weight"),
                              "kv_dtype": get("add_sh_kv")}
    if get("add_sh_offering"):
        option["offering"] = get("add_sh_offering")
    if get("add_sh_own_price"):
        option["usd_per_gpu_hour"] = get("add_sh_own_price")
    _add(option)


def _add_hybrid() -> None:
    base, overflow = st.session_state["add_hy_self_host"], st.session_state["add_hy_api"]
    _add({"kind": "hybrid", "name": f"{base}+{overflow}", "self_host": base, "api": overflow})


def _api_label(row_id: str) -> str:
    row = cache.api_price_rows()[row_id]
    return f"{row_id}  (in ${row.input_usd_per_mtok:g}, out ${row.output_usd_per_mtok:g} per M tokens)"


def _retirement_note(row_id: str) -> str | None:
    """Why the decision would exclude this API row the moment it is added (retired before as_of + horizon)."""
    retires = cache.api_price_rows()[row_id].deprecation_date
    scenario = state.current()
    as_of = scenario.evaluation_date()
    if retires is None or retires >= add_months(as_of, months=scenario.horizon_months):
        return None
    when = "was retired" if retires <= as_of else "retires"
    return (f"{row_id} {when} on {retires.isoformat()}, within the {scenario.horizon_months}-month horizon from "
            f"{as_of.isoformat()}: Compare would list it as excluded (retired) and never recommend it.")


def add_pickers(scenario: Scenario) -> None:
    """Three small forms that add an API, a self-host or a hybrid option."""
    error = st.session_state.pop(ADD_ERROR_KEY, None)
    if error:
        st.error(f"**Add option**: {md(error)}")
    added = st.session_state.pop(ADD_MESSAGE_KEY, None)
    if added:
        st.success(md(added))
        st.toast(md(added))
    api_tab, self_tab, hybrid_tab = st.tabs(["Add an API option", "Add a self-host option", "Add a hybrid option"])
    with api_tab:
        rows = cache.api_price_rows()
        left, right = st.columns([1, 2])
        providers = left.multiselect("Providers", sorted({r.provider for r in rows.values()}), key="add_api_providers")
        search = right.text_input("Search provider/model", key="add_api_search", placeholder="e.g. llama, mini, gemini")
        matches = [
            row_id for row_id, row in rows.items()
            if (not providers or row.provider in providers) and search.strip().lower() in row_id.lower()
        ]
        st.caption(f"{len(matches)} of {len(rows)} API price rows match.")
        if matches:
            chosen = st.selectbox("API price row", matches, key="add_api_row", format_func=_api_label)
            note = _retirement_note(chosen) if chosen else None
            if note:
                st.warning(md(note))
            st.button("Add API option", key="add_api_button", on_click=_add_api)
    with self_tab:
        cols = st.columns(3)
        cols[0].selectbox("Model", cache.picker_model_ids(), key="add_sh_model")
        hardware = cols[1].selectbox("Accelerator", cache.hardware_ids(), key="add_sh_hardware")
        cols[2].selectbox("GPUs per replica", [1, 2, 4, 8], key="add_sh_gpus")
        cols = st.columns(3)
        cols[0].selectbox("Weight dtype", WEIGHT_DTYPES, key="add_sh_weight")
        cols[1].selectbox("KV dtype", KV_DTYPES, key="add_sh_kv")
        cols[2].selectbox("GPU offering", [None, *cache.gpu_offerings_for(hardware)], key="add_sh_offering",
                          format_func=lambda o: "(none: own price)" if o is None else o)
        st.number_input("Own price per GPU-hour (USD; overrides the offering)", min_value=0.0, value=None, step=0.1,
                        key="add_sh_own_price")
        st.button("Add self-host option", key="add_sh_button", on_click=_add_self_host)
    with hybrid_tab:
        self_hosts = [o.name for o in scenario.options if isinstance(o, SelfHostOption)]
        apis = [o.name for o in scenario.options if isinstance(o, ApiOption)]
        if not self_hosts or not apis:
            st.info("A hybrid needs one self-host and one API option in the scenario.")
            return
        cols = st.columns(2)
        cols[0].selectbox("Self-host base load", self_hosts, key="add_hy_self_host")
        cols[1].selectbox("API for the overflow", apis, key="add_hy_api")
        st.button("Add hybrid option", key="add_hy_button", on_click=_add_hybrid)
