"""Roofline page: where prefill and decode sit on the accelerator's roofline, step time vs batch,
memory vs batch x context with the HBM limit, and the per-op table. One call:
costmodel.charts.roofline.roofline_view, cached.

Owns: the cached roofline_view call and the page's three plotly figures (no math here: values are only
rescaled to display units: ms, GB, TFLOP/s).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import cache, glossary, state
from app import formatting as fmt
from app.colors import LIMIT_COLOR, PHASE_COLORS
from app.widgets import show_error
from costmodel.charts.roofline import (
    BatchPoint,
    MemoryGrid,
    OpPoint,
    RooflineCurve,
    RooflineView,
    roofline_view,
)
from costmodel.dtypes import KV_DTYPES, WEIGHT_DTYPES
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.units import fmt_bytes, fmt_seconds

FLAG_LABELS = {
    "--gpus": "GPUs per replica", "--batch": "Batch", "--prompt-tokens": "Prompt tokens",
    "--output-tokens": "Output tokens", "--weight-dtype": "Weight dtype", "--kv-dtype": "KV-cache dtype",
}
TERA = 1e12
GIGA = 1e9
MS = 1e3
PHASE_SYMBOLS = {"prefill": "circle", "decode": "diamond"}


# --- cached call --------------------------------------------------------------------------------------

@st.cache_data(show_spinner=False, max_entries=128)
def cached_roofline_view(
    model: str,
    hardware: str,
    *,
    gpus: int,
    weight_dtype: str,
    kv_dtype: str,
    batch: int,
    prompt_tokens: int,
    output_tokens: int,
    calibration_json: str | None = None,
) -> RooflineView:
    """`costmodel.charts.roofline.roofline_view`, cached; the calibration travels as its JSON text."""
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    return roofline_view(
        model, hardware, gpus=gpus, weight_dtype=weight_dtype, kv_dtype=kv_dtype, batch=batch,
        prompt_tokens=prompt_tokens, output_tokens=output_tokens, calibration=calibration,
    )


# --- figures ------------------------------------------------------------------------------------------

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


# --- page ---------------------------------------------------------------------------------------------

def _view() -> tuple[RooflineView, int]:
    """The page's inputs (seeded from the scenario's first self-host option) -> the cached view and batch."""
    defaults = state.roofline_defaults()
    models = cache.picker_model_ids(keep=defaults.model)
    hardware = cache.hardware_ids()
    col1, col2, col3, col4 = st.columns(4)
    model_id = col1.selectbox("Model", models, index=models.index(defaults.model), key="rf_model",
                              format_func=lambda m: f"{cache.model_names()[m]} ({m})")
    hardware_id = col2.selectbox("Accelerator", hardware, index=hardware.index(defaults.hardware), key="rf_hardware",
                                 format_func=lambda h: cache.hardware_names()[h])
    gpus = col3.number_input("GPUs per replica (tensor parallel)", min_value=1, max_value=64, value=defaults.gpus,
                             step=1, key="rf_gpus")
    batch = col4.number_input("Batch (concurrent sequences)", min_value=1, max_value=4096, value=defaults.batch,
                              step=1, key="rf_batch")
    col5, col6, col7, col8 = st.columns(4)
    weight_dtype = col5.selectbox("Weight dtype", WEIGHT_DTYPES, index=WEIGHT_DTYPES.index(defaults.weight_dtype),
                                  key="rf_weight_dtype")
    kv_dtype = col6.selectbox("KV-cache dtype", KV_DTYPES, index=KV_DTYPES.index(defaults.kv_dtype), key="rf_kv_dtype")
    prompt_tokens = col7.number_input("Prompt tokens", min_value=1, max_value=2_000_000, value=defaults.prompt_tokens,
                                      step=128, key="rf_prompt_tokens")
    output_tokens = col8.number_input("Output tokens", min_value=1, max_value=200_000, value=defaults.output_tokens,
                                      step=64, key="rf_output_tokens")
    calibration_json = state.calibration_json_for(hardware_id)
    if calibration_json:
        st.caption(f"Using the calibration applied on the Probes page for {hardware_id}.")

    try:
        view = cached_roofline_view(
            model_id, hardware_id, gpus=int(gpus), weight_dtype=weight_dtype, kv_dtype=kv_dtype, batch=int(batch),
            prompt_tokens=int(prompt_tokens), output_tokens=int(output_tokens), calibration_json=calibration_json,
        )
    except CostmodelError as exc:
        show_error("Roofline inputs", exc, labels=FLAG_LABELS)
        st.stop()
    return view, int(batch)


def _summary(view: RooflineView) -> None:
    est = view.estimate
    if not est.fits:  # the timings assume a batch that cannot be held: say so instead of showing them
        st.error(f"Batch {est.batch} at {est.prompt_tokens + est.output_tokens:,} tokens: {est.memory.message}.")
    unfit = "does not fit"
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric("TTFT (prefill)", fmt_seconds(est.ttft_seconds) if est.fits else unfit,
              help=f"{glossary.tip('TTFT')} Here {est.prefill.bound}-bound, no queueing.")
    m2.metric("TPOT (decode step)", fmt_seconds(est.tpot_seconds) if est.fits else unfit,
              help=f"{glossary.tip('TPOT')} Here {est.decode.bound}-bound.")
    m3.metric("Decode tokens/s (replica)", f"{est.decode_tokens_per_second:,.0f}" if est.fits else unfit,
              help="Output tokens per second of one replica at this batch (batch / decode step time).")
    m4.metric("Max batch at this context", f"{est.memory.max_batch:,}",
              help="Sequences whose KV cache fits in HBM next to the weights at this context length.")
    m5.metric("Weights per GPU", fmt_bytes(est.memory.weights_bytes_per_gpu),
              help="Weight bytes each GPU holds (tensor parallelism splits them).")
    if est.fits:
        st.success(f"Memory: {est.memory.message}.")
    st.caption(f"Efficiencies: {est.efficiency.source}. Prefill is {est.prefill.bound}-bound, decode is "
               f"{est.decode.bound}-bound.")


def _charts(view: RooflineView, *, batch: int) -> None:
    st.subheader("Roofline: ops of prefill and decode")
    st.plotly_chart(roofline_figure(view.curve, view.points), key="rf_roofline_chart")

    left, right = st.columns(2)
    with left:
        st.subheader("Decode step time vs batch")
        st.plotly_chart(step_time_figure(view.batch_sweep, batch=batch), key="rf_step_chart")
    with right:
        st.subheader("Memory per GPU vs batch x context")
        st.plotly_chart(memory_figure(view.memory), key="rf_memory_chart")


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


def _tables(view: RooflineView) -> None:
    st.subheader("Per-op table (per GPU)")
    ops = pd.DataFrame(
        [
            {
                "phase": p.phase,
                "op": p.op,
                "GFLOP": fmt.figure(p.flops / 1e9),
                "MB moved": fmt.figure(p.bytes / 1e6),
                "FLOP/byte": fmt.figure(p.arithmetic_intensity),
                "time (ms)": fmt.figure(p.seconds * 1e3),
                "bound": p.bound,
            }
            for p in view.points
        ]
    )
    st.dataframe(ops, hide_index=True, placeholder="-", key="rf_ops_table")
    sweep = pd.DataFrame(
        [
            {
                "batch": p.batch,
                "prefill (ms)": p.prefill_seconds * 1e3,
                "decode step (ms)": p.decode_step_seconds * 1e3,
                "decode tokens/s": p.decode_tokens_per_second,
                "decode bound": p.decode_bound,
                "fits in HBM": p.fits,
            }
            for p in view.batch_sweep
        ]
    )
    with st.expander("Batch sweep table"):
        st.dataframe(sweep, hide_index=True, placeholder="-", key="rf_sweep_table")


def render() -> None:
    """The Roofline page."""
    st.title("Roofline")
    st.caption(
        "Prefill is one pass over the prompt (compute-bound); each decode step reads every weight and the "
        "whole KV cache for one token per sequence (memory-bound until the batch is large)."
    )
    view, batch = _view()
    _summary(view)
    _charts(view, batch=batch)
    _tables(view)


if __name__ == "__main__":  # st.navigation runs this file as a script: render through the imported module
    from app.views import roofline

    roofline.render()
