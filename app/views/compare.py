"""Compare page: the ranked options ($/month, $/M, SLO verdict, utilization, break-even), the charts
that explain them, replicas by hour, cost by month and the what-if panel (app/compare_panels.py). One call: costmodel.charts.compare.compare_view (decide + chart data), cached in app/compare_cache.py.

Owns: the cached figures (drawn by app/compare_figures.py and app/compare_panels.py), the ranked table and
clear_price_caches (the Prices page calls it after a refresh).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import formatting as fmt
from app import glossary, state
from app.cache import api_sheet, api_sheet_for, gpu_sheet
from app.colors import option_colors
from app.compare_cache import cached_compare_view, cached_whatif
from app.compare_figures import breakdown_figure, utilization_figure, volume_figure
from app.compare_panels import (
    fleet_figure,
    months_figure,
    render_fleet_and_months,
    render_whatif,
)
from app.phone_list import render_ranked
from app.widgets import md, show_error
from costmodel.charts.compare import CompareView
from costmodel.charts.fleet import fleet_cell, fleet_chart, months_chart
from costmodel.decision.instances import gpus_cell
from costmodel.decision.reasons import quality_statement
from costmodel.decision.results import Decision, OptionResult, exclusion_label
from costmodel.errors import CostmodelError
from costmodel.memo.text import rank_cells
from costmodel.scenario import HybridOption, Scenario, SelfHostOption, parse_scenario

VOLUME_ERROR_KEY = "cmp_volume_error"
TABLE_CONFIG = {
    "option": st.column_config.TextColumn(pinned=True),
    "$/month": st.column_config.NumberColumn(format="$%,.0f", help="Month 0, at this scenario's volume."),
    "$/M tokens": st.column_config.NumberColumn(format="$%.3f", help=glossary.tip("$/M tokens")),
    "SLO": st.column_config.TextColumn(help=glossary.tip("SLO")),
    "TTFT p90": st.column_config.TextColumn(help=glossary.tip("TTFT") + " " + glossary.tip("p90")),
    "TPOT p90": st.column_config.TextColumn(help=glossary.tip("TPOT")),
    "latency owner": st.column_config.TextColumn(
        help="Which part owns p90 TTFT and TPOT at the simulated capacity, and the lever that moves it."),
    "utilization": st.column_config.TextColumn(help=glossary.tip("utilization")),
    "break-even utilization": st.column_config.TextColumn(help=glossary.tip("break-even utilization")),
    "break-even volume": st.column_config.TextColumn(help=glossary.tip("break-even volume")),
}


# --- cached calls -------------------------------------------------------------------------------------

@st.cache_resource(show_spinner=False, max_entries=32)
def cached_compare_figures(scenario_json: str, calibration_json: str | None = None,
                           overrides_json: str | None = None) -> dict[str, go.Figure]:
    """The Compare page's figures (building and validating plotly figures costs ~100 ms a rerun).

    cache_resource hands out the same objects (no pickling); st.plotly_chart only reads them."""
    view = cached_compare_view(scenario_json, calibration_json, overrides_json)
    colors = option_colors(o.name for o in view.decision.options)
    scenario = Scenario.model_validate_json(scenario_json)
    spot_shares = {o.name: o.scaling.spot_share for o in scenario.options if isinstance(o, SelfHostOption)}
    figures = {
        "volume": volume_figure(view, colors, {o.name: o.api for o in scenario.options if isinstance(o, HybridOption)}),
        "utilization": utilization_figure(view, colors),
        "traffic": fleet_figure(fleet_chart(view.decision), colors, spot_shares),
        "breakdown": breakdown_figure(view.decision),
    }
    months = months_chart(view.decision)
    if months.computed:
        figures["months"] = months_figure(months, colors)
    return figures


def clear_price_caches() -> None:
    """After a refresh: re-read the sheets and recompute everything priced from them."""
    api_sheet.clear()
    gpu_sheet.clear()
    api_sheet_for.clear()
    cached_compare_view.clear()
    cached_whatif.clear()
    cached_compare_figures.clear()


# --- page ---------------------------------------------------------------------------------------------

def _apply_volume(field: str) -> None:
    """Callback of the volume box: the scenario with the new volume (validated), or an inline error."""
    data = state.current().model_dump(mode="json")
    data["workload"][field] = st.session_state[f"cmp_{field}"]
    try:
        state.set_scenario(parse_scenario(data, where="Compare page"), source="edited")
    except CostmodelError as exc:
        st.session_state[VOLUME_ERROR_KEY] = exc


def _slo_cell(o: OptionResult) -> str:
    """The verdict as such: meets (measured) / likely meets (a band within the limits) / unverified / misses,
    with its source, throttled noted; an excluded option says why in words (below the quality floor, ...)."""
    if o.excluded_reason:
        return "excluded: " + exclusion_label(o.excluded_kind)
    verdict = o.slo_status.replace("_", " ")
    if o.latency_source == "published":
        verdict += " (published, not your traffic)"
    elif o.latency_source == "simulated":
        verdict += " (simulated)"
    return verdict + (", throttled" if o.throttled else "")


def _band_cell(low: float | None, high: float | None) -> str:
    """'229-427 ms' (the p90 band), '' without one."""
    if low is None or high is None:
        return ""
    return f"{fmt.ms(low)}-{fmt.ms(high)}"


def _table(view: CompareView) -> pd.DataFrame:
    rows = []
    for rank, o in zip(rank_cells(view.decision), view.decision.options, strict=True):
        rows.append({
            "rank": rank,  # '-' for a 0-replica hybrid: its API's plan, ranked as that API
            "option": o.name,
            "kind": "hybrid, 0 replicas (= its API)" if o.all_traffic_to_api else o.kind,
            "$/month": o.usd_per_month,
            "$/M tokens": o.usd_per_mtok,
            "SLO": _slo_cell(o),
            "why": o.excluded_reason or o.slo_reason,
            "latency source": o.latency_source,
            "latency owner": o.latency_owner or "",
            "quality score": fmt.count(o.quality_score) if o.quality_score is not None else "",
            "TTFT p90": fmt.ms(o.ttft_p90_seconds),
            "TTFT p90 band": _band_cell(o.ttft_p90_seconds_low, o.ttft_p90_seconds_high),
            "TPOT p90": fmt.ms(o.tpot_p90_seconds),
            "TPOT p90 band": _band_cell(o.tpot_p90_seconds_low, o.tpot_p90_seconds_high),
            "replicas": fmt.count(o.replicas),
            "GPUs": gpus_cell(gpus=o.gpus, gpus_billed=o.gpus_billed),
            "fleet": fleet_cell(o),
            "utilization": fmt.percent(o.utilization),
            "break-even utilization": fmt.break_even_utilization(o.break_even_utilization),
            "break-even volume": fmt.billions_per_month(o.break_even_tokens_per_month, applies=o.kind == "self-host"),
        })
    return pd.DataFrame(rows)


def _volume_box(scenario: Scenario) -> None:
    """The one input of this page: the monthly volume, in the unit the scenario gives it."""
    workload = scenario.workload
    field = "requests_per_day" if workload.requests_per_day is not None else "tokens_per_month"
    if f"cmp_{field}" not in st.session_state:
        st.session_state[f"cmp_{field}"] = float(getattr(workload, field))
    cols = st.columns([1, 3])
    cols[0].number_input(
        "Requests per day" if field == "requests_per_day" else "Tokens per month (prompt + output)",
        step=10_000.0 if field == "requests_per_day" else 1e8, format="%.0f", key=f"cmp_{field}",
        on_change=_apply_volume, args=(field,),
    )
    cols[1].caption(f"Scenario **{scenario.name}**: {workload.mean_prompt_tokens():,.0f} prompt + "
                    f"{workload.mean_output_tokens():,.0f} output tokens per request; SLO p90 TTFT "
                    f"{scenario.slo.ttft_p90_seconds:g} s, TPOT {scenario.slo.tpot_p90_seconds * 1e3:g} ms. "
                    "Edit everything else on the Scenario page.")
    volume_error = st.session_state.pop(VOLUME_ERROR_KEY, None)
    if volume_error is not None:
        show_error("Volume not applied", volume_error)


def _recommendation(decision: Decision) -> None:
    if decision.recommendation is None:
        st.error(md("No recommendation: " + " ".join(decision.reasons)))
        st.info(md(quality_statement(decision)))
        return
    chosen = decision.chosen()
    headline = md(f"Recommendation: **{chosen.name}** ({chosen.kind}), ${chosen.usd_per_month:,.0f}/month, "
                  f"${chosen.usd_per_mtok:.3f} per million tokens.")
    (st.success if decision.recommendation_meets_slo else st.error)(headline)
    for reason in decision.reasons:
        st.markdown(f"- {md(reason)}")
    if decision.ranking_basis_reason:  # what the ranking compares: $/month, or the horizon total with commitments
        st.caption(md(decision.ranking_basis_reason))
    for warning in decision.warnings:
        st.warning(md(warning))
    st.info(md(quality_statement(decision)))
    st.caption(f"{decision.requests_per_month:,.0f} requests and {decision.tokens_per_month / 1e9:,.2f}B tokens per "
               f"month; peak {decision.peak_requests_per_second:.2f} requests/s. Efficiencies: "
               f"{decision.efficiency_source}.")


def _charts(figures: dict[str, go.Figure]) -> None:
    left, right = st.columns(2)
    with left:
        st.subheader("$/month vs monthly volume")
        st.plotly_chart(figures["volume"], key="cmp_volume_chart")
    with right:
        st.subheader("$/M tokens vs utilization")
        st.plotly_chart(figures["utilization"], key="cmp_utilization_chart")
    st.subheader("Cost breakdown")
    st.plotly_chart(figures["breakdown"], key="cmp_breakdown_chart")


def _sources(decision: Decision) -> None:
    with st.expander("Price sources and notes"):
        sources = pd.DataFrame([
            {"option": o.name, "price": s.what, "source": s.source, "checked": s.checked, "age (days)": s.age_days}
            for o in decision.options for s in o.price_sources
        ])
        st.dataframe(sources, hide_index=True, placeholder="-", key="cmp_sources")
        for o in decision.options:
            for note in o.notes:
                st.markdown(f"- **{md(o.name)}**: {md(note)}")


def render() -> None:
    """The Compare page."""
    st.title("Compare")
    scenario = state.current()
    _volume_box(scenario)
    keys = (scenario.model_dump_json(), state.calibration_json(), state.api_overrides_json())
    if keys[2]:
        st.info(f"API price overrides from the Prices page are in effect (this session only): {keys[2]}")
    try:
        view = cached_compare_view(*keys)
        # Nothing feasible: no chart (it would only compare options that cannot be chosen).
        figures = cached_compare_figures(*keys) if view.decision.recommendation is not None else None
    except CostmodelError as exc:
        show_error("Scenario", exc)
        st.stop()
    _recommendation(view.decision)
    st.subheader("Ranked options")
    render_ranked(view.decision, _slo_cell,
                  lambda: st.dataframe(_table(view), hide_index=True, placeholder="-", column_config=TABLE_CONFIG, key="cmp_table"))
    if figures is not None:
        _charts(figures)
        render_fleet_and_months(figures, months_chart(view.decision))
        render_whatif(view.decision, lambda: cached_whatif(*keys))
    else:
        st.info("No charts: no option is feasible, so there is nothing to compare on cost or volume.")
    _sources(view.decision)


if __name__ == "__main__":  # st.navigation runs this file as a script: render through the imported
    from app.views import compare  # module, so its caches are the ones the Prices page clears

    compare.render()
