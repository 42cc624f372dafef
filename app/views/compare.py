"""Compare page: the ranked options ($/month, $/M, SLO verdict, utilization, break-even) and the charts
that explain them. One call: costmodel.charts.compare.compare_view (decide + chart data), cached."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import cache_compare, state
from app.errors import show_error
from app.text import md
from costmodel.charts.compare import CompareView
from costmodel.errors import CostmodelError
from costmodel.scenario import parse_scenario

VOLUME_ERROR_KEY = "cmp_volume_error"


def _apply_volume(field: str) -> None:
    """Callback of the volume box: the scenario with the new volume (validated), or an inline error."""
    data = state.current().model_dump(mode="json")
    data["workload"][field] = st.session_state[f"cmp_{field}"]
    try:
        state.set_scenario(parse_scenario(data, where="Compare page"), source="edited")
    except CostmodelError as exc:
        st.session_state[VOLUME_ERROR_KEY] = exc


def _table(view: CompareView) -> pd.DataFrame:
    rows = []
    for rank, o in enumerate(view.decision.options, start=1):
        rows.append({
            "rank": rank,
            "option": o.name,
            "kind": o.kind,
            "$/month": o.usd_per_month,
            "$/M tokens": o.usd_per_mtok,
            "SLO": ("meets" if o.meets_slo else "misses") + (", throttled" if o.throttled else ""),
            "TTFT p90 (ms)": None if o.ttft_p90_seconds is None else o.ttft_p90_seconds * 1e3,
            "TPOT p90 (ms)": None if o.tpot_p90_seconds is None else o.tpot_p90_seconds * 1e3,
            "GPUs": o.gpus,
            "utilization": None if o.utilization is None else o.utilization * 100,
            "break-even utilization": None if o.break_even_utilization is None else o.break_even_utilization * 100,
            "break-even volume (B tokens/month)": (
                None if o.break_even_tokens_per_month is None else o.break_even_tokens_per_month / 1e9),
            "why": o.slo_reason,
        })
    return pd.DataFrame(rows)


TABLE_CONFIG = {
    "$/month": st.column_config.NumberColumn(format="$%,.0f"),
    "$/M tokens": st.column_config.NumberColumn(format="$%.3f"),
    "TTFT p90 (ms)": st.column_config.NumberColumn(format="%.0f"),
    "TPOT p90 (ms)": st.column_config.NumberColumn(format="%.1f"),
    "utilization": st.column_config.NumberColumn(format="%.0f%%"),
    "break-even utilization": st.column_config.NumberColumn(format="%.0f%%"),
    "break-even volume (B tokens/month)": st.column_config.NumberColumn(format="%.2f"),
}

st.title("Compare")
scenario = state.current()
workload = scenario.workload
field = "requests_per_day" if workload.requests_per_day is not None else "tokens_per_month"
if f"cmp_{field}" not in st.session_state:
    st.session_state[f"cmp_{field}"] = float(getattr(workload, field))
cols = st.columns([1, 3])
cols[0].number_input(
    "Requests per day" if field == "requests_per_day" else "Tokens per month (prompt + output)",
    min_value=0.0, step=10_000.0 if field == "requests_per_day" else 1e8, format="%.0f", key=f"cmp_{field}",
    on_change=_apply_volume, args=(field,),
)
cols[1].caption(f"Scenario **{scenario.name}**: {workload.mean_prompt_tokens():,.0f} prompt + "
                f"{workload.mean_output_tokens():,.0f} output tokens per request; SLO p90 TTFT "
                f"{scenario.slo.ttft_p90_seconds:g} s, TPOT {scenario.slo.tpot_p90_seconds * 1e3:g} ms. "
                "Edit everything else on the Scenario page.")
volume_error = st.session_state.pop(VOLUME_ERROR_KEY, None)
if volume_error is not None:
    show_error("Volume not applied", volume_error)

keys = (scenario.model_dump_json(), state.calibration_json(), state.api_overrides_json())
if keys[2]:
    st.info(f"API price overrides from the Prices page are in effect (this session only): {keys[2]}")
try:
    view = cache_compare.cached_compare_view(*keys)
    figures = cache_compare.cached_compare_figures(*keys)
except CostmodelError as exc:
    show_error("Scenario", exc)
    st.stop()

decision = view.decision
chosen = decision.option(decision.recommendation)
headline = md(f"Recommendation: **{chosen.name}** ({chosen.kind}), ${chosen.usd_per_month:,.0f}/month, "
              f"${chosen.usd_per_mtok:.3f} per million tokens.")
(st.success if decision.recommendation_meets_slo else st.error)(headline)
for reason in decision.reasons:
    st.markdown(f"- {md(reason)}")
for warning in decision.warnings:
    st.warning(md(warning))
st.caption(f"{decision.requests_per_month:,.0f} requests and {decision.tokens_per_month / 1e9:,.2f}B tokens per "
           f"month; peak {decision.peak_requests_per_second:.2f} requests/s. Efficiencies: {decision.efficiency_source}.")

st.subheader("Ranked options")
st.dataframe(_table(view), hide_index=True, column_config=TABLE_CONFIG, key="cmp_table")

left, right = st.columns(2)
with left:
    st.subheader("$/month vs monthly volume")
    st.plotly_chart(figures["volume"], key="cmp_volume_chart")
with right:
    st.subheader("$/M tokens vs utilization")
    st.plotly_chart(figures["utilization"], key="cmp_utilization_chart")
left, right = st.columns(2)
with left:
    st.subheader("Traffic over the day vs provisioned capacity")
    st.plotly_chart(figures["traffic"], key="cmp_traffic_chart")
with right:
    st.subheader("Cost breakdown")
    st.plotly_chart(figures["breakdown"], key="cmp_breakdown_chart")

with st.expander("Price sources and notes"):
    sources = pd.DataFrame([
        {"option": o.name, "price": s.what, "source": s.source, "checked": s.checked, "age (days)": s.age_days}
        for o in decision.options for s in o.price_sources
    ])
    st.dataframe(sources, hide_index=True, key="cmp_sources")
    for o in decision.options:
        for note in o.notes:
            st.markdown(f"- **{md(o.name)}**: {md(note)}")
