"""Scenario page widgets seeded from the scenario, and written back only when the user changed them.

A widget's key is seeded once from the scenario (with a `__seeded` twin holding the seed). The page starts its
draft from the whole scenario and overwrites a field only when its widget differs from the seed, so visiting
the page never changes a field, not even by a rounding or a default (the round trip is exact).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

SEEDED = "__seeded"


def seed(key: str, value: Any) -> None:
    """Give the widget `key` this starting value unless it already has one."""
    if key not in st.session_state:
        st.session_state[key] = value
        st.session_state[f"{key}{SEEDED}"] = value


def changed(*keys: str) -> bool:
    """Whether any of these widgets differs from its seed."""
    return any(st.session_state.get(key) != st.session_state.get(f"{key}{SEEDED}") for key in keys)


def lines(text: str) -> list[str]:
    """One entry per non-blank line, stripped."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def names_per_line(text: str) -> list[list[str]]:
    """Groups of comma-separated names, one group per line."""
    return [[name.strip() for name in line.split(",") if name.strip()] for line in lines(text)]
