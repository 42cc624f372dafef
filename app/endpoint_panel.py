"""Probes page, live-endpoint part: sweep an OpenAI-compatible URL (key in a password field, only ever
passed to the child process's environment), calibrate the step-time model with the scenario's SLO, show
measured vs fitted latency per level, the held-out errors and the capacity range, and apply the calibration
to a scenario option in one click (written inline into the scenario state, no file). Also the collectives
probe (2 CPU processes by default) and applying its fit to a self-host option.
Library calls: costmodel.measurements.endpoint_calibration.calibrate and level_predictions; the CLI's
probe-endpoint and probe --collectives run through app.endpoint_runner.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import endpoint_runner, state
from app.colors import LIMIT_COLOR, PHASE_COLORS
from app.widgets import show_error
from costmodel.errors import CostmodelError
from costmodel.measurements.collectives_result import CollectivesResult
from costmodel.measurements.endpoint_calibration import (
    EndpointCalibration,
    HeldOutLevel,
    calibrate,
    level_predictions,
)
from costmodel.measurements.endpoint_sweep import EndpointSweep
from costmodel.scenario import ApiOption, SelfHostOption
from costmodel.units import counted

SWEEP_KEY = "pbe_sweep_json"
COLLECTIVES_KEY = "pbc_result_json"
BOOTSTRAP_SAMPLES = 8
MS = 1e3


@st.cache_data(show_spinner="Fitting the step-time model and searching the capacity...", max_entries=8)
def cached_calibration(sweep_json: str, slo_ttft_seconds: float, slo_tpot_seconds: float) -> EndpointCalibration:
    """`calibrate` of a sweep at the scenario's p90 limits (problems listed, not raised)."""
    return calibrate(EndpointSweep.model_validate_json(sweep_json), slo_ttft_p90_seconds=slo_ttft_seconds,
                     slo_tpot_p90_seconds=slo_tpot_seconds, what_if={}, bootstrap_samples=BOOTSTRAP_SAMPLES)


def levels_figure(levels: list[HeldOutLevel], held_out: list[float]) -> go.Figure:
    """Measured (markers) vs fitted (lines) p50 TTFT and TPOT per level; held-out levels are diamonds."""
    fig = go.Figure()
    x = [level.value for level in levels]
    symbols = ["diamond" if level.value in held_out else "circle" for level in levels]
    for name, color, measured, predicted in (
        ("TTFT p50", PHASE_COLORS["prefill"], "ttft_p50_measured_seconds", "ttft_p50_predicted_seconds"),
        ("TPOT p50", PHASE_COLORS["decode"], "tpot_p50_measured_seconds", "tpot_p50_predicted_seconds"),
    ):
        fig.add_trace(go.Scatter(x=x, y=[getattr(lv, measured) * MS for lv in levels], mode="markers",
                                 name=f"{name} measured", marker={"color": color, "size": 11, "symbol": symbols}))
        fig.add_trace(go.Scatter(x=x, y=[getattr(lv, predicted) * MS for lv in levels], mode="lines",
                                 name=f"{name} fitted", line={"color": color, "dash": "dot"}))
    fig.update_layout(xaxis={"title": "load level (in flight, or requests/s)"}, yaxis={"title": "ms"},
                      legend={"orientation": "h", "y": -0.25}, margin={"t": 30}, height=420,
                      shapes=[{"type": "line", "xref": "x", "yref": "paper", "x0": v, "x1": v, "y0": 0, "y1": 1,
                               "line": {"color": LIMIT_COLOR, "dash": "dash"}} for v in held_out])
    return fig


def _sweep_form() -> None:
    st.subheader("Sweep a live endpoint")
    cols = st.columns([3, 2, 2])
    url = cols[0].text_input("Base URL (OpenAI-compatible)", "http://127.0.0.1:8000/v1", key="pbe_url")
    model = cols[1].text_input("Model name on the server", key="pbe_model")
    api_key = cols[2].text_input("API key (optional; never stored)", type="password", key="pbe_key",
                                 help="Sent only as the child process's environment; not saved, logged or shared.")
    cols = st.columns(5)
    mode = cols[0].radio("Load", ["concurrency", "rates"], horizontal=True, key="pbe_mode",
                         help="concurrency: N requests in flight (closed loop); rates: Poisson requests/s")
    levels = cols[1].text_input("Levels (comma list)", "1,2,4,8", key="pbe_levels")
    requests = cols[2].number_input("Requests per level", 2, 10_000, 16, key="pbe_requests")
    prompt = cols[3].number_input("Prompt tokens", 1, 100_000, 256, key="pbe_prompt")
    max_tokens = cols[4].number_input("Max tokens", 2, 100_000, 64, key="pbe_max_tokens")
    if not st.button("Run the sweep", key="pbe_run"):
        return
    request = endpoint_runner.SweepRequest(url=url, model=model, levels=levels, mode=mode,
                                           requests_per_level=int(requests), prompt_tokens=int(prompt),
                                           max_tokens=int(max_tokens), timeout_seconds=60.0)
    latest = [(0.0, "starting the sweep...")]  # the bar as last drawn: redrawn while the child is silent
    bar = st.progress(*latest[0])
    st.button("Cancel", key="ep_sweep_cancel", help="Stops the sweep (its child process) at once.")
    log = st.container()

    def show(level: endpoint_runner.LevelDone) -> None:
        latest[0] = (level.fraction, f"level {level.done}/{level.total} done")
        bar.progress(*latest[0])
        log.write(f"level {level.done}/{level.total}: {level.summary}")

    with tempfile.TemporaryDirectory() as folder:
        try:
            sweep = endpoint_runner.run_sweep_subprocess(request, out=Path(folder) / "sweep.json",
                                                         api_key=api_key or None, on_level=show,
                                                         on_wait=lambda: bar.progress(*latest[0]))
            st.session_state[SWEEP_KEY] = sweep.model_dump_json()
            bar.progress(1.0, text=f"{counted(len(sweep.levels), 'level')} done")
        except CostmodelError as exc:
            show_error("Sweep", exc, labels={"--url": "Base URL", "--model": "Model name on the server",
                                             "--concurrency": "Levels", "--rates": "Levels",
                                             "--requests": "Requests per level"})


def _apply_targets(kinds: tuple[type, ...]) -> list[str]:
    return [o.name for o in state.current().options if isinstance(o, kinds)]


def _apply(option_name: str, calibration_json: str, *, what: str) -> None:
    """Write the calibration inline into the option's `calibration:` (the scenario state; no file)."""
    scenario = state.current()
    options = [o.model_copy(update={"calibration": calibration_json}) if o.name == option_name else o
               for o in scenario.options]
    state.set_scenario(scenario.model_copy(update={"options": options}))  # the Scenario page re-reads it
    st.success(f"Applied the {what} to '{option_name}': Compare, Overview and the memo use it now.")


def _calibration_view(sweep_json: str) -> None:
    slo = state.current().slo
    st.subheader("Measured vs fitted")
    st.caption(f"Fitted to the sweep with the scenario's SLO (TTFT p90 <= {slo.ttft_p90_seconds:g} s, TPOT p90 <= "
               f"{slo.tpot_p90_seconds * MS:g} ms); the highest level is held out.")
    try:
        cal = cached_calibration(sweep_json, slo.ttft_p90_seconds, slo.tpot_p90_seconds)
    except CostmodelError as exc:
        show_error("Calibration", exc)
        return
    cols = st.columns(5)
    cols[0].metric("Held-out TTFT p50 error", f"{cal.holdout_ttft_p50_abs_error * MS:.1f} ms")
    cols[1].metric("Held-out TPOT p50 error", f"{cal.holdout_tpot_p50_abs_error * MS:.2f} ms")
    cols[2].metric("Held-out throughput error", f"{cal.holdout_throughput_abs_error:.1f} tok/s")
    cols[3].metric("Capacity at the SLO", f"{cal.capacity_requests_per_second:.2f} req/s",
                   help="10-90% range from bootstrap refits over the requests")
    cols[4].metric("10-90% range", f"{cal.capacity_p10:.2f}-{cal.capacity_p90:.2f}", help=f"binding: {cal.binding_limit}")
    st.caption(f"Binding limit: {cal.binding_limit.replace('_', ' ')}; concurrency limit seen: "
               f"{cal.concurrency_limit or 'not reached'}.")
    predictions = level_predictions(EndpointSweep.model_validate_json(sweep_json), cal)
    st.plotly_chart(levels_figure(predictions, cal.levels_held_out), key="pbe_levels_chart")
    st.dataframe(pd.DataFrame([{
        "level": p.value, "held out": p.value in cal.levels_held_out,
        "TTFT p50 measured (ms)": p.ttft_p50_measured_seconds * MS, "TTFT p50 fitted (ms)": p.ttft_p50_predicted_seconds * MS,
        "TPOT p50 measured (ms)": p.tpot_p50_measured_seconds * MS, "TPOT p50 fitted (ms)": p.tpot_p50_predicted_seconds * MS,
        "tok/s measured": p.throughput_measured_tokens_per_second,
        "tok/s fitted": p.throughput_predicted_tokens_per_second} for p in predictions]),
        hide_index=True, placeholder="-", key="pbe_levels_table")
    if cal.problems:
        st.error("Held-out error above the bound: " + "; ".join(cal.problems))
        if not st.checkbox("Use it anyway (marked FORCED wherever it is used)", key="pbe_force"):
            return
        cal = cal.model_copy(update={"forced": True})
    targets = _apply_targets((SelfHostOption, ApiOption))
    if not targets:
        st.info("The scenario has no API or self-host option to apply the calibration to.")
        return
    cols = st.columns([2, 1, 1])
    target = cols[0].selectbox("Option it measures", targets, key="pbe_target",
                               help="self-host: capacity and latency from the fit; API: its measured latency")
    if cols[1].button("Apply calibration to the scenario", key="pbe_apply"):
        _apply(target, cal.model_dump_json(), what="endpoint calibration")
    cols[2].download_button("Download CAL.json", cal.model_dump_json(indent=2).encode("utf-8"), file_name="cal.json",
                            mime="application/json", key="pbe_download")


def _collectives() -> None:
    st.subheader("Collectives probe (tensor-parallel all-reduce)")
    cols = st.columns([1, 1, 2])
    processes = cols[0].number_input("Processes", 2, 64, 2, key="pbc_processes",
                                     help="gloo on CPU; NCCL, one GPU per process, when there are that many GPUs")
    if cols[1].button("Run collectives probe", key="pbc_run"):
        with st.spinner(f"all-reduce and all-gather over {processes} processes..."), \
                tempfile.TemporaryDirectory() as folder:
            try:
                result = endpoint_runner.run_collectives_subprocess(processes=int(processes),
                                                                    out=Path(folder) / "collectives.json")
                st.session_state[COLLECTIVES_KEY] = result.model_dump_json()
            except CostmodelError as exc:
                show_error("Collectives probe", exc)
    raw = st.session_state.get(COLLECTIVES_KEY)
    if not raw:
        return
    result = CollectivesResult.model_validate_json(raw)
    st.dataframe(pd.DataFrame([{
        "op": op, "latency (us)": fitted.fit.latency_seconds * 1e6,
        "bandwidth (GB/s)": fitted.fit.bytes_per_second / 1e9 if fitted.fit.bytes_per_second else None}
        for op, fitted in result.ops.items()]), hide_index=True, placeholder="-", key="pbc_fits")
    st.caption(f"{result.processes} ranks over {result.backend} on {result.device}; {len(result.points)} points. "
               f"It sets the all-reduce of self-host options with {result.processes} GPUs per replica.")
    targets = [o.name for o in state.current().options
               if isinstance(o, SelfHostOption) and o.gpus_per_replica == result.processes]
    if targets:
        cols = st.columns([2, 1])
        target = cols[0].selectbox("Self-host option", targets, key="pbc_target")
        if cols[1].button("Apply the fit to the scenario", key="pbc_apply"):
            _apply(target, raw, what="collectives fit")


def render_endpoint_panel() -> None:
    """The live-endpoint and collectives sections of the Probes page."""
    st.divider()
    _sweep_form()
    sweep_json = st.session_state.get(SWEEP_KEY)
    if sweep_json:
        _calibration_view(sweep_json)
    st.divider()
    _collectives()
