"""The Compare page's three cost figures: $/month vs monthly volume (log-log, break-evens marked),
$/M tokens vs utilization, and the cost breakdown per option (stacked bars).

Data from costmodel.charts.compare (CompareView) and the Decision; values are only rescaled to display units
and every option keeps its color from app.colors. app/views/compare.py caches and lays them out.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from app import formatting as fmt
from app.colors import LIMIT_COLOR
from costmodel.charts.compare import CompareView, slo_legend_note
from costmodel.decision.results import Decision

KIND_DASH = {"api": "solid", "self-host": "dash", "hybrid": "dot"}
BILLION = 1e9


def volume_figure(view: CompareView, colors: dict[str, str], hybrid_apis: dict[str, str] | None = None) -> go.Figure:
    """$/month vs monthly volume (log-log), break-even points marked, the scenario's volume drawn.
    hybrid_apis: each hybrid option's API option (a 0-replica hybrid is drawn as that API's line)."""
    fig = go.Figure()
    # A hybrid that keeps 0 replicas is its API's plan: its line would hide the API's; the API's name says so.
    same_as = {o.name: (hybrid_apis or {}).get(o.name) for o in view.decision.options if o.all_traffic_to_api}
    hidden = {name for name, api in same_as.items() if api is not None}
    for curve in view.volume_curves:
        if curve.name in hidden:
            continue
        also = [h for h, api in same_as.items() if api == curve.name]
        fig.add_trace(go.Scatter(
            x=[t / BILLION for t in curve.tokens_per_month], y=list(curve.usd_per_month), mode="lines",
            name=f"{curve.name} ({curve.kind})" + (f" = {', '.join(also)} at 0 replicas" if also else "")
            + slo_legend_note(curve.slo_status), line={"color": colors[curve.name], "dash": KIND_DASH[curve.kind]},
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
