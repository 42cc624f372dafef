"""Latency page: the serving simulator's TTFT/TPOT percentiles vs load for a self-host option (capacity
at the SLO marked), and the throughput-vs-interactivity curve of every self-host option with the SLO.
One call per option: costmodel.charts.latency.option_latency, cached."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import cache_latency, state
from app.colors import option_colors
from app.errors import show_error
from app.figures_latency import interactivity_figure, load_figure
from costmodel.charts.latency import interactivity_floor, self_host_options
from costmodel.errors import CostmodelError
from costmodel.scenario import ApiOption

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

results = []
for option in options:
    if option.name not in chosen:
        continue
    try:
        results.append(cache_latency.cached_option_latency(
            option.model_dump_json(), scenario.workload.model_dump_json(), scenario.slo.model_dump_json(),
            state.calibration_json(), requests=int(requests), seed=int(seed)))
    except CostmodelError as exc:
        show_error(f"Option '{option.name}'", exc)

summary = pd.DataFrame([
    {
        "option": r.name,
        "replica": f"{r.gpus} x {r.hardware_id}, {r.model_id}",
        "meets SLO at some load": r.feasible,
        "capacity at SLO (req/s per replica)": r.capacity_requests_per_second,
        "saturation (req/s)": r.saturation_requests_per_second,
        "why not": r.reason,
    }
    for r in results
])
st.subheader("Capacity per replica")
st.dataframe(summary, hide_index=True, key="lat_summary",
             column_config={"capacity at SLO (req/s per replica)": st.column_config.NumberColumn(format="%.2f"),
                            "saturation (req/s)": st.column_config.NumberColumn(format="%.2f")})

simulated = [r for r in results if r.load]
if simulated:
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

apis = [o for o in scenario.options if isinstance(o, ApiOption)]
if apis:
    with st.expander("API options (latency as the provider delivers it)"):
        st.dataframe(pd.DataFrame([
            {"option": o.name, "TTFT p90 (s)": o.ttft_p90_seconds, "TPOT p90 (s)": o.tpot_p90_seconds,
             "source": "given in the scenario" if o.ttft_p90_seconds else "not measured: run costmodel probe-endpoint"}
            for o in apis
        ]), hide_index=True, key="lat_api_table")
