"""Compare at phone width: a compact ranked list replaces the wide options table below PHONE_MAX_WIDTH_PX.

Both are rendered; CSS on their containers' `st-key-*` classes shows one or the other, so the page needs no
knowledge of the screen (Streamlit runs on the server and never sees the viewport).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app.widgets import md
from costmodel.decision.results import Decision, OptionResult
from costmodel.memo.text import rank_cells
from costmodel.units import fmt_money

PHONE_MAX_WIDTH_PX = 640
COMPACT_KEY = "cmp_compact"  # container keys: Streamlit adds the class st-key-<key>
TABLE_KEY = "cmp_table_box"
_CSS = (f"<style>.st-key-{COMPACT_KEY} {{display: none;}} @media (max-width: {PHONE_MAX_WIDTH_PX}px) "
        f"{{.st-key-{COMPACT_KEY} {{display: block;}} .st-key-{TABLE_KEY} {{display: none;}}}}</style>")


def compact_lines(decision: Decision, slo_cell: Callable[[OptionResult], str]) -> list[str]:
    """One markdown line per option, as ranked: '1. **name**: $1,234/month, meets'."""
    return [f"{rank}. **{o.name}**: {fmt_money(o.usd_per_month)}/month, {slo_cell(o)}" if rank != "-" else
            f"- **{o.name}**: its API's plan (0 base replicas)"
            for rank, o in zip(rank_cells(decision), decision.options, strict=True)]


def render_ranked(decision: Decision, slo_cell: Callable[[OptionResult], str], table: Callable[[], None]) -> None:
    """The compact list (shown at phone width) and the full table (shown otherwise)."""
    st.markdown(_CSS, unsafe_allow_html=True)
    with st.container(key=COMPACT_KEY):
        st.markdown(md("\n".join(compact_lines(decision, slo_cell))))
    with st.container(key=TABLE_KEY):
        table()
