"""Plotly figure of the Probes page: measured vs predicted step time per probe point."""

from __future__ import annotations

import plotly.graph_objects as go

from app.colors import LIMIT_COLOR, PHASE_COLORS
from costmodel.measurements.fit import CalibrationFit

MS = 1e3


def fit_figure(fit: CalibrationFit) -> go.Figure:
    """Predicted (roofline before calibration, and calibrated) vs measured ms, log-log, y = x drawn;
    held-out points are diamonds."""
    fig = go.Figure()
    measured = [p.measured_seconds * MS for p in fit.points]
    predicted = [p.roofline_seconds * MS for p in fit.points] + [p.calibrated_seconds * MS for p in fit.points]
    low, high = min(measured + predicted), max(measured + predicted)
    fig.add_trace(go.Scatter(x=[low, high], y=[low, high], mode="lines", name="predicted = measured",
                             line={"color": LIMIT_COLOR, "dash": "dot"}, hoverinfo="skip"))
    for label, field, opacity in (("roofline (datasheet-free, before calibration)", "roofline_seconds", 0.45),
                                  ("calibrated", "calibrated_seconds", 1.0)):
        for phase in ("prefill", "decode"):
            points = [p for p in fit.points if p.phase == phase]
            if not points:
                continue
            fig.add_trace(go.Scatter(
                x=[p.measured_seconds * MS for p in points], y=[getattr(p, field) * MS for p in points],
                mode="markers", name=f"{phase}: {label}", opacity=opacity,
                marker={"color": PHASE_COLORS[phase], "size": 10,
                        "symbol": ["diamond" if p.holdout else "circle" for p in points]},
                customdata=[[p.batch, p.new_tokens, p.context_tokens, p.abs_error * 100, "held out" if p.holdout else "fit"]
                            for p in points],
                hovertemplate=(f"<b>{phase}</b> B=%{{customdata[0]}} T=%{{customdata[1]}} C=%{{customdata[2]}}"
                               "<br>measured %{x:.2f} ms, predicted %{y:.2f} ms<br>"
                               f"{label}; %{{customdata[4]}}<extra></extra>"),
            ))
    fig.update_layout(
        xaxis={"type": "log", "title": "measured step time (ms)"},
        yaxis={"type": "log", "title": "predicted step time (ms)"},
        legend={"orientation": "h", "y": -0.25}, margin={"t": 30}, height=460,
    )
    return fig
