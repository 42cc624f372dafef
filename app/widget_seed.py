"""Scenario page widgets seeded from the scenario, and written back only when the user changed them.

A widget's key is seeded once from the scenario (with a `__seeded` twin holding the seed). The page starts its
draft from the whole scenario and overwrites a field only when its widget differs from the seed, so visiting
the page never changes a field, not even by a rounding or a default (the round trip is exact).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

SEEDED = "__seeded"


def values_sent_with_this_run() -> dict[str, Any]:
    """The values of the keyed widgets the browser sent with this run, by key. Streamlit keeps them by element id
    (which ends with the widget's key) in private state, read here defensively: empty if it moved."""
    try:
        from streamlit.elements.lib.utils import user_key_from_element_id
        from streamlit.runtime.state import get_session_state

        incoming = get_session_state()._state._new_widget_state  # private: no public API
        element_ids = list(incoming.states)
    except (ImportError, AttributeError):
        return {}
    sent: dict[str, Any] = {}
    for element_id in element_ids:
        key = user_key_from_element_id(element_id)
        try:
            if key:
                sent[key] = incoming[element_id]
        except KeyError:  # a state Streamlit cannot read back yet (no metadata): left out
            continue
    return sent


def seed(key: str, value: Any) -> None:
    """Give the widget `key` this starting value unless it already has one. A value the browser sent with this
    run wins, the seed twin keeping the scenario's (so the edit counts as one): a widget dropped from session
    state while another page ran can still send an edit, e.g. a date committed by the click that opened
    another page reaches the server in the next Scenario run; seeding it from the scenario would discard it."""
    if key not in st.session_state:
        st.session_state[key] = values_sent_with_this_run().get(key, value)
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
