"""Scenario page, part 1: workload and SLO widgets -> the plain dict the scenario schema validates.

Widget keys start with `sc_` (state.WIDGET_PREFIX); `populate` seeds them from the current scenario
when absent, so a loaded file, an example or a link shows up in every widget.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import state
from app.widget_seed import seed
from costmodel.scenario import DAYS_PER_MONTH, Scenario

DIST_KINDS = ("fixed", "uniform", "lognormal", "empirical")
VOLUME_MODES = ("requests per day", "tokens per month")
TRAFFIC_MODES = ("24-hour profile", "peak-to-mean ratio")
# Optional SLO limits: (field, label, widget scale to seconds).
OPTIONAL_SLO = (
    ("ttft_p50_seconds", "TTFT p50 (s)", 1.0),
    ("ttft_p99_seconds", "TTFT p99 (s)", 1.0),
    ("tpot_p50_seconds", "TPOT p50 (ms)", 1e-3),
    ("tpot_p99_seconds", "TPOT p99 (ms)", 1e-3),
    ("e2e_p90_seconds", "E2E p90 (s)", 1.0),
    ("e2e_p99_seconds", "E2E p99 (s)", 1.0),
)


def _dist_defaults(prefix: str, dist: Any) -> dict[str, Any]:
    """Widget values for a token distribution; the other kinds start from its mean."""
    mean = float(dist.expected_tokens())
    values: dict[str, Any] = {
        f"{prefix}_kind": dist.kind,
        f"{prefix}_tokens": max(1, round(mean)),
        f"{prefix}_low": max(1, round(mean)),
        f"{prefix}_high": max(1, round(mean)),
        f"{prefix}_mean": mean,
        f"{prefix}_sigma": 0.5,
        f"{prefix}_values": str(max(1, round(mean))),
        f"{prefix}_weights": "",
    }
    if dist.kind == "uniform":
        values[f"{prefix}_low"], values[f"{prefix}_high"] = dist.low_tokens, dist.high_tokens
    elif dist.kind == "lognormal":
        values[f"{prefix}_sigma"] = float(dist.sigma)
    elif dist.kind == "empirical":
        values[f"{prefix}_values"] = ", ".join(str(t) for t in dist.tokens)
        values[f"{prefix}_weights"] = ", ".join(str(w) for w in dist.weights or [])  # str(float) is exact
    return values


def widget_values(scenario: Scenario) -> dict[str, Any]:
    """Every workload/SLO widget's value for this scenario, by key."""
    wl, slo = scenario.workload, scenario.slo
    values: dict[str, Any] = {
        "sc_name": scenario.name,
        "sc_description": scenario.description,
        "sc_as_of": scenario.as_of,
        "sc_volume_mode": VOLUME_MODES[0] if wl.requests_per_day is not None else VOLUME_MODES[1],
        "sc_requests_per_day": float(wl.requests_per_day or wl.requests_per_month() / DAYS_PER_MONTH),
        "sc_tokens_per_month": float(wl.tokens_per_month or wl.tokens_per_month_total()),
        "sc_cached_fraction": float(wl.cached_prompt_fraction),
        "sc_cache_write_fraction": float(wl.cache_write_prompt_fraction),
        "sc_traffic_mode": TRAFFIC_MODES[0] if wl.hourly_traffic_weights is not None else TRAFFIC_MODES[1],
        "sc_peak_to_mean": float(wl.peak_to_mean()),
        "sc_growth_percent": float(wl.growth_per_month * 100.0),
        "sc_batch_allowed": bool(wl.batch_allowed),
        "sc_ttft_p90": float(slo.ttft_p90_seconds),
        "sc_tpot_p90_ms": float(slo.tpot_p90_seconds * 1e3),
    }
    for field, _, scale in OPTIONAL_SLO:
        value = getattr(slo, field)
        values[f"sc_{field}"] = None if value is None else float(value / scale)
    values |= _dist_defaults("sc_prompt", wl.prompt_tokens) | _dist_defaults("sc_output", wl.output_tokens)
    return values


def populate(scenario: Scenario) -> None:
    """Seed absent widget keys from the scenario (values the user changed are kept, app.widget_seed.seed)."""
    for key, value in widget_values(scenario).items():
        seed(key, value)


def _number_list(text: str) -> list[float]:
    # Comma- or space-separated numbers; a word that is not a number is left in so the schema names it.
    return [float(part) if _is_number(part) else part for part in text.replace(",", " ").split()]  # type: ignore[misc]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _distribution(prefix: str, label: str) -> dict[str, Any]:
    st.markdown(f"**{label}**")
    kind = st.selectbox("Distribution", DIST_KINDS, key=f"{prefix}_kind")
    if kind == "fixed":
        return {"kind": "fixed", "tokens": st.number_input("Tokens", step=50, key=f"{prefix}_tokens")}
    if kind == "uniform":
        low, high = st.columns(2)
        return {
            "kind": "uniform",
            "low_tokens": low.number_input("Low (tokens)", step=50, key=f"{prefix}_low"),
            "high_tokens": high.number_input("High (tokens)", step=50, key=f"{prefix}_high"),
        }
    if kind == "lognormal":
        mean, sigma = st.columns(2)
        return {
            "kind": "lognormal",
            "mean_tokens": mean.number_input("Mean (tokens)", step=50.0, key=f"{prefix}_mean"),
            "sigma": sigma.number_input("Sigma of ln(tokens)", step=0.1,
                                        key=f"{prefix}_sigma"),
        }
    values = st.text_input("Observed token counts (comma-separated)", key=f"{prefix}_values")
    weights = st.text_input("Weights (optional, one per count)", key=f"{prefix}_weights")
    data: dict[str, Any] = {"kind": "empirical", "tokens": _number_list(values)}
    if weights.strip():
        data["weights"] = _number_list(weights)
    return data


# The hourly table as last shown, edits included: a plain value the form's keep/restore carries over a visit to
# another page (the data_editor's own state is a delta Streamlit forgets), as app.scenario_options does.
HOURLY_STASH_KEY = "sc_table_stash_hourly"


def _hourly_profile(scenario: Scenario) -> list[float]:
    """24-row editor of the relative request rate per hour, keyed by the load revision."""
    key = f"sc_hourly_{state.revision()}"
    base_key = f"{key}_base"
    if key not in st.session_state or base_key not in st.session_state:
        weights = scenario.workload.hourly_traffic_weights or [1.0] * 24
        stash = st.session_state.get(HOURLY_STASH_KEY)  # the table as last shown (back from another page)
        st.session_state[base_key] = stash if stash is not None else pd.DataFrame(
            {"hour": list(range(24)), "weight": [float(w) for w in weights]})
    edited = st.data_editor(
        st.session_state[base_key], key=key, num_rows="fixed", hide_index=True, disabled=["hour"], height=300, placeholder="",
        column_config={"weight": st.column_config.NumberColumn("relative requests", min_value=0.0, step=0.5,
                                                              help="Requests in this hour relative to the others; empty: 0")},
    )
    st.session_state[HOURLY_STASH_KEY] = edited.reset_index(drop=True)
    weights = [float(w) if pd.notna(w) else 0.0 for w in edited["weight"]]
    fig = go.Figure(go.Bar(x=list(range(24)), y=weights, marker_color="#1f77b4",
                           hovertemplate="hour %{x}: weight %{y}<extra></extra>"))
    fig.update_layout(height=220, margin={"t": 10, "b": 30}, xaxis_title="hour of day", yaxis_title="weight")
    st.plotly_chart(fig, key="sc_hourly_chart")
    return weights


def _unscaled(key: str, shown: float, *, exact: float, per_unit: float) -> float:
    """A widget shown in display units (ms, %) back in schema units; an untouched widget gives the
    scenario's exact value, so visiting the page never changes the scenario by a rounding error."""
    seeded = st.session_state.get(f"{key}__seeded")
    if seeded is not None and shown == seeded:
        return exact
    return shown / per_unit


def workload_and_slo(scenario: Scenario, *, slots: dict[str, Any]) -> dict[str, Any]:
    """Render the workload and SLO widgets; return the draft's name, description, workload and slo.
    `slots` gets a container below each section ("workload", "slo") for its errors."""
    populate(scenario)
    top = st.columns([1, 2, 1])
    name = top[0].text_input("Scenario name", key="sc_name")
    description = top[1].text_input("Description", key="sc_description")
    as_of = top[2].date_input("As of (empty: today)", value=None, key="sc_as_of",
                              help="Evaluation date: retirements and price ages count to it")

    st.subheader("Workload")
    col_volume, col_prompt, col_output = st.columns(3)
    with col_volume:
        mode = st.radio("Volume given as", VOLUME_MODES, key="sc_volume_mode", horizontal=True)
        workload: dict[str, Any] = {}
        if mode == VOLUME_MODES[0]:
            workload["requests_per_day"] = st.number_input(
                "Requests per day", step=10_000.0, format="%.0f", key="sc_requests_per_day")
        else:
            workload["tokens_per_month"] = st.number_input(
                "Tokens per month (prompt + output)", step=1e8, format="%.0f", key="sc_tokens_per_month")
        growth = st.number_input("Growth per month (%)", step=1.0,
                                 key="sc_growth_percent")
        workload["growth_per_month"] = _unscaled("sc_growth_percent", growth,
                                                 exact=scenario.workload.growth_per_month, per_unit=100.0)
        workload["cached_prompt_fraction"] = st.slider(
            "Cached prompt fraction", 0.0, 1.0, step=0.05, key="sc_cached_fraction")
        workload["cache_write_prompt_fraction"] = st.slider(
            "Cache-write prompt fraction", 0.0, 1.0, step=0.05, key="sc_cache_write_fraction")
        workload["batch_allowed"] = st.checkbox("Requests may wait for a batch API (offline)", key="sc_batch_allowed")
    with col_prompt:
        workload["prompt_tokens"] = _distribution("sc_prompt", "Prompt tokens per request")
    with col_output:
        workload["output_tokens"] = _distribution("sc_output", "Output tokens per request")

    st.markdown("**Traffic over the day**")
    traffic = st.radio("Traffic shape", TRAFFIC_MODES, key="sc_traffic_mode", horizontal=True)
    if traffic == TRAFFIC_MODES[0]:
        workload["hourly_traffic_weights"] = _hourly_profile(scenario)
    else:
        workload["peak_to_mean_ratio"] = st.number_input(
            "Peak-to-mean ratio (busiest hour / mean)", step=0.1, key="sc_peak_to_mean")
    slots["workload"] = st.container()

    st.subheader("Latency SLO")
    slo_cols = st.columns(4)
    tpot_ms = slo_cols[1].number_input("TPOT p90 (ms)", step=5.0, key="sc_tpot_p90_ms")
    slo: dict[str, Any] = {
        "ttft_p90_seconds": slo_cols[0].number_input("TTFT p90 (s)", step=0.1, key="sc_ttft_p90"),
        "tpot_p90_seconds": _unscaled("sc_tpot_p90_ms", tpot_ms, exact=scenario.slo.tpot_p90_seconds, per_unit=1e3),
    }
    with st.expander("Optional limits (p50, p99, end-to-end)"):
        cols = st.columns(3)
        for index, (field, label, scale) in enumerate(OPTIONAL_SLO):
            value = cols[index % 3].number_input(label, value=None, key=f"sc_{field}")
            if value is not None:
                exact = getattr(scenario.slo, field)
                slo[field] = _unscaled(f"sc_{field}", value, exact=exact if exact is not None else -1.0,
                                       per_unit=1.0 / scale)
    slots["slo"] = st.container()
    return {"name": name, "description": description, "as_of": as_of, "workload": workload, "slo": slo}
