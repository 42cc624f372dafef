"""The Roofline page's three figures: the roofline with every op of prefill and decode on it, decode step
time and throughput vs batch, and memory per GPU vs batch x context with the HBM limit.

Data from costmodel.charts.roofline (RooflineCurve, OpPoint, BatchPoint, MemoryGrid); no math here: values
are only rescaled to display units (ms, GB, TFLOP/s). app/views/roofline.py caches the view and lays them out.
"""

from __future__ import annotations

import plotly.graph_objects as go

from app import formatting as fmt
from app.colors import LIMIT_COLOR, PHASE_COLORS
from costmodel.charts.roofline import BatchPoint, MemoryGrid, OpPoint, RooflineCurve

TERA = 1e12
GIGA = 1e9
MS = 1e3
PHASE_SYMBOLS = {"prefill": "circle", "decode": "diamond"}


def roofline_figure(curve: RooflineCurve, points: tuple[OpPoint, ...]) -> go.Figure:
    """Arithmetic intensity vs attainable TFLOP/s per GPU, with every op of prefill and decode on it."""
    fig = go.Figure()
    x = list(curve.intensities_flops_per_byte)
    fig.add_trace(go.Scatter(
        x=x, y=[v / TERA for v in curve.datasheet_flops_per_s], mode="lines", name="datasheet roofline",
        line={"color": LIMIT_COLOR, "dash": "dash"},
        hovertemplate="%{x:.1f} FLOP/B -> %{y:.0f} TFLOP/s (datasheet)<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=x, y=[v / TERA for v in curve.attainable_flops_per_s], mode="lines",
        name=f"attainable (compute x{curve.eff_compute:.2f}, memory x{curve.eff_memory:.2f})",
        line={"color": LIMIT_COLOR},
        hovertemplate="%{x:.1f} FLOP/B -> %{y:.0f} TFLOP/s (attainable)<extra></extra>",
    ))
    for phase in ("prefill", "decode"):
        phase_points = [p for p in points if p.phase == phase]
        if not phase_points:
            continue
        fig.add_trace(go.Scatter(
            x=[p.arithmetic_intensity for p in phase_points],
            y=[p.achieved_flops_per_s / TERA for p in phase_points],
            mode="markers+text", name=f"{phase} ops", text=[p.op for p in phase_points],
            textposition=_label_positions(phase_points), textfont={"size": 10},
            marker={"size": 11, "color": PHASE_COLORS[phase], "symbol": PHASE_SYMBOLS[phase]},
            customdata=[[p.seconds * MS, p.flops / GIGA, p.bytes / GIGA * 1e3, p.bound] for p in phase_points],
            hovertemplate=(
                f"<b>{phase} %{{text}}</b><br>%{{x:.1f}} FLOP/B, %{{y:.1f}} TFLOP/s<br>"
                "%{customdata[0]:.3f} ms, %{customdata[1]:.2f} GFLOP, %{customdata[2]:.1f} MB<br>"
                "%{customdata[3]}-bound<extra></extra>"
            ),
        ))
    # Reference lines are traces, not add_vline/add_hline: on log axes plotly places their annotations
    # in log10 units, which stretches the autorange to 10^ridge.
    fig.add_trace(go.Scatter(
        x=[curve.ridge_flops_per_byte] * 2,
        y=[curve.datasheet_flops_per_s[0] / TERA, curve.peak_flops_per_s / TERA],
        mode="lines", name=f"ridge {curve.ridge_flops_per_byte:.0f} FLOP/B",
        line={"color": LIMIT_COLOR, "dash": "dot", "width": 1}, hoverinfo="skip",
    ))
    xs = [*x, *(p.arithmetic_intensity for p in points)]
    ys = [v / TERA for v in (*curve.attainable_flops_per_s, *(p.achieved_flops_per_s for p in points)) if v > 0]
    xvals, xtext = fmt.log_ticks(min(xs), max(xs))
    yvals, ytext = fmt.log_ticks(min(ys), max(ys))
    fig.update_layout(
        xaxis={"type": "log", "title": "arithmetic intensity (FLOP/byte)", "tickvals": xvals, "ticktext": xtext},
        yaxis={"type": "log", "title": "TFLOP/s per GPU", "tickvals": yvals, "ticktext": ytext},
        legend={"orientation": "h", "y": -0.2}, margin={"t": 30}, height=460,
    )
    return fig


def step_time_figure(sweep: tuple[BatchPoint, ...], *, batch: int) -> go.Figure:
    """Decode step time (ms) and decode throughput (tokens/s) vs batch; batches that OOM are hollow."""
    fig = go.Figure()
    batches = [p.batch for p in sweep]
    symbols = ["circle" if p.fits else "circle-open" for p in sweep]
    fits_text = ["fits" if p.fits else "does not fit in HBM" for p in sweep]
    fig.add_trace(go.Scatter(
        x=batches, y=[p.decode_step_seconds * MS for p in sweep], mode="lines+markers", name="decode step (ms)",
        marker={"symbol": symbols, "size": 9, "color": PHASE_COLORS["decode"]},
        customdata=[[p.decode_bound, f] for p, f in zip(sweep, fits_text, strict=True)],
        hovertemplate="batch %{x}: %{y:.2f} ms per step, %{customdata[0]}-bound, %{customdata[1]}<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=batches, y=[p.decode_tokens_per_second for p in sweep], mode="lines+markers",
        name="decode tokens/s (replica)", yaxis="y2", line={"dash": "dot", "color": "#2ca02c"},
        marker={"symbol": symbols, "size": 8, "color": "#2ca02c"},
        hovertemplate="batch %{x}: %{y:,.0f} tokens/s<extra></extra>",
    ))
    chosen = next((p for p in sweep if p.batch == batch), None)
    if chosen is not None:
        fig.add_trace(go.Scatter(
            x=[batch], y=[chosen.decode_step_seconds * MS], mode="markers", name=f"batch {batch} (chosen)",
            marker={"size": 16, "symbol": "star", "color": "#ff7f0e"},
            hovertemplate="chosen batch %{x}: %{y:.2f} ms per step<extra></extra>",
        ))
    fig.update_layout(
        xaxis=_batch_axis(batches),
        yaxis={"title": "decode step (ms)", "rangemode": "tozero"},
        yaxis2={"title": "tokens/s", "overlaying": "y", "side": "right", "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.25}, margin={"t": 30}, height=400,
    )
    return fig


def memory_figure(grid: MemoryGrid) -> go.Figure:
    """GB per GPU (weights + workspace + reserve + KV) vs batch, one line per context, HBM drawn."""
    fig = go.Figure()
    fixed_gb = (grid.weights_bytes_per_gpu + grid.activation_bytes_per_gpu + grid.reserve_bytes_per_gpu) / GIGA
    for index, context in enumerate(grid.contexts_tokens):
        fig.add_trace(go.Scatter(
            x=list(grid.batches), y=[v / GIGA for v in grid.total_bytes_per_gpu[index]], mode="lines+markers",
            name=f"context {context:,} tokens (max batch {grid.max_batch[index]:,})",
            customdata=[v / GIGA for v in grid.kv_bytes_per_gpu[index]],
            hovertemplate=(
                f"context {context:,}: batch %{{x}} -> %{{y:.1f}} GB/GPU (KV %{{customdata:.1f}} GB)<extra></extra>"
            ),
        ))
    ends = [grid.batches[0], grid.batches[-1]]
    fig.add_trace(go.Scatter(
        x=ends, y=[grid.hbm_bytes_per_gpu / GIGA] * 2, mode="lines", name=f"HBM {grid.hbm_bytes_per_gpu / GIGA:.1f} GB",
        line={"color": "#d62728", "width": 3}, hovertemplate="HBM limit %{y:.1f} GB per GPU<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=ends, y=[fixed_gb] * 2, mode="lines", name=f"weights + workspace + reserve {fixed_gb:.1f} GB",
        line={"color": LIMIT_COLOR, "dash": "dash", "width": 1}, hoverinfo="skip",
    ))
    fig.update_layout(
        xaxis=_batch_axis(list(grid.batches)),
        # Linear and capped at twice the HBM: what matters is where each line crosses the limit.
        yaxis={"title": "memory per GPU (GB)", "range": [0, 2 * grid.hbm_bytes_per_gpu / GIGA]},
        legend={"orientation": "h", "y": -0.25}, margin={"t": 30}, height=420,
    )
    return fig


def _batch_axis(batches: list[int]) -> dict[str, object]:
    """A log batch axis labelled at the batches drawn (plotly's minor log labels read '2, 5')."""
    return {"type": "log", "title": "batch (concurrent sequences)", "tickvals": list(batches),
            "ticktext": [f"{b:,}" for b in batches]}


LABEL_POSITIONS = ("top center", "bottom center", "middle right", "middle left")


def _label_positions(points: list) -> list[str]:  # type: ignore[type-arg]
    """Op labels alternate around their markers in order of intensity, so neighbours do not overlap."""
    order = sorted(range(len(points)), key=lambda i: (points[i].arithmetic_intensity, points[i].achieved_flops_per_s))
    positions = [""] * len(points)
    for rank, index in enumerate(order):
        positions[index] = LABEL_POSITIONS[rank % len(LABEL_POSITIONS)]
    return positions
