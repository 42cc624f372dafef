"""Latency page: the serving simulator's TTFT/TPOT percentiles vs load for a self-host option (capacity
at the SLO marked), and the throughput-vs-interactivity curve of every self-host option with the SLO.
One call per option: costmodel.charts.latency.option_latency, cached.

Owns: the cached option_latency call and the page's two plotly figures (display units only).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import formatting as fmt
from app import state
from app.colors import LIMIT_COLOR, SLO_COLOR, option_colors
from app.compare_cache import cached_compare_view
from app.widgets import show_error
from costmodel.charts.latency import OptionLatency, interactivity_floor, option_latency, self_host_options
from costmodel.charts.latency_modes import serving_mode_text
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.scenario import ApiOption, Scenario, SelfHostOption, Slo, SloLimit, Workload

MS = 1e3
PERCENTILE_DASH = {50: "dot", 90: "solid", 99: "dash"}


# --- cached call --------------------------------------------------------------------------------------

@st.cache_data(show_spinner="Simulating the replica under load...", max_entries=64)
def cached_option_latency(option_json: str, workload_json: str, slo_json: str, calibration_json: str | None,
                          *, requests: int, seed: int) -> OptionLatency:
    """`costmodel.charts.latency.option_latency` for one self-host option (about a second; cached)."""
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    return option_latency(
        SelfHostOption.model_validate_json(option_json), Workload.model_validate_json(workload_json),
        Slo.model_validate_json(slo_json), calibration=calibration, requests=requests, seed=seed,
    )


# --- figures ------------------------------------------------------------------------------------------

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


# --- page ---------------------------------------------------------------------------------------------

def _simulate(scenario: Scenario, options: Sequence[SelfHostOption], chosen: list[str], *, requests: int,
              seed: int) -> list[OptionLatency]:
    """The chosen options' simulations, in scenario order; a failing option is an inline error."""
    results = []
    for option in options:
        if option.name not in chosen:
            continue
        if option.calibration_paths():
            st.caption(f"'{option.name}' has measurement files attached (calibration:): Compare and the memo use "
                       "them; the curves on this page are the roofline simulator's.")
        try:
            results.append(cached_option_latency(
                option.model_dump_json(), scenario.workload.model_dump_json(), scenario.slo.model_dump_json(),
                state.calibration_json(), requests=requests, seed=seed))
        except CostmodelError as exc:
            show_error(f"Option '{option.name}'", exc)
    return results


def _limits_text(limits: Sequence[SloLimit]) -> str:
    """'TTFT p90 <= 869 ms, TPOT p90 <= 43.5 ms': the limits a capacity was searched at."""
    return ", ".join(f"{limit.metric.upper()} p{limit.percentile} <= {limit.limit_seconds * MS:.3g} ms" for limit in limits)


def _summary(results: list[OptionLatency], options: Sequence[SelfHostOption] = ()) -> None:
    modes = {o.name: serving_mode_text(o) for o in options}
    summary = pd.DataFrame([
        {
            "option": r.name,
            "replica": f"{r.gpus} x {r.hardware_id}, {r.model_id}",
            "serving mode": modes.get(r.name, ""),
            "meets SLO at some load": r.feasible,
            "capacity at SLO (req/s per replica)": r.capacity_requests_per_second,
            "saturation (req/s)": r.saturation_requests_per_second,
            "capacity searched at": _limits_text(r.search_slo_limits),
            "latency owner (at capacity)": r.latency_owner,
            "why not": r.reason,
        }
        for r in results
    ])
    st.subheader("Capacity per replica")
    st.caption("Capacity is the figure Compare uses: the highest load whose simulated p90s meet the SLO tightened by "
               "the engine's documented simulator error, so the band's high end stays within the SLO (the SLO's own "
               "limits only where no load meets the tightened ones).")
    st.dataframe(summary, hide_index=True, placeholder="-", key="lat_summary",
                 column_config={"capacity at SLO (req/s per replica)": st.column_config.NumberColumn(format="%.2f"),
                                "saturation (req/s)": st.column_config.NumberColumn(format="%.2f")})


def _charts(scenario: Scenario, simulated: list[OptionLatency], colors: dict[str, str], *, seed: int) -> None:
    st.subheader("Percentiles vs load")
    shown = st.selectbox("Option", [r.name for r in simulated], key="lat_load_option")
    result = next(r for r in simulated if r.name == shown)
    left, right = st.columns(2)
    with left:
        st.plotly_chart(load_figure(result, metric="ttft", color=colors[result.name]), key="lat_ttft_chart")
    with right:
        st.plotly_chart(load_figure(result, metric="tpot", color=colors[result.name]), key="lat_tpot_chart")
    st.caption(f"{result.requests_per_simulation} requests per point, seed {seed}; efficiencies: "
               f"{result.efficiency_source}.")

    st.subheader("Throughput vs interactivity")
    st.plotly_chart(
        interactivity_figure(simulated, colors, tpot_limit_seconds=scenario.slo.tpot_p90_seconds,
                             floor_tokens_per_second=interactivity_floor(scenario.slo)),
        key="lat_curve_chart",
    )
    st.caption("Each point is a closed loop of N users (N labels the point); right of the red line every "
               "user gets at least the SLO's tokens/s. Tokens/s without a latency cap is benchmark theater.")


def _api_latencies(scenario: Scenario) -> None:
    """The API options' p90 TTFT and TPOT as the decision uses them (given, measured or published), in ms
    beside the SLO's limits, with their source."""
    if not any(isinstance(o, ApiOption) for o in scenario.options):
        return
    try:
        decision = cached_compare_view(scenario.model_dump_json(), state.calibration_json(),
                                       state.api_overrides_json()).decision
    except CostmodelError:
        return  # the Compare page shows the error
    slo = scenario.slo
    with st.expander("API options (latency as the provider delivers it)"):
        st.dataframe(pd.DataFrame([
            {"option": o.name, "TTFT p90": fmt.ms(o.ttft_p90_seconds), "SLO TTFT p90": fmt.ms(slo.ttft_p90_seconds),
             "TPOT p90": fmt.ms(o.tpot_p90_seconds), "SLO TPOT p90": fmt.ms(slo.tpot_p90_seconds),
             "verdict": o.slo_status, "source": o.latency_source}
            for o in decision.options if o.kind == "api"
        ]), hide_index=True, placeholder="-", key="lat_api_table")


def render() -> None:
    """The Latency page."""
    st.title("Latency")
    st.caption("Continuous-batching simulation of one replica: Poisson arrivals with the scenario's token "
               "distributions and prefix caching; each engine step's duration comes from the roofline. "
               "Filled markers meet the SLO, hollow ones miss it.")
    scenario = state.current()
    try:
        options = self_host_options(scenario.options)
    except CostmodelError as exc:
        show_error("Latency", exc)
        st.stop()

    names = [o.name for o in options]
    colors = option_colors(o.name for o in scenario.options)
    cols = st.columns([3, 1, 1])
    chosen = cols[0].multiselect("Self-host options to simulate", names, default=names, key="lat_options")
    requests = cols[1].selectbox("Requests per simulation", [200, 400, 1000, 2000], index=1, key="lat_requests",
                                 help="More requests: steadier p99, slower page.")
    seed = cols[2].number_input("Seed", min_value=0, max_value=10_000, value=0, step=1, key="lat_seed")
    if not chosen:
        st.info("Pick at least one option to simulate.")
        st.stop()

    results = _simulate(scenario, options, chosen, requests=int(requests), seed=int(seed))
    _summary(results, options)
    simulated = [r for r in results if r.load]
    if simulated:
        _charts(scenario, simulated, colors, seed=seed)
    _api_latencies(scenario)


if __name__ == "__main__":  # st.navigation runs this file as a script: render through the imported module
    from app.views import latency

    latency.render()
