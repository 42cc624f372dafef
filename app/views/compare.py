"""Compare page: the ranked options ($/month, $/M, SLO verdict, utilization, break-even), the charts
that explain them, replicas by hour, cost by month and the what-if panel (app/compare_panels.py). One call: costmodel.charts.compare.compare_view (decide + chart data), cached in app/compare_cache.py.

Owns: the cached compare_view call, its plotly figures (values only rescaled to display units; every
option keeps its color from app.colors) and clear_price_caches (the Prices page calls it after a refresh).
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import formatting as fmt
from app import glossary, state
from app.cache import api_sheet, api_sheet_for, gpu_sheet
from app.colors import LIMIT_COLOR, option_colors
from app.compare_cache import cached_compare_view, cached_whatif
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
from costmodel.decision.reasons import quality_statement
from costmodel.decision.results import Decision, OptionResult, exclusion_label
from costmodel.errors import CostmodelError
from costmodel.memo.text import rank_cells
from costmodel.scenario import Scenario, parse_scenario

VOLUME_ERROR_KEY = "cmp_volume_error"
KIND_DASH = {"api": "solid", "self-host": "dash", "hybrid": "dot"}
BILLION = 1e9
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
    figures = {
        "volume": volume_figure(view, colors),
        "utilization": utilization_figure(view, colors),
        "traffic": fleet_figure(fleet_chart(view.decision), colors),
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


# --- figures ------------------------------------------------------------------------------------------

def volume_figure(view: CompareView, colors: dict[str, str]) -> go.Figure:
    """$/month vs monthly volume (log-log), break-even points marked, the scenario's volume drawn."""
    fig = go.Figure()
    for curve in view.volume_curves:
        fig.add_trace(go.Scatter(
            x=[t / BILLION for t in curve.tokens_per_month], y=list(curve.usd_per_month), mode="lines",
            name=f"{curve.name} ({curve.kind})", line={"color": colors[curve.name], "dash": KIND_DASH[curve.kind]},
            customdata=["throttled by rate limits" if t else "" for t in curve.throttled],
            hovertemplate=(f"<b>{curve.name}</b><br>%{{x:.3g}}B tokens/month<br>$%{{y:,.0f}}/month"
                           "<br>%{customdata}<extra></extra>"),
        ))
    if view.break_evens:
        fig.add_trace(go.Scatter(
            x=[p.tokens_per_month / BILLION for p in view.break_evens], y=[p.usd_per_month for p in view.break_evens],
            mode="markers", name="break-even", marker={"symbol": "x", "size": 13, "color": "#000000"},
            text=[f"{p.option} = {p.against}" for p in view.break_evens],
            hovertemplate="<b>break-even</b> %{text}<br>%{x:.3g}B tokens/month, $%{y:,.0f}/month<extra></extra>",
        ))
    low = min(min(c.usd_per_month) for c in view.volume_curves)
    high = max(max(c.usd_per_month) for c in view.volume_curves)
    fig.add_trace(go.Scatter(
        x=[view.tokens_per_month / BILLION] * 2, y=[max(low, 1.0), high], mode="lines", name="this scenario",
        line={"color": LIMIT_COLOR, "dash": "dot", "width": 1}, hoverinfo="skip",
    ))
    xs = [t / BILLION for c in view.volume_curves for t in c.tokens_per_month]
    xvals, xtext = fmt.log_ticks(min(xs), max(xs))
    yvals, ytext = fmt.log_ticks(max(low, 1.0), high, prefix="$")
    fig.update_layout(
        xaxis={"type": "log", "title": "monthly volume (billion prompt + output tokens)", "tickvals": xvals,
               "ticktext": xtext},
        yaxis={"type": "log", "title": "$ per month", "tickvals": yvals, "ticktext": ytext},
        legend={"orientation": "h", "y": -0.25}, margin={"t": 30}, height=460,
    )
    return fig


def utilization_figure(view: CompareView, colors: dict[str, str]) -> go.Figure:
    """Self-host $/M (GPUs + ops of the provisioned replicas) vs utilization, API options as flat lines."""
    fig = go.Figure()
    for curve in view.utilization_curves:
        fig.add_trace(go.Scatter(
            x=[u * 100 for u in curve.utilization], y=list(curve.usd_per_mtok), mode="lines",
            name=f"{curve.name} (self-host)", line={"color": colors[curve.name], "dash": "dash"},
            hovertemplate=f"<b>{curve.name}</b><br>%{{x:.0f}}% utilization: $%{{y:.3f}}/M tokens<extra></extra>",
        ))
        if curve.current_utilization is not None and curve.current_usd_per_mtok is not None:
            fig.add_trace(go.Scatter(
                x=[curve.current_utilization * 100], y=[curve.current_usd_per_mtok], mode="markers",
                name=f"{curve.name} now", marker={"size": 12, "color": colors[curve.name], "symbol": "circle"},
                hovertemplate=(f"<b>{curve.name}</b> in this scenario<br>%{{x:.0f}}% utilization, "
                               "$%{y:.3f}/M<extra></extra>"),
            ))
    ends = [5.0, 100.0]
    for name, usd in view.api_usd_per_mtok:
        fig.add_trace(go.Scatter(
            x=ends, y=[usd, usd], mode="lines", name=f"{name} (API)", line={"color": colors[name]},
            hovertemplate=f"<b>{name}</b>: ${usd:.3f}/M tokens, any utilization<extra></extra>",
        ))
    ys = [y for c in view.utilization_curves for y in c.usd_per_mtok] + [u for _, u in view.api_usd_per_mtok]
    ys = [y for y in ys if y > 0 and math.isfinite(y)]
    yvals, ytext = fmt.log_ticks(min(ys), max(ys), prefix="$") if ys else ([], [])
    fig.update_layout(
        xaxis={"title": "utilization of provisioned replicas (%)", "range": [0, 101]},
        yaxis={"type": "log", "title": "$ per million tokens", "tickvals": yvals, "ticktext": ytext},
        legend={"orientation": "h", "y": -0.25}, margin={"t": 30}, height=440,
    )
    return fig


def breakdown_figure(decision: Decision) -> go.Figure:
    """$/month per option split into GPU, API tokens and operations (stacked bars, ranked order)."""
    names = [o.name for o in decision.options]
    parts = (("GPU", "gpu_usd_per_month", "#1f77b4"), ("API tokens", "api_usd_per_month", "#ff7f0e"),
             ("operations", "ops_usd_per_month", "#7f7f7f"))
    fig = go.Figure()
    for label, field, color in parts:
        fig.add_trace(go.Bar(
            x=names, y=[getattr(o.breakdown, field) for o in decision.options], name=label, marker_color=color,
            hovertemplate=f"%{{x}}<br>{label}: $%{{y:,.0f}}/month<extra></extra>",
        ))
    fig.update_layout(barmode="stack", yaxis={"title": "$ per month", "tickprefix": "$", "tickformat": ",.0f"},
                      xaxis={"automargin": True, "tickangle": -30},
                      legend={"orientation": "h", "y": -0.35}, margin={"t": 30}, height=420)
    return fig


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
    """The tri-state verdict as such: meets / misses / unverified, throttled noted; an excluded option says
    why in words (below the quality floor, not a substitute, retired, misses the SLO, throttled, ...)."""
    if o.excluded_reason:
        return "excluded: " + exclusion_label(o.excluded_kind)
    verdict = {"meets": "meets", "misses": "misses", "unverified": "unverified"}[o.slo_status]
    if o.slo_status == "unverified" and o.latency_source == "published":
        verdict += " (published, not your traffic)"
    return verdict + (", throttled" if o.throttled else "")


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
            "TPOT p90": fmt.ms(o.tpot_p90_seconds),
            "GPUs": fmt.count(o.gpus),
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
        st.dataframe(sources, hide_index=True, key="cmp_sources")
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
                  lambda: st.dataframe(_table(view), hide_index=True, column_config=TABLE_CONFIG, key="cmp_table"))
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
