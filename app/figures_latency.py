"""Plotly figures of the Latency page from `costmodel.charts.latency` objects (display units only)."""

from __future__ import annotations

import plotly.graph_objects as go

from app.colors import LIMIT_COLOR, SLO_COLOR
from costmodel.charts.latency import OptionLatency

MS = 1e3
PERCENTILE_DASH = {50: "dot", 90: "solid", 99: "dash"}


def load_figure(option: OptionLatency, *, metric: str, color: str) -> go.Figure:
    """One metric's p50/p90/p99 (ms) vs arrival rate per replica, the SLO limits and the capacity drawn."""
    fig = go.Figure()
    rates = [p.rate_requests_per_second for p in option.load]
    label = metric.upper()
    for percentile in (50, 90, 99):
        values = [getattr(p, f"{metric}_p{percentile}_seconds") * MS for p in option.load]
        fig.add_trace(go.Scatter(
            x=rates, y=values, mode="lines+markers", name=f"{label} p{percentile}",
            line={"color": color, "dash": PERCENTILE_DASH[percentile]},
            marker={"symbol": ["circle" if p.meets_slo else "circle-open" for p in option.load], "color": color},
            hovertemplate=f"%{{x:.2f}} requests/s: {label} p{percentile} %{{y:.1f}} ms<extra></extra>",
        ))
    ends = [0.0, max(rates) if rates else 1.0]
    for limit in option.slo_limits:
        if limit.metric != metric:
            continue
        fig.add_trace(go.Scatter(
            x=ends, y=[limit.limit_seconds * MS] * 2, mode="lines", name=f"SLO p{limit.percentile} {limit.limit_seconds * MS:g} ms",
            line={"color": SLO_COLOR, "dash": PERCENTILE_DASH.get(limit.percentile, "solid"), "width": 2},
            hovertemplate=f"SLO: {label} p{limit.percentile} <= {limit.limit_seconds * MS:g} ms<extra></extra>",
        ))
    if option.feasible and option.load:
        top = max(max(getattr(p, f"{metric}_p99_seconds") for p in option.load) * MS, 1e-3)
        fig.add_trace(go.Scatter(
            x=[option.capacity_requests_per_second] * 2, y=[0.0, top], mode="lines",
            name=f"capacity at SLO {option.capacity_requests_per_second:.2f} req/s",
            line={"color": LIMIT_COLOR, "dash": "dot", "width": 1}, hoverinfo="skip",
        ))
    fig.update_layout(
        xaxis={"title": "arrival rate per replica (requests/s)", "rangemode": "tozero"},
        yaxis={"title": f"{label} (ms)", "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.3}, margin={"t": 30}, height=400,
    )
    return fig


def interactivity_figure(options: list[OptionLatency], colors: dict[str, str], *, tpot_limit_seconds: float,
                         floor_tokens_per_second: float) -> go.Figure:
    """Output tokens/s per GPU vs tokens/s per user over concurrency, per option; the TPOT SLO drawn.
    Hollow markers: p90 TPOT misses the SLO at that concurrency."""
    fig = go.Figure()
    top = 1.0
    for option in options:
        if not option.curve:
            continue
        points = [c.point for c in option.curve]
        top = max(top, max(p.output_tokens_per_second_per_gpu for p in points))
        fig.add_trace(go.Scatter(
            x=[p.output_tokens_per_second_per_user for p in points], y=[p.output_tokens_per_second_per_gpu for p in points],
            mode="lines+markers+text", name=option.name, text=[str(p.concurrency) for p in points],
            textposition="top right", textfont={"size": 9},
            line={"color": colors[option.name]},
            marker={"size": 9, "color": colors[option.name],
                    "symbol": ["circle" if c.meets_tpot_limit else "circle-open" for c in option.curve]},
            customdata=[[p.concurrency, p.tpot_p90_seconds * MS, p.ttft_p50_seconds * MS, p.mean_batch] for p in points],
            hovertemplate=(f"<b>{option.name}</b><br>concurrency %{{customdata[0]}} (mean batch %{{customdata[3]:.1f}})"
                           "<br>%{x:.1f} tokens/s per user, %{y:,.0f} tokens/s per GPU"
                           "<br>TPOT p90 %{customdata[1]:.1f} ms, TTFT p50 %{customdata[2]:.0f} ms<extra></extra>"),
        ))
    floor = floor_tokens_per_second
    fig.add_trace(go.Scatter(
        x=[floor, floor], y=[0.0, top * 1.05], mode="lines",
        name=f"SLO: TPOT p90 {tpot_limit_seconds * MS:g} ms = {floor:.0f} tokens/s per user",
        line={"color": SLO_COLOR, "width": 2}, hoverinfo="skip",
    ))
    fig.update_layout(
        xaxis={"title": "interactivity: tokens/s per user (1 / mean TPOT)", "rangemode": "tozero"},
        yaxis={"title": "throughput: output tokens/s per GPU", "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.25}, margin={"t": 30}, height=460,
    )
    return fig
