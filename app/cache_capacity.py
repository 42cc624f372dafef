"""One capacity cache for the whole server: an option's capacity at the SLO is simulated once, and the
Compare page and the memo report the same figure for it."""

from __future__ import annotations

import streamlit as st

from costmodel.decision.capacity import CapacityCache


@st.cache_resource(show_spinner=False)
def capacity_cache() -> CapacityCache:
    """The server-wide CapacityCache (thread-safe; bounded)."""
    return CapacityCache(max_entries=512)
