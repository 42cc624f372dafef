"""Streamlit entry point (`make run` -> `streamlit run app/main.py`): navigation over the pages in views/.

Each page turns widgets into one library call and renders the returned object; the scenario lives in
st.session_state and in the URL (query parameter `s`), see app/state.py.
"""

from __future__ import annotations

import streamlit as st

from app.page_list import PAGES

st.set_page_config(page_title="costmodel: API vs self-hosted LLM", layout="wide")

page = st.navigation(
    [st.Page(p.file, title=p.title, url_path=p.url_path, default=index == 0) for index, p in enumerate(PAGES)]
)
page.run()
