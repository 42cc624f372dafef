"""Overview (landing) page: the answer first. The recommendation, its $/month, why, what would change it and
links into the detail pages, then the glossary. One call: the Compare page's cached compare_view (shared cache).
"""

from __future__ import annotations

import math

import streamlit as st

from app import glossary, state
from app.compare_cache import cached_compare_view  # the Compare page's cache, without its figure imports
from app.widgets import md, show_error
from costmodel.decision.reasons import quality_statement
from costmodel.decision.recommend import verify_first_sentence
from costmodel.decision.results import Decision, OptionResult
from costmodel.errors import CostmodelError

BILLION = 1e9


def _changes(decision: Decision, chosen: OptionResult) -> list[str]:
    """What would change the answer: the runner-up's gap and the break-even volumes (one definition: where the
    option's cost, its fleet re-sized for the volume, crosses its reference API's)."""
    lines: list[str] = []
    others = [o for o in decision.usable_options if o.name != chosen.name]
    if others:
        runner = others[0]
        gap = runner.usd_per_month - chosen.usd_per_month
        lines.append(f"Next by cost: **{runner.name}** ({runner.kind}) at ${runner.usd_per_month:,.0f}/month "
                     f"({'+' if gap >= 0 else '-'}${abs(gap):,.0f}/month), latency {runner.slo_status}.")
    current = decision.tokens_per_month
    for option in decision.usable_options:
        volume = option.break_even_tokens_per_month
        if volume is None or not math.isfinite(volume) or option.break_even_against is None:
            continue
        direction = "rises" if volume > current else "falls"
        lines.append(f"**{option.name}** breaks even with **{option.break_even_against}** at "
                     f"{volume / BILLION:,.2f}B tokens/month (now {current / BILLION:,.2f}B): their order changes if "
                     f"the volume {direction} past it.")
    if not lines:
        lines.append("No break-even volume between 1/100x and 100x: changing the volume alone does not change the order.")
    return lines


def _answer(decision: Decision) -> None:
    if decision.cheaper_unverified is not None:  # leads page 1, the Overview and compare's text alike
        st.warning(md(verify_first_sentence(decision.cheaper_unverified)))
    if decision.recommendation is None:  # nothing feasible, or nothing known to meet the SLO: say which
        st.error(md("No recommendation: " + " ".join(decision.reasons)))
        st.info(md(quality_statement(decision)))
        return
    chosen = decision.option(decision.recommendation)
    box = st.success if decision.recommendation_meets_slo else st.error
    box(md(f"Recommendation: **{chosen.name}** ({chosen.kind})"))
    cols = st.columns(4)
    cols[0].metric("Cost", f"${chosen.usd_per_month:,.0f}/month", help="Month 0, at this scenario's volume.")
    cols[1].metric("Per million tokens", f"${chosen.usd_per_mtok:,.3f}", help=glossary.tip("$/M tokens"))
    cols[2].metric("Latency SLO", chosen.slo_status.replace("_", " "), help=glossary.tip("SLO"))
    premium = decision.recommendation_premium_usd_per_month
    cols[3].metric("Premium over the cheapest usable", f"${premium or 0:,.0f}/month",
                   help=f"Against {decision.cheapest_usable}, whatever its latency evidence.")
    st.subheader("Why")
    for reason in decision.reasons:
        st.markdown(f"- {md(reason)}")
    st.subheader("What would change it")
    for line in _changes(decision, chosen):
        st.markdown(f"- {md(line)}")
    st.markdown(f"- {md(quality_statement(decision))}")
    for warning in decision.warnings:
        st.warning(md(warning))


def _links() -> None:
    st.subheader("The detail")
    cols = st.columns(4)
    cols[0].page_link("views/compare.py", label="Compare: every option ranked, with charts")
    cols[1].page_link("views/scenario.py", label="Scenario: edit the workload and SLO")
    cols[2].page_link("views/latency.py", label="Latency: TTFT/TPOT against load")
    cols[3].page_link("views/memo.py", label="Memo: the PDF for reviewers")


def render() -> None:
    """The Overview page."""
    st.title("Overview")
    scenario = state.current()
    st.caption(md(f"Scenario **{scenario.name}**: {len(scenario.options)} options. Edit it on the Scenario page; "
                  "the link in the sidebar holds the whole scenario."))
    try:
        view = cached_compare_view(scenario.model_dump_json(), state.calibration_json(), state.api_overrides_json())
    except CostmodelError as exc:
        show_error("Scenario", exc)
        st.stop()
    _answer(view.decision)
    _links()
    with st.expander("Glossary"):
        st.markdown(glossary.markdown())


if __name__ == "__main__":  # st.navigation runs this file as a script: render through the imported module
    from app.views import overview

    overview.render()
