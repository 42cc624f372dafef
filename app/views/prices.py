"""Prices page: browse and filter both price sheets with source and age, override a price for this
scenario (GPU: saved in the scenario; API: for this session), refresh a sheet from its source.

Owns: the override and refresh callbacks; the sheets themselves are app.cache's shared cached calls, and
a refresh clears them with everything the Compare page priced from them.
"""

from __future__ import annotations

import datetime as dt
import re

import pandas as pd
import streamlit as st

from app import cache, state
from app import formatting as fmt
from app.views import compare
from app.widgets import md, show_error
from costmodel.errors import CostmodelError
from costmodel.pricing import ApiPriceRow, GpuPriceRow, PriceSheet
from costmodel.pricing.refresh import refresh_sheet
from costmodel.scenario import ApiOption, SelfHostOption, parse_scenario

MESSAGE_KEY = "prices_message"


def _as_of() -> dt.date:
    """The one evaluation date: the scenario's as_of, else today (what Compare and the memo count to)."""
    return state.current().evaluation_date()


def _days(price_date: dt.date) -> int:
    """Age of a price from its own date (price_as_of, else checked) to the scenario's as-of date."""
    return (_as_of() - price_date).days


def _filter(rows: list, providers: list[str], search: str) -> list:  # type: ignore[type-arg]
    text = search.strip().lower()
    return [r for r in rows if (not providers or r.provider in providers) and text in r.id.lower()]


def _set_gpu_override(price: float | None) -> None:
    """Button callback: the chosen self-host option's own $/GPU-hour (None: back to its offering)."""
    name = st.session_state["pr_ovr_gpu_option"]
    data = state.current().model_dump(mode="json")
    for option in data["options"]:
        if option["name"] == name:
            option["usd_per_gpu_hour"] = price
    try:
        state.set_scenario(parse_scenario(data, where="GPU price override"), source="edited")
        st.session_state[MESSAGE_KEY] = ("success", f"{name}: " + (
            f"own price ${price:g}/GPU-hour saved in the scenario." if price else "back to the offering's price."))
    except CostmodelError as exc:
        st.session_state[MESSAGE_KEY] = ("error", str(exc))


def _apply_gpu_override() -> None:
    price = st.session_state.get("pr_ovr_gpu_price")
    if not price:
        st.session_state[MESSAGE_KEY] = ("error", "GPU price override: enter a $/GPU-hour above 0 first.")
        return
    _set_gpu_override(float(price))


def _clear_gpu_override() -> None:
    _set_gpu_override(None)


def _file_name(where: str) -> str:
    """A sheet's origin as shown to users: the file's name, never the server's directory layout."""
    return re.sub(r"(?:[A-Za-z]:)?(?:[\\/][^\\/\s]+)+[\\/]([^\\/\s]+)", r"\1", where)


def _refresh() -> None:
    kind, url = st.session_state["pr_refresh_kind"], st.session_state.get("pr_refresh_url", "")
    try:
        result = refresh_sheet(kind, url=url or None)  # type: ignore[arg-type]
    except CostmodelError as exc:
        st.session_state[MESSAGE_KEY] = ("error", f"Refresh of the {kind} sheet failed: {exc}")
        return
    compare.clear_price_caches()
    st.session_state[MESSAGE_KEY] = ("success", (
        f"Refreshed {_file_name(str(result.path))} from {result.url}: {result.rows_before} -> {result.rows_after} rows, "
        f"{len(result.added)} added, {len(result.removed)} removed, {len(result.changed)} changed."))


def _api_table(api_sheet: PriceSheet[ApiPriceRow]) -> None:
    """The API sheet, filtered by provider and a search text."""
    st.caption(f"{_file_name(api_sheet.where)}: {len(api_sheet.rows)} rows, {api_sheet.age_text(today=_as_of())} "
               f"(ages to {_as_of().isoformat()}, the scenario's as-of date). USD per million tokens.")
    cols = st.columns([2, 3])
    providers = cols[0].multiselect("Providers", sorted({r.provider for r in api_sheet.rows}), key="pr_api_providers")
    search = cols[1].text_input("Search provider/model", key="pr_api_search")
    rows = _filter(list(api_sheet.rows), providers, search)
    st.dataframe(pd.DataFrame([
        {"id": r.id, "input": fmt.usd(r.input_usd_per_mtok), "cached input": fmt.usd(r.cache_read_usd_per_mtok),
         "cache write": fmt.usd(r.cache_write_usd_per_mtok), "output": fmt.usd(r.output_usd_per_mtok),
         "batch in": fmt.usd(r.batch_input_usd_per_mtok), "batch out": fmt.usd(r.batch_output_usd_per_mtok),
         "long context from (tokens)": fmt.count(r.long_context_threshold_tokens),
         "open model": fmt.text(r.open_model_id), "retired": r.is_retired(today=_as_of()),
         "sources disagree": fmt.text(r.disagreement), "source": f"{r.source} {r.source_version}",
         "provider page": r.source_url, "price as of": fmt.text(r.price_as_of), "checked": r.checked,
         "age (days)": _days(r.price_date), "rate limit tier": fmt.text(r.rate_limit_tier)}
        for r in rows
    ]), hide_index=True, placeholder="-", key="pr_api_table")


def _gpu_table(gpu_sheet: PriceSheet[GpuPriceRow]) -> None:
    """The GPU-hour sheet, filtered by accelerator, offering and a search text."""
    st.caption(f"{_file_name(gpu_sheet.where)}: {len(gpu_sheet.rows)} rows, {gpu_sheet.age_text(today=_as_of())}. Owned rows derive an "
               "hourly cost from capex over life + power x PUE + colocation.")
    cols = st.columns([2, 2, 3])
    accelerators = cols[0].multiselect("Accelerators", sorted({r.accelerator_id for r in gpu_sheet.rows}),
                                       key="pr_gpu_accelerators")
    offerings = cols[1].multiselect("Offerings", ["on-demand", "reserved", "spot", "owned"], key="pr_gpu_offerings")
    gpu_search = cols[2].text_input("Search", key="pr_gpu_search")
    gpu_rows = [r for r in _filter(list(gpu_sheet.rows), [], gpu_search)
                if (not accelerators or r.accelerator_id in accelerators) and (not offerings or r.offering in offerings)]
    st.dataframe(pd.DataFrame([
        {"id": r.id, "accelerator": r.accelerator_id, "provider": r.provider, "kind": r.provider_kind,
         "offering": r.offering, "$/GPU-hour (all in)": r.all_in_usd_per_gpu_hour(),
         "commitment": fmt.text(r.commitment), "instance": fmt.text(r.instance), "region": fmt.text(r.region),
         "source": r.source, "as of": fmt.text(r.price_as_of), "checked": r.checked,
         "age (days)": _days(r.price_date), "notes": fmt.text(r.notes)}
        for r in gpu_rows
    ]), hide_index=True, placeholder="-", key="pr_gpu_table",
        column_config={"$/GPU-hour (all in)": st.column_config.NumberColumn(format="$%.3f")})


def _overrides() -> None:
    """A self-host option's own $/GPU-hour (saved in the scenario) and API token prices (this session)."""
    scenario = state.current()
    self_hosts = [o for o in scenario.options if isinstance(o, SelfHostOption)]
    st.markdown("**GPU price of a self-host option** (saved in the scenario, its file and its link)")
    if self_hosts:
        cols = st.columns([2, 1, 1, 1])
        name = cols[0].selectbox("Self-host option", [o.name for o in self_hosts], key="pr_ovr_gpu_option")
        option = next(o for o in self_hosts if o.name == name)
        current = (f"own price ${option.usd_per_gpu_hour:g}/GPU-hour" if option.usd_per_gpu_hour
                   else f"offering {option.offering}")
        cols[0].caption(md(f"Now: {current}"))
        cols[1].number_input("$/GPU-hour", min_value=0.0, value=None, step=0.1, key="pr_ovr_gpu_price")
        cols[2].button("Apply", key="pr_ovr_gpu_apply", on_click=_apply_gpu_override)
        cols[3].button("Clear", key="pr_ovr_gpu_clear", on_click=_clear_gpu_override)
    else:
        st.info("The scenario has no self-host option.")
    st.markdown("**API token prices** (this browser session only: the scenario schema has no field for them)")
    api_options = [o for o in scenario.options if isinstance(o, ApiOption)]
    overrides = state.api_overrides()
    if api_options:
        cols = st.columns([2, 1, 1, 1])
        price_id = cols[0].selectbox("API price row", sorted({o.price_id for o in api_options}), key="pr_ovr_api_row")
        row = cache.api_price_rows()[price_id]
        cols[0].caption(md(f"Sheet: in ${row.input_usd_per_mtok:g}, out ${row.output_usd_per_mtok:g} per M tokens"))
        new_in = cols[1].number_input("input $/M", min_value=0.0, value=None, key="pr_ovr_api_in")
        new_out = cols[2].number_input("output $/M", min_value=0.0, value=None, key="pr_ovr_api_out")
        if cols[3].button("Apply", key="pr_ovr_api_apply"):
            state.set_api_override(price_id, input_usd_per_mtok=new_in, output_usd_per_mtok=new_out)
            st.rerun()
    if overrides:
        def price(prices: dict[str, float], field: str) -> str:
            return fmt.usd(prices[field]) if field in prices else "the sheet's"  # only the given price changes

        st.dataframe(pd.DataFrame([{"price id": k, "input $/M tokens": price(v, "input_usd_per_mtok"),
                                    "output $/M tokens": price(v, "output_usd_per_mtok")}
                                   for k, v in overrides.items()]),
                     hide_index=True, placeholder="-", key="pr_ovr_api_table")
        if st.button("Clear API overrides", key="pr_ovr_api_clear"):
            state.clear_api_overrides()
            st.rerun()


def _refresh_form() -> None:
    """Which sheet and from where; the button's callback reads both from session state."""
    st.caption("Downloads a newer sheet, validates it and replaces the file atomically; any failure keeps the "
               "current file byte for byte.")
    cols = st.columns([1, 3])
    cols[0].radio("Sheet", ["api", "gpu"], key="pr_refresh_kind",
                         format_func=lambda k: "API (LiteLLM)" if k == "api" else "GPU-hour (CSV URL)")
    cols[1].text_input("URL (empty: LiteLLM's JSON for the API sheet)", key="pr_refresh_url")
    st.button("Refresh now", key="pr_refresh_button", on_click=_refresh)


def render() -> None:
    """The Prices page."""
    st.title("Prices")
    message = st.session_state.pop(MESSAGE_KEY, None)
    if message:
        kind, text = message
        (st.success if kind == "success" else st.error)(md(text))

    api_tab, gpu_tab, override_tab = st.tabs(["API prices", "GPU-hour prices", "Override for this scenario"])
    with api_tab:
        _api_table(cache.api_sheet())
    with gpu_tab:
        _gpu_table(cache.gpu_sheet())
    with override_tab:
        _overrides()
    with st.expander("Refresh a price sheet from its source"):  # an action, not a view: not a tab
        _refresh_form()
    try:
        cache.api_sheet_for(state.api_overrides_json())
    except CostmodelError as exc:
        show_error("API price override", exc)


if __name__ == "__main__":  # st.navigation runs this file as a script: render through the imported module
    from app.views import prices

    prices.render()
