"""Search page: search the deployment space for the current scenario (costmodel.search.search) with a progress
bar and Cancel (the search runs in a worker thread, app/background.py), show the Pareto fronts of $/M tokens vs tokens/s per user and vs TTFT p90, and add any configuration found
to the scenario as a self-host option in one click.

Owns: the search's scope widgets (models, accelerators, top K), the last result (session state, with the
scenario it was run for) and the "add" buttons. The search itself is one library call.
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from app import state
from app.background import BackgroundWork
from app.cache_capacity import capacity_cache
from app.widgets import md, show_error
from costmodel.catalog import accelerators, models
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.pricing import load_gpu_prices
from costmodel.scenario import Scenario, SearchSettings
from costmodel.search import Configuration, SearchResult, option_name, search, with_configuration
from costmodel.search.mode_choice import SEARCH_MODES
from costmodel.search.rows import variants_summary
from costmodel.search.space import EXCLUDED_MODELS

RESULT_KEY = "search_last"
STOPPED_KEY = "search_stopped"  # a StoppedSearch until the next search starts
FRONT_COLOR, BEST_COLOR = "#1f77b4", "#ff7f0e"
# The table of configurations found: engine profile and scaling (fixed / autoscale / mixed) as the search
# enumerates them, the replicas paid at the peak and the scenario's operations cost inside $/month.
ROW_TITLES = ("configuration", "engine", "scaling", "$/month", "$/M tokens", "tok/s per user", "TTFT p90", "replicas",
              "of it ops", "")
ROW_WIDTHS = [3.4, 1.0, 1.0, 1.1, 1.1, 1.1, 1.1, 0.9, 1.0, 1.3]


@dataclass(frozen=True)
class LastSearch:
    """The last search of this session and what it was run for (the scenario less its options)."""

    basis: str
    result: SearchResult
    top_k: int


def search_basis(scenario: Scenario) -> str:
    """What a search depends on: the scenario without its options, name and description."""
    return scenario.model_dump_json(exclude={"options", "name", "description"})


def scoped(scenario: Scenario, *, model_ids: list[str], hardware_ids: list[str],
           whole_catalog: bool = False, modes: list[str] | None = None) -> Scenario:
    """The scenario with its `search:` limits set from the page (no models: the scenario's own, or those past its
    quality floor; `whole_catalog`: every catalog model, treated as substitutes; `modes`: the serving modes to
    search, None keeps the scenario's); its other search settings (ops, engines, warm-up) are kept."""
    current = scenario.search or SearchSettings()
    models_value = "all" if whole_catalog else (model_ids or None)
    update: dict[str, object] = {"models": models_value, "hardware": hardware_ids or None}
    if modes is not None:
        update["modes"] = modes
    settings = current.model_copy(update=update)
    return scenario.model_copy(update={"search": settings})


@dataclass(frozen=True)
class StoppedSearch:
    """A search the user stopped (Cancel, or any other widget while it ran): how far it had come."""

    fraction: float
    text: str


def run_search(scenario: Scenario, *, top_k: int) -> SearchResult:
    """One library call in a worker thread, with a progress bar and Cancel (app/background.py); the capacities
    go to the server's shared cache. A click while it runs stops it: the page's rerun comes at once and the
    worker stops at the search's next progress call (after the current model screened or simulation)."""
    bar = st.progress(0.0, text="Enumerating and screening configurations with the roofline...")
    st.button("Cancel", key="search_cancel", help="Stops the search now; the page stays as it was before the run.")
    calibration_json = state.calibration_json()
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    cache = capacity_cache()  # the server's cache, fetched here: Streamlit calls belong to the page's thread
    work = BackgroundWork(lambda progress: search(scenario, top_k=top_k, calibration=calibration, cache=cache,
                                                  progress=progress), name="costmodel-search").start()
    shown: list[tuple[float, str]] = []

    def draw(fraction: float, text: str) -> None:
        shown.append((fraction, text))
        bar.progress(fraction, text=text or "Enumerating and screening configurations with the roofline...")

    try:
        result = work.wait(draw)
    except BaseException:  # Cancel (Streamlit's rerun or stop raised inside draw): the work is cancelled
        fraction, text = shown[-1] if shown else (0.0, "")
        st.session_state[STOPPED_KEY] = StoppedSearch(fraction=fraction, text=text)
        raise
    bar.progress(1.0, text=f"Done: {result.candidates_simulated:,} of {result.candidates_enumerated:,} "
                           f"configurations simulated in {result.seconds:.1f} s")
    return result


def front_figure(result: SearchResult) -> go.Figure:
    """Two panels: $/M tokens against tokens/s per user, and against TTFT p90; the star is the cheapest."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("$/M tokens vs tokens/s per user (higher is better)",
                                                        "$/M tokens vs TTFT p90 (lower is better)"))
    panels = ((result.frontier_tokens_per_second_per_user, "tokens_per_second_per_user"),
              (result.frontier_ttft, "ttft_p90_seconds"))
    for col, (rows, metric) in enumerate(panels, start=1):
        fig.add_trace(go.Scatter(
            x=[r.usd_per_mtok for r in rows], y=[getattr(r, metric) for r in rows], mode="lines+markers+text",
            line={"shape": "hv", "color": FRONT_COLOR}, name="front", showlegend=col == 1,
            text=[point_label(r) for r in rows], textposition="top right", textfont={"size": 10},
            customdata=[label(r) for r in rows],
            hovertemplate="%{customdata}<br>$%{x:.3f}/M tokens<br>%{y:.3g}<extra></extra>"),
            row=1, col=col)
        fig.update_xaxes(range=axis_range([r.usd_per_mtok for r in rows]), row=1, col=col)
        fig.update_yaxes(range=axis_range([getattr(r, metric) for r in rows]), row=1, col=col)
        if result.best:
            best = result.best[0]
            fig.add_trace(go.Scatter(x=[best.usd_per_mtok], y=[getattr(best, metric)], mode="markers",
                                     marker={"symbol": "star", "size": 14, "color": BEST_COLOR}, name="cheapest",
                                     showlegend=col == 1, text=[label(best)], hovertemplate="%{text}<extra></extra>"),
                          row=1, col=col)
    fig.update_xaxes(title_text="$/M tokens")
    fig.update_yaxes(title_text="tokens/s per user", row=1, col=1)
    fig.update_yaxes(title_text="TTFT p90 (s)", row=1, col=2)
    fig.update_layout(height=380, margin={"t": 40, "b": 40})
    return fig


def axis_range(values: list[float]) -> list[float] | None:
    """An axis from just below the data to just above it (never below 0: every quantity here is positive);
    a single point gets +-20% of its value instead of plotly's default span around it."""
    if not values:
        return None
    low, high = min(values), max(values)
    pad = (high - low) * 0.12 if high > low else abs(high) * 0.2 or 1.0
    return [max(0.0, low - pad), high + pad]


def point_label(row: Configuration) -> str:
    """'qwen2.5-7b 1x l4': a front point's short label (the hover has the whole configuration); a serving mode
    appended when the row runs one ('deepseek-r1 16x h200 DEP16 + mtp1')."""
    text = f"{row.model} {row.gpus_per_replica}x {row.hardware}"
    return text if row.mode_choice is None else f"{text} {row.mode_label()}"


def label(row: Configuration) -> str:
    """'qwen2.5-7b, 1x l4 fp8/fp8 (offering)', the serving mode appended when the row runs one."""
    text = f"{row.model}, {row.gpus_per_replica}x {row.hardware} {row.weight_dtype}/{row.kv_dtype} ({row.offering})"
    return text if row.mode_choice is None else f"{text}, {row.mode_label()}"


def mode_rows_table(result: SearchResult) -> list[dict[str, object]]:
    """The cheapest configuration per serving-mode family (empty unless the search ran modes)."""
    return [{"serving mode": r.mode_family(), "configuration": label(r), "$/month": round(r.usd_per_month),
             "$/M tokens": round(r.usd_per_mtok, 3), "tok/s per user": round(r.tokens_per_second_per_user),
             "TTFT p90 (ms)": None if r.ttft_p90_seconds is None else round(r.ttft_p90_seconds * 1e3)}
            for r in result.best_by_mode]


def variants_note(row: Configuration) -> str:
    """' (same cost: bf16/fp8 vllm, ...)' for the variants collapsed into the row, '' when none."""
    others = variants_summary(row)
    return f" (same cost: {others})" if others else ""


def listed_rows(result: SearchResult) -> list[Configuration]:
    """The cheapest K, then the front configurations not among them."""
    return list(dict.fromkeys([*result.best, *result.frontier]))


def _add(configuration: Configuration, name: str) -> None:
    try:
        state.set_scenario(with_configuration(state.current(), configuration, name=name),
                           source=f"added {name} from the search")
        st.session_state["search_added"] = name
    except CostmodelError as exc:
        st.session_state["search_added_error"] = str(exc)


def _rows(result: SearchResult) -> None:
    names = {o.name for o in state.current().options}
    header = st.columns(ROW_WIDTHS)
    for cell, title in zip(header, ROW_TITLES, strict=True):
        cell.markdown(f"**{title}**" if title else "")
    for rank, row in enumerate(listed_rows(result), start=1):
        name = option_name(rank, row)
        cells = st.columns(ROW_WIDTHS)
        cells[0].markdown(md(label(row)) + (" (cheapest)" if rank == 1 else ""))
        cells[1].markdown(md(row.engine))
        cells[2].markdown(md(row.scaling))
        cells[3].markdown(md(f"${row.usd_per_month:,.0f}"))
        cells[4].markdown(md(f"${row.usd_per_mtok:,.3f}"))
        cells[5].markdown(f"{row.tokens_per_second_per_user:,.0f}")
        cells[6].markdown("n/a" if row.ttft_p90_seconds is None else f"{row.ttft_p90_seconds * 1e3:,.0f} ms")
        cells[7].markdown(f"{row.replicas:,}")
        cells[8].markdown(md(f"${row.ops_usd_per_month:,.0f}"))
        if row.variants[1:]:
            cells[0].caption(md(variants_note(row).strip()))
        added = name in names
        cells[9].button("added" if added else "add to scenario", key=f"search_add_{rank}", disabled=added,
                        on_click=_add, args=(row, name), help=f"adds the self-host option '{name}'")


def _scope_widgets(scenario: Scenario) -> tuple[list[str], list[str], int, bool, list[str]]:
    """The search's scope as the page sets it: models, accelerators, top K, whole catalog, serving modes."""
    limits = scenario.search
    cols = st.columns([3, 3, 1])
    listed = limits.models if limits and isinstance(limits.models, list) else []
    model_ids = cols[0].multiselect(
        "Models (none: the scenario's own, or those past its quality floor)",
        [m for m in sorted(models()) if m not in EXCLUDED_MODELS], default=listed, key="search_models")
    offered = sorted({row.accelerator_id for row in load_gpu_prices().rows} & set(accelerators()))
    hardware_ids = cols[1].multiselect(
        "Accelerators (none: every one with a GPU price)", offered,
        default=[h for h in (limits.hardware or []) if h in offered] if limits else [], key="search_hardware")
    top_k = int(cols[2].number_input("Top K", min_value=1, max_value=20, value=5, step=1, key="search_top_k"))
    whole = st.checkbox("Search the whole catalog (its models are then treated as substitutes of the scenario's)",
                        value=bool(limits and limits.models == "all"), key="search_whole_catalog")
    modes = st.multiselect("Serving modes beside aggregated tensor parallel (where they apply: MoE or whole-node "
                           "models, published MTP acceptance)", list(SEARCH_MODES),
                           default=list(limits.modes) if limits else [], key="search_modes")
    return model_ids, hardware_ids, top_k, whole, modes


def _notices() -> None:
    """What the last run, or the last click, left to say: a stopped search, an added or refused option."""
    stopped = st.session_state.get(STOPPED_KEY)
    if isinstance(stopped, StoppedSearch):
        st.warning(md(f"The search was stopped at {stopped.fraction:.0%}"
                      + (f" ({stopped.text})" if stopped.text else "") + ": nothing from it was kept"
                      + (" (the last finished search is below)." if RESULT_KEY in st.session_state else ".")
                      + " Press **Run the search** to start again."))
    if "search_added" in st.session_state:
        st.success(md(f"Added **{st.session_state.pop('search_added')}** to the scenario: it is on the Compare "
                      "page and in the memo."))
    if "search_added_error" in st.session_state:
        st.error(md(st.session_state.pop("search_added_error")))


def render() -> None:
    """The Search page."""
    st.title("Search")
    st.caption("Which model, GPU, GPU count and precision serve this scenario cheapest within its SLO? The search "
               "enumerates every configuration (model x accelerator with a price offering x tensor-parallel size x "
               "weight/KV dtype x offering x engine x scaling), screens them all with the roofline (memory fit, a "
               "$/month lower bound, a TPOT lower bound), simulates only those that could still be among the "
               "cheapest, and shows the Pareto fronts of the simulated ones. It plays by the decision's rules: the "
               "scenario's own models (or those past its quality floor), and the scenario's operations and host "
               "costs on every configuration. Add any configuration to the scenario in one click.")
    scenario = state.current()
    model_ids, hardware_ids, top_k, whole, modes = _scope_widgets(scenario)
    if st.button("Run the search", type="primary", key="search_run"):
        st.session_state.pop(STOPPED_KEY, None)
        try:
            result = run_search(scoped(scenario, model_ids=model_ids, hardware_ids=hardware_ids, whole_catalog=whole,
                                       modes=modes), top_k=top_k)
            st.session_state[RESULT_KEY] = LastSearch(basis=search_basis(scenario), result=result, top_k=top_k)
        except CostmodelError as exc:
            show_error("Search", exc)
    _notices()
    last = st.session_state.get(RESULT_KEY)
    if not isinstance(last, LastSearch):
        st.info("Set the scope and press **Run the search** (the whole catalog takes about half a minute).")
        return
    if last.basis != search_basis(scenario):
        st.warning("The workload or SLO changed since this search ran; run it again for current figures.")
    result = last.result
    st.markdown(md(f"{result.candidates_enumerated:,} configurations enumerated, {result.candidates_pruned:,} "
                   f"pruned by the roofline bounds, {result.candidates_simulated:,} simulated in "
                   f"{result.seconds:.1f} s."))
    if result.scope is not None:
        st.caption(md(result.scope.sentence()))
    if result.candidates_without_host:
        st.caption(md(f"{result.candidates_without_host:,} owned configurations were left out: their host server "
                      "has no sourced figures."))
    if not result.best:
        st.error("No searched configuration meets the SLO: widen the models or accelerators, or relax the SLO.")
        return
    if result.best_by_mode:
        st.subheader("Cheapest per serving mode")
        st.dataframe(mode_rows_table(result), hide_index=True, key="search_modes_table")
        st.caption("Aggregated or disaggregated, with or without MTP, tensor or expert parallel: each simulated and "
                   "costed as the options are; a mode not listed was pruned (its cost bound could not enter the top K).")
    st.plotly_chart(front_figure(result), key="search_front_chart")
    for why in dict.fromkeys(w for w in (result.frontier_tokens_per_second_per_user_reason,
                                         result.frontier_ttft_reason) if w):
        st.caption(md(f"A front has one point: {why}."))
    st.subheader("Configurations found")
    _rows(result)


if __name__ == "__main__":  # st.navigation runs this file as a script: render through the imported module
    from app.views import search as search_page

    search_page.render()
