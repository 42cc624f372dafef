"""Roofline page: where prefill and decode sit on the accelerator's roofline, step time vs batch,
memory vs batch x context with the HBM limit, and the per-op table. One call:
costmodel.charts.roofline.roofline_view, cached.

Owns: the cached roofline_view call, the page's inputs, summary and tables, and its layout; the three
plotly figures are drawn by app/roofline_figures.py (no math here).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import cache, glossary, state
from app import formatting as fmt
from app.roofline_figures import memory_figure, roofline_figure, step_time_figure
from app.widgets import show_error
from costmodel.charts.roofline import RooflineView, roofline_view
from costmodel.dtypes import KV_DTYPES, WEIGHT_DTYPES
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.units import fmt_bytes, fmt_seconds

FLAG_LABELS = {
    "--gpus": "GPUs per replica", "--batch": "Batch", "--prompt-tokens": "Prompt tokens",
    "--output-tokens": "Output tokens", "--weight-dtype": "Weight dtype", "--kv-dtype": "KV-cache dtype",
}


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
