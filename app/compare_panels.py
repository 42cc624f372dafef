"""The Compare page's fleet, horizon and what-if panels: replicas by hour over the demand, cost by month
(or "horizon not computed"), the sensitivity tornado with the flip volumes, and a volume multiplier.

Data from costmodel.charts.fleet and costmodel.charts.whatif; this module only draws (plotly) and lays out.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import formatting as fmt
from app.widgets import md
from costmodel.charts.compare import slo_legend_note
from costmodel.charts.fleet import FleetChart, MonthsChart
from costmodel.charts.whatif import WhatIf, at_volume
from costmodel.decision.results import Decision
from costmodel.decision.sensitivity import Sensitivity
from costmodel.memo.text import flip_sentence

LOW_COLOR, HIGH_COLOR = "#9bb7d4", "#1f5fa8"  # tornado: input scaled down, up (the memo's colors)
MULTIPLIERS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def fleet_figure(chart: FleetChart, colors: dict[str, str], spot_shares: dict[str, float] | None = None) -> go.Figure:
    """Replicas paid in each hour (steps, left axis) over the day's demand (bars, requests/s, right axis).

    A mixed fleet: its fixed base (filled) and the autoscaled burst above it, the burst's spot share named."""
    fig = go.Figure()
    fig.add_trace(go.Bar(
        x=list(chart.hours), y=list(chart.demand_requests_per_second), name="demand (requests/s, right axis)",
        marker_color="#9ecae1", opacity=0.45, yaxis="y2", hovertemplate="hour %{x}: %{y:.2f} requests/s<extra></extra>",
    ))
    shares = spot_shares or {}
    for fleet in chart.fleets:
        peak, low = max(fleet.replicas_by_hour), min(fleet.replicas_by_hour)
        span = _plural(peak, "replica") if peak == low else f"{low}..{peak} replicas"
        if fleet.base_replicas is not None and fleet.burst_replicas_by_hour is not None:
            fig.add_trace(go.Scatter(
                x=list(chart.hours), y=[fleet.base_replicas] * len(chart.hours), mode="lines", line_shape="hvh",
                fill="tozeroy", opacity=0.5, line={"color": colors[fleet.name], "dash": "dash"},
                name=f"{fleet.name}: base {_plural(fleet.base_replicas, 'replica')} 24/7",
                hovertemplate=f"<b>{fleet.name}</b><br>hour %{{x}}: base {fleet.base_replicas}<extra></extra>",
            ))
            share = shares.get(fleet.name, 0.0)
            burst = f"burst on-demand{f', {share:.0%} of it spot' if share > 0 else ''}"
            span = f"base + {burst}, {span}"
        fig.add_trace(go.Scatter(
            x=list(chart.hours), y=list(fleet.replicas_by_hour), mode="lines", line_shape="hvh",
            name=f"{fleet.name} ({fleet.scaling or 'fixed'}): {span}", line={"color": colors[fleet.name], "width": 2},
            customdata=list(fleet.requests_per_second_by_hour),
            hovertemplate=(f"<b>{fleet.name}</b><br>hour %{{x}}: %{{y}} replicas, "
                           "%{customdata:.2f} requests/s at the SLO<extra></extra>"),
        ))
    fig.update_layout(
        xaxis={"title": "hour of day", "dtick": 2},
        yaxis={"title": "replicas paid", "rangemode": "tozero", "tickformat": "d", "dtick": _replica_dtick(chart)},
        yaxis2={"title": "demand, requests/s", "overlaying": "y", "side": "right", "rangemode": "tozero",
                "showgrid": False},
        legend={"orientation": "h", "y": -0.25}, margin={"t": 30}, height=420,
    )
    return fig


def _replica_dtick(chart: FleetChart) -> int:
    """Whole replicas on the axis: 1 apart up to 10, then a round step."""
    peak = max((max(f.replicas_by_hour) for f in chart.fleets), default=1)
    return 1 if peak <= 10 else max(1, round(peak / 8))


def months_figure(chart: MonthsChart, colors: dict[str, str]) -> go.Figure:
    """USD paid in each month of the horizon, one line per option (only when the horizon was computed); a
    reserved term still owed after the last month is drawn past it (the commitment tail)."""
    fig = go.Figure()
    tails = any(s.usd_committed_after_horizon and s.commitment_term_months for s in chart.series)
    for series in chart.series:
        total = f", ${fmt.count(series.usd_horizon_total)} over the horizon" if series.usd_horizon_total else ""
        fig.add_trace(go.Scatter(
            x=list(range(len(series.usd_by_month))), y=list(series.usd_by_month), mode="lines+markers",
            name=f"{series.name} ({series.kind}){total}", line={"color": colors[series.name]},
            hovertemplate=f"<b>{series.name}</b><br>month %{{x}}: $%{{y:,.0f}}<extra></extra>",
        ))
        tail = series.usd_committed_after_horizon
        if tail and series.commitment_term_months:
            last = len(series.usd_by_month) - 1
            fig.add_trace(go.Scatter(
                x=[last, last + 1], y=[series.usd_by_month[-1]] * 2, mode="lines+markers+text",
                line={"color": colors[series.name], "dash": "dot"}, marker={"symbol": ["circle", "square-open"]},
                text=["", f"+${tail:,.0f} committed"], textposition="top left",
                name=f"{series.name}: ${tail:,.0f} still owed after the horizon "
                     f"({series.commitment_term_months}-month reserved term)",
                hovertemplate=(f"<b>{series.name}</b><br>${tail:,.0f} of reserved replica-months owed after "
                               f"month {last}<extra></extra>"),
            ))
    if chart.ranking_change_month is not None:
        fig.add_vline(x=chart.ranking_change_month, line={"color": "#b0303a", "dash": "dot"},
                      annotation_text="ranking changes")
    fig.update_layout(
        xaxis={"title": "month (0 = the as-of month)", "dtick": max(1, chart.horizon_months // 12),
               "range": [-0.5, chart.horizon_months + (0.5 if tails else -0.5)]},
        yaxis={"title": "$ per month", "tickprefix": "$", "tickformat": ",.0f", "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.25}, margin={"t": 30}, height=420,
    )
    return fig


def tornado_figure(sens: Sensitivity) -> go.Figure:
    """The recommendation's $/month advantage over its best alternative with each input at -X% and +X%."""
    bars = [b for b in sens.bars if math.isfinite(b.low.usd_per_month) and math.isfinite(b.high.usd_per_month)]
    base = sens.base.usd_per_month if math.isfinite(sens.base.usd_per_month) else 0.0
    labels = [b.label for b in bars][::-1]  # largest swing on top
    fig = go.Figure()
    for name, color, side in ((f"input -{sens.fraction:.0%}", LOW_COLOR, "low"),
                              (f"input +{sens.fraction:.0%}", HIGH_COLOR, "high")):
        values = [getattr(b, side).usd_per_month for b in bars][::-1]
        fig.add_trace(go.Bar(
            y=labels, x=[v - base for v in values], base=base, orientation="h", name=name, marker_color=color,
            customdata=values, hovertemplate="%{y}<br>advantage $%{customdata:,.0f}/month<extra></extra>",
        ))
    fig.add_vline(x=0.0, line={"color": "#b0303a", "dash": "dash"}, annotation_text="decision flips")
    fig.add_vline(x=base, line={"color": "#000000", "width": 1})
    fig.update_layout(
        barmode="group", xaxis={"title": f"advantage, $ per month (today ${base:,.0f})", "tickprefix": "$",
                                "tickformat": ",.0f"},
        yaxis={"automargin": True}, legend={"orientation": "h", "y": -0.3}, margin={"t": 30}, height=380,
    )
    return fig


def render_fleet_and_months(figures: dict[str, go.Figure], months: MonthsChart) -> None:
    """Replicas by hour next to cost by month; "horizon not computed" instead of a made-up line."""
    left, right = st.columns(2)
    with left:
        st.subheader("Replicas by hour")
        st.plotly_chart(figures["traffic"], key="cmp_traffic_chart")
    with right:
        st.subheader("Cost by month")
        if "months" in figures:
            st.plotly_chart(figures["months"], key="cmp_months_chart")
        else:
            st.info(months.note.capitalize() + ".")


def _whatif_table(decision: Decision, whatif: WhatIf, multiplier: float) -> pd.DataFrame:
    rows = at_volume(decision, whatif.model, multiplier=multiplier)
    return pd.DataFrame([{
        "option": r.name, "kind": r.kind, f"$/month at {multiplier:g}x": f"${r.usd_per_month:,.0f}",
        "$/month today": f"${r.usd_per_month_today:,.0f}",
        "note": "throttled by rate limits" if r.throttled else slo_legend_note(r.slo_status).strip(" ()"),
    } for r in rows])


def render_whatif(decision: Decision, load: Callable[[], WhatIf | None]) -> None:
    """Tornado and flip volumes (sensitivity), and the ranking at a multiple of today's volume.

    Off until the user asks: sensitivity re-runs `decide` six times (~0.2 s), which would double every
    Compare rerun after a volume change (target 300 ms)."""
    st.subheader("What if")
    if not st.toggle("Show the sensitivity tornado, the flip volumes and a volume multiplier", key="cmp_whatif_on"):
        return
    whatif = load()
    if whatif is None:
        st.info("No recommendation, so there is no advantage to test.")
        return
    st.markdown(md(flip_sentence(decision, whatif.sensitivity)))
    left, right = st.columns(2)
    with left:
        st.caption(f"How {whatif.sensitivity.recommendation}'s $/month advantage over its best alternative moves "
                   f"when one input changes by \u00b1{whatif.sensitivity.fraction:.0%}; at 0 the decision flips.")
        st.plotly_chart(tornado_figure(whatif.sensitivity), key="cmp_tornado_chart")
    with right:
        multiplier = st.select_slider("Volume multiplier (x today's volume)", options=MULTIPLIERS, value=1.0,
                                      key="cmp_whatif_multiplier",
                                      help="Month-0 economics at this volume; capacities per replica as today.")
        st.dataframe(_whatif_table(decision, whatif, float(multiplier)), hide_index=True, placeholder="-",
                     width="stretch", key="cmp_whatif_table")
