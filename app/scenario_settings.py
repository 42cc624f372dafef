"""Scenario page, part 3: the scenario-level settings beyond workload and SLO: horizon, fleet policy
(headroom, N+1), the quality floor and substitute groups, accepting unverified latency, the memo's context
(owner, goals, non-goals, constraints) and the deployment search's limits.

Each widget is seeded from the scenario and written into the draft only when changed (app.widget_seed).
"""

from __future__ import annotations

from typing import Any, get_args

import streamlit as st

from app import cache
from app.widget_seed import changed, lines, names_per_line, seed
from costmodel.catalog.engines import engine_ids
from costmodel.catalog.quality import DEFAULT_BENCHMARK, load_quality_scores
from costmodel.scenario import Scenario
from costmodel.scenario.search import SearchSettings

# The serving modes a search may add (the values of SearchSettings.modes: list[Literal[...]]).
SEARCH_MODES: tuple[str, ...] = get_args(get_args(SearchSettings.model_fields["modes"].annotation)[0])

QUALITY_MODES = ("none (options are substitutes)", "at least as good as", "minimum score")


@st.cache_data(max_entries=1)
def quality_benchmarks() -> tuple[str, ...]:
    """Benchmark ids of the bundled quality sheet."""
    return load_quality_scores().benchmarks()


def _decision(scenario: Scenario, draft: dict[str, Any]) -> None:
    seed("sc_horizon_months", scenario.horizon_months)
    seed("sc_accept_unverified", scenario.accept_unverified_latency)
    seed("sc_fleet_target", scenario.fleet.target_peak_utilization)
    seed("sc_fleet_min_replicas", scenario.fleet.min_replicas)
    seed("sc_fleet_spare_replicas", scenario.fleet.spare_replicas)
    cols = st.columns(5)
    cols[0].number_input("Horizon (months)", step=1, key="sc_horizon_months",
                         help="Months the decision is evaluated over, 1..120; growth applies month by month.")
    cols[1].number_input("Fleet: target peak utilization", value=None, step=0.05, key="sc_fleet_target",
                         help="Share of a replica's capacity used in the peak hour (headroom = 1 - this); "
                              "empty: 0.8 interactive, 1.0 batch. An option's own value wins.")
    cols[2].number_input("Fleet: minimum replicas", value=None, step=1, key="sc_fleet_min_replicas",
                         help="Replicas kept whatever the demand; empty: 2 interactive (N+1), 1 batch.")
    cols[3].number_input("Fleet: spare replicas (N+k)", value=None, step=1, key="sc_fleet_spare_replicas",
                         help="Replicas beyond what the hour's demand needs, so k can be down; empty: 1 interactive "
                              "(N+1), 0 batch.")
    cols[4].checkbox("Rank API options with unverified latency with the verified ones", key="sc_accept_unverified")
    if changed("sc_horizon_months"):
        draft["horizon_months"] = st.session_state["sc_horizon_months"]
    if changed("sc_accept_unverified"):
        draft["accept_unverified_latency"] = st.session_state["sc_accept_unverified"]
    if changed("sc_fleet_target", "sc_fleet_min_replicas", "sc_fleet_spare_replicas"):
        fleet = {"target_peak_utilization": st.session_state["sc_fleet_target"],
                 "min_replicas": st.session_state["sc_fleet_min_replicas"],
                 "spare_replicas": st.session_state["sc_fleet_spare_replicas"]}
        draft["fleet"] = {k: v for k, v in fleet.items() if v is not None}


def _quality(scenario: Scenario, draft: dict[str, Any], option_names: list[str]) -> None:
    floor = scenario.quality
    mode = QUALITY_MODES[0] if floor is None else QUALITY_MODES[1] if floor.at_least_as_good_as else QUALITY_MODES[2]
    subjects = [*cache.model_ids(), *cache.api_price_ids()]
    seed("sc_quality_mode", mode)
    seed("sc_quality_subject", floor.at_least_as_good_as if floor and floor.at_least_as_good_as else subjects[0])
    seed("sc_quality_min_score", floor.min_score if floor else None)
    seed("sc_quality_benchmark", floor.benchmark if floor and floor.benchmark else DEFAULT_BENCHMARK)
    seed("sc_substitutes", "\n".join(", ".join(group) for group in scenario.substitutes or []))
    cols = st.columns([1, 2, 1, 1])
    chosen = cols[0].selectbox("Quality floor", QUALITY_MODES, key="sc_quality_mode")
    benchmarks = list(quality_benchmarks())
    if chosen == QUALITY_MODES[1]:
        cols[1].selectbox("Model or API price id", subjects, key="sc_quality_subject")
    elif chosen == QUALITY_MODES[2]:
        cols[1].number_input("Minimum score", value=None, key="sc_quality_min_score")
    if chosen != QUALITY_MODES[0]:
        cols[2].selectbox("Benchmark", benchmarks, key="sc_quality_benchmark")
    cols[3].text_area("Substitute groups (one per line, option names comma-separated)", key="sc_substitutes",
                      help=f"Options: {', '.join(option_names)}. An option in no group is its own group.")
    if changed("sc_quality_mode", "sc_quality_subject", "sc_quality_min_score", "sc_quality_benchmark"):
        benchmark = st.session_state["sc_quality_benchmark"]
        if chosen == QUALITY_MODES[0]:
            draft["quality"] = None
        elif chosen == QUALITY_MODES[1]:
            draft["quality"] = {"at_least_as_good_as": st.session_state["sc_quality_subject"], "benchmark": benchmark}
        else:
            draft["quality"] = {"min_score": st.session_state["sc_quality_min_score"], "benchmark": benchmark}
    if changed("sc_substitutes"):
        groups = names_per_line(st.session_state["sc_substitutes"])
        draft["substitutes"] = groups or None


def _context(scenario: Scenario, draft: dict[str, Any]) -> None:
    seed("sc_owner", scenario.owner)
    cols = st.columns(4)
    cols[0].text_input("Owner (memo sign-off)", key="sc_owner")
    if changed("sc_owner"):
        draft["owner"] = st.session_state["sc_owner"]
    for col, field, label in ((cols[1], "goals", "Goals"), (cols[2], "non_goals", "Non-goals"),
                              (cols[3], "constraints", "Constraints")):
        key = f"sc_{field}"
        seed(key, "\n".join(getattr(scenario, field)))
        col.text_area(f"{label} (one per line)", key=key)
        if changed(key):
            draft[field] = lines(st.session_state[key])


def _search(scenario: Scenario, draft: dict[str, Any]) -> None:
    limits = scenario.search
    seed("sc_search_all_models", bool(limits and limits.models == "all"))
    seed("sc_search_models", list(limits.models) if limits and isinstance(limits.models, list) else [])
    seed("sc_search_hardware", list(limits.hardware or []) if limits else [])
    seed("sc_search_engines", list(limits.engines or []) if limits else [])
    seed("sc_search_ops", float(limits.ops_usd_per_month) if limits and limits.ops_usd_per_month is not None else None)
    seed("sc_search_ops_gpu", limits.ops_usd_per_gpu_month if limits else None)
    seed("sc_search_warmup", float(limits.warmup_minutes) if limits else 60.0)
    seed("sc_search_modes", list(limits.modes) if limits else [])
    whole = st.checkbox("Search the whole catalog (its models count as substitutes)", key="sc_search_all_models")
    cols = st.columns(6)
    if not whole:
        cols[0].multiselect("Models (empty: the scenario's own)", cache.picker_model_ids(), key="sc_search_models")
    cols[1].multiselect("Accelerators (empty: all priced)", cache.hardware_ids(), key="sc_search_hardware")
    cols[2].multiselect("Engines (empty: all)", list(engine_ids()), key="sc_search_engines")
    cols[3].number_input("Ops $/month per configuration", value=None, step=500.0, key="sc_search_ops",
                         help="empty: the scenario's self-host options' own")
    cols[4].number_input("Ops $ per GPU-month", value=None, step=50.0, key="sc_search_ops_gpu",
                         help="empty: the scenario's self-host options' own")
    cols[5].number_input("Warm-up per started replica (min)", step=5.0, key="sc_search_warmup")
    st.multiselect("Serving modes searched beyond plain TP (empty: TP only)", list(SEARCH_MODES),
                   key="sc_search_modes", help="disaggregated xPyD pools, speculative decoding / MTP, and DEP "
                   "layouts (MoE models)")
    keys = ("sc_search_all_models", "sc_search_models", "sc_search_hardware", "sc_search_engines", "sc_search_ops",
            "sc_search_ops_gpu", "sc_search_warmup", "sc_search_modes")
    if changed(*keys):
        get = st.session_state.get
        models = "all" if get("sc_search_all_models") else (get("sc_search_models") or None)
        search = {"models": models, "hardware": get("sc_search_hardware") or None,
                  "engines": get("sc_search_engines") or None, "ops_usd_per_month": get("sc_search_ops"),
                  "ops_usd_per_gpu_month": get("sc_search_ops_gpu"), "warmup_minutes": get("sc_search_warmup"),
                  "modes": get("sc_search_modes") or None}
        draft["search"] = {k: v for k, v in search.items() if v is not None}


def settings_editor(scenario: Scenario, draft: dict[str, Any]) -> None:
    """Render the scenario-level settings; a changed widget writes its field into `draft`."""
    st.subheader("Decision settings")
    _decision(scenario, draft)
    _quality(scenario, draft, [str(o.get("name")) for o in draft.get("options", [])])
    with st.expander("Memo context: owner, goals, non-goals, constraints"):
        _context(scenario, draft)
    with st.expander("Deployment search limits (Search page, `compare --search`)"):
        _search(scenario, draft)
