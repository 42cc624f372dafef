"""Probes page: run a quick local probe (live progress), or upload a ProbeResult / calibration file;
measured vs predicted step times; apply the fitted calibration to the scenario's evaluation. Below: sweep a
live endpoint and run the collectives probe (app/endpoint_panel.py).
Library calls: `costmodel probe` (child process, app.probe_runner), fit_calibration, calibration_from_fit.

Owns: the cached calibration fit of a probe result and the measured-vs-predicted figure.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from pydantic import ValidationError

from app import cache, probe_runner, state
from app import formatting as fmt
from app.colors import LIMIT_COLOR, PHASE_COLORS
from app.endpoint_panel import render_endpoint_panel
from app.widgets import show_error
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.measurements.fit import CalibrationFit, calibration_from_fit, fit_calibration
from costmodel.measurements.probe_result import ProbeResult, batch1_decode_mbu

PROBE_KEY = "probe_result"  # {"name": file or run label, "json": ProbeResult JSON}
UPLOAD_ERROR_KEY = "probe_upload_error"
MS = 1e3


# --- cached call --------------------------------------------------------------------------------------

@st.cache_data(show_spinner="Fitting the calibration...", max_entries=16)
def cached_fit(probe_json: str) -> CalibrationFit:
    """`costmodel.measurements.fit.fit_calibration` of a probe result (JSON text)."""
    return fit_calibration(ProbeResult.model_validate_json(probe_json))


# --- figure -------------------------------------------------------------------------------------------

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
    ticks, text = fmt.log_ticks(low, high)  # full labels: plotly's minor log labels read '2, 5'
    fig.update_layout(
        xaxis={"type": "log", "title": "measured step time (ms)", "tickvals": ticks, "ticktext": text},
        yaxis={"type": "log", "title": "predicted step time (ms)", "tickvals": ticks, "ticktext": text},
        legend={"orientation": "h", "y": -0.25}, margin={"t": 30}, height=460,
    )
    return fig


# --- page ---------------------------------------------------------------------------------------------

def _upload() -> None:
    uploaded = st.session_state.get("pb_upload")
    if uploaded is None:
        return
    try:
        data = json.loads(uploaded.getvalue().decode("utf-8"))
        if isinstance(data, dict) and data.get("kind") == "model_probe":
            result = ProbeResult.model_validate(data)
            st.session_state[PROBE_KEY] = {"name": uploaded.name, "json": result.model_dump_json()}
        else:
            calibration = Calibration.model_validate(data)
            state.set_calibration(calibration.model_dump_json(), hardware_id=calibration.hardware_id,
                                  source=uploaded.name)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        st.session_state[UPLOAD_ERROR_KEY] = f"{uploaded.name}: not JSON ({exc})"
    except ValidationError as exc:
        kind = "probe result" if '"model_probe"' in uploaded.getvalue().decode("utf-8", "replace") else "calibration"
        fields = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3])
        st.session_state[UPLOAD_ERROR_KEY] = f"{uploaded.name} is not a valid {kind} file: {fields}"


def _run_or_upload() -> None:
    """Left: run a quick probe here with a live progress bar; right: upload a probe or calibration file."""
    run_col, upload_col = st.columns(2)
    with run_col:
        st.subheader("Run a quick probe here")
        models = cache.picker_model_ids()
        model = st.selectbox("Model", models, index=models.index("qwen2.5-0.5b"), key="pb_model")
        device = st.radio("Device", ["cpu", "cuda", "auto"], horizontal=True, key="pb_device")
        if st.button("Run quick probe", key="pb_run"):
            latest = [(0.0, "starting the probe...")]  # the bar as last drawn: redrawn while the child is silent
            bar = st.progress(*latest[0])
            st.button("Cancel", key="pb_cancel", help="Stops the probe (its child process) at once.")

            def show(step: probe_runner.ProgressStep) -> None:
                latest[0] = (step.fraction, f"{step.done}/{step.total} ({step.elapsed_seconds:.0f} s): {step.label}")
                bar.progress(*latest[0])

            with tempfile.TemporaryDirectory() as folder:
                try:
                    result = probe_runner.run_probe_subprocess(model=model, device=device,
                                                               out=Path(folder) / "probe.json", on_progress=show,
                                                               on_wait=lambda: bar.progress(*latest[0]))
                    st.session_state[PROBE_KEY] = {"name": f"quick probe of {model} on {device}",
                                                   "json": result.model_dump_json()}
                    bar.progress(1.0, text=f"done in {result.wall_seconds:.0f} s")
                except CostmodelError as exc:
                    show_error("Probe", exc)
    with upload_col:
        st.subheader("Or upload a file")
        st.file_uploader("ProbeResult (costmodel probe --out) or calibration (costmodel calibrate --out) JSON",
                         type=["json"], key="pb_upload", on_change=_upload)


def _measured_vs_predicted(probe: dict[str, str]) -> None:
    """The probe's fit: held-out errors, the factors, the chart, the points; apply it or download it."""
    result = ProbeResult.model_validate_json(probe["json"])
    env, settings = result.environment, result.settings
    st.subheader("Measured vs predicted")
    st.caption(f"{probe['name']}: {settings.model_id}, {settings.layers_probed}/{settings.layers_total} layers on "
               f"{env.device_name} ({env.device}, {env.dtype}); copy {result.copy_bytes_per_s / 1e9:.1f} GB/s, "
               f"matmul {result.peak_flops_per_s / 1e12:.2f} TFLOP/s; {len(result.ok_points)} points.")
    try:
        fit = cached_fit(probe["json"])
    except CostmodelError as exc:
        show_error("Calibration fit", exc)
        st.stop()
    cols = st.columns(4)
    cols[0].metric("Held-out median error", f"{fit.holdout_median_abs_error:.1%}",
                   help="Median |calibrated - measured| / measured step time on points the fit did not see.")
    cols[1].metric("Held-out max error", f"{fit.holdout_max_abs_error:.1%}",
                   help="Largest relative step-time error on the held-out points.")
    cols[2].metric("eff_compute / eff_memory", f"{fit.efficiency.eff_compute:.2f} / {fit.efficiency.eff_memory:.2f}",
                   help="Fitted fractions of the datasheet's peak FLOP/s and HBM bandwidth this machine reaches.")
    cols[3].metric("Overhead per step", f"{fit.efficiency.overhead_seconds_per_step * 1e3:.2f} ms",
                   help="Fixed time each forward step adds (kernel launches, scheduling) on top of the roofline.")
    mbu = batch1_decode_mbu(result)
    if mbu is not None:
        st.caption(f"Batch-1 decode reaches {mbu:.0%} of the measured copy bandwidth (MBU).")
    st.plotly_chart(fit_figure(fit), key="pb_fit_chart")
    st.dataframe(pd.DataFrame([
        {"phase": p.phase, "batch": p.batch, "new tokens": p.new_tokens, "context": p.context_tokens,
         "measured (ms)": p.measured_seconds * 1e3, "roofline (ms)": p.roofline_seconds * 1e3,
         "calibrated (ms)": p.calibrated_seconds * 1e3, "error": p.abs_error * 100, "held out": p.holdout}
        for p in fit.points
    ]), hide_index=True, placeholder="-", key="pb_points",
        column_config={"error": st.column_config.NumberColumn("error (%)", format="%.1f")})
    hardware_ids = cache.hardware_ids()
    default_hw = env.hardware_id if env.hardware_id in hardware_ids else hardware_ids[0]
    cols = st.columns([2, 1, 1])
    hardware = cols[0].selectbox("Accelerator these factors apply to", hardware_ids,
                                 index=hardware_ids.index(default_hw), key="pb_hardware")
    if cols[1].button("Apply calibration to the scenario", key="pb_apply"):
        try:
            calibration = calibration_from_fit(result, fit, source=probe["name"], hardware_id=hardware)
            state.set_calibration(calibration.model_dump_json(), hardware_id=hardware, source=probe["name"])
        except CostmodelError as exc:
            show_error("Calibration", exc)
    cols[2].download_button("Download probe JSON", probe["json"].encode("utf-8"), file_name="probe.json",
                            mime="application/json", key="pb_download_probe")


def _calibration_in_use(applied: dict[str, str]) -> None:
    calibration = Calibration.model_validate_json(applied["json"])
    st.subheader("Calibration in use")
    st.success(
        f"**{calibration.hardware_id}** ({calibration.device_name}) from {applied['source']}: eff_compute "
        f"{calibration.eff_compute:.2f}, eff_memory {calibration.eff_memory:.2f}, overhead "
        f"{calibration.overhead_seconds_per_step * 1e3:.2f} ms/step; held-out error median "
        f"{calibration.holdout_median_abs_error:.1%}, max {calibration.holdout_max_abs_error:.1%}. "
        "Compare, Roofline and Latency use it for this accelerator.")
    used_by = [o.name for o in state.current().options if getattr(o, "hardware", None) == calibration.hardware_id]
    if not used_by:
        st.info(f"No self-host option in the scenario runs on '{calibration.hardware_id}', so the comparison does "
                "not change; the Roofline page uses it when that accelerator is selected.")
    cols = st.columns(2)
    cols[0].download_button("Download calibration JSON", applied["json"].encode("utf-8"), file_name="calibration.json",
                            mime="application/json", key="pb_download_calibration")
    if cols[1].button("Stop using it", key="pb_remove"):
        state.clear_calibration()
        st.rerun()


def render() -> None:
    """The Probes page."""
    st.title("Probes")
    st.caption("Measure this machine: a Llama-style decoder with the catalog model's shapes (random weights) times "
               "prefill and decode steps; the fit gives eff_compute, eff_memory and the per-step overhead, with "
               "the error on held-out points. A calibration replaces the datasheet defaults for its accelerator.")
    upload_error = st.session_state.pop(UPLOAD_ERROR_KEY, None)
    if upload_error:
        st.error(f"**Upload**: {upload_error}")
    _run_or_upload()
    probe = st.session_state.get(PROBE_KEY)
    if probe:
        _measured_vs_predicted(probe)
    applied = state.calibration()
    if applied:
        _calibration_in_use(applied)
    render_endpoint_panel()


if __name__ == "__main__":  # st.navigation runs this file as a script: render through the imported module
    from app.views import probes

    probes.render()
