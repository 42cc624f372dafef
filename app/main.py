"""Streamlit entry point (`make run` -> `streamlit run app/main.py`): navigation over the pages in views/.

Each page module (app/views/NAME.py) turns widgets into one library call and renders the returned object;
the scenario lives in st.session_state and in the URL (query parameter `s`), see app/state.py.
"""

from __future__ import annotations

import streamlit as st

from app import state
from app.page_list import PAGES

st.set_page_config(page_title="costmodel: API vs self-hosted LLM", layout="wide")
state.init_scenario()
link_error = state.take_link_error()
if link_error:
    st.error(f"**Shared link**: {link_error}. Showing the default example instead.")

page = st.navigation(
    [st.Page(p.file, title=p.title, url_path=p.url_path, default=index == 0) for index, p in enumerate(PAGES)]
)
with st.sidebar:
    st.caption(f"Scenario: **{state.current().name}** ({st.session_state.get(state.SOURCE_KEY, '')})")
link_box = st.sidebar.container()
if page.url_path != "scenario" and any(str(k).startswith(state.WIDGET_PREFIX) for k in st.session_state):
    # Another page: the Scenario form's values are kept aside and its widgets dropped, never left to Streamlit,
    # which may drop them half-way (a form that came back blank); they come back, unapplied edits included.
    state.leave_scenario_form()
elif page.url_path == "scenario" and state.KEPT_KEY in st.session_state:
    state.restore_scenario_form()
elif page.url_path == "scenario":
    state.resend_unsent_form_values()
page.run()
state.sync_url()
with link_box, st.expander("Copy link"):
    st.caption("This page with the whole scenario (use the copy icon):")
    st.code(state.share_link(st.context.url), language=None, wrap_lines=True)
