"""Memo page: preview and download the PDF design-review memo of the current scenario.
One call: costmodel.memo.build_memo (through app.memo_preview), cached by scenario, calibration and date."""

from __future__ import annotations

import datetime as dt

import streamlit as st

from app import cache_memo, state
from app.errors import show_error
from app.memo_preview import can_render_pages
from app.scenario_io import file_stem
from app.text import md
from costmodel.errors import CostmodelError
from costmodel.memo.blocks import Bullets, Code, Heading, Para, Table

st.title("Memo")
st.caption("The design-review memo: the decision and the two numbers that drive it, the options table, cost, "
           "traffic, interactivity and KV charts, sensitivity and the volume where the decision flips, risks, "
           "sources with their dates, and the formulas. Same scenario and date, same PDF.")
scenario = state.current()
cols = st.columns([1, 3])
today = cols[0].date_input("Memo date (price ages are counted to it)", value=dt.date.today(), key="memo_date")
if state.api_overrides():
    cols[1].warning("The memo prices API options from the price sheet; this session's API price overrides "
                    "(Prices page) are not in it.")

try:
    memo = cache_memo.cached_memo(scenario.model_dump_json(), state.calibration_json(), today.isoformat())
except CostmodelError as exc:
    show_error("Memo", exc)
    st.stop()

st.download_button(f"Download the memo (PDF, {memo.pages} pages)", memo.pdf, file_name=f"memo-{file_stem(scenario)}.pdf",
                   mime="application/pdf", key="memo_download", type="primary")
st.caption(f"Recommendation in the memo: **{md(memo.recommendation)}**.")

st.subheader("Preview")
if can_render_pages():
    try:
        images = cache_memo.cached_page_images(memo.pdf)
    except CostmodelError as exc:
        show_error("Preview", exc)
        images = []
    per_row = 3
    for start in range(0, len(images), per_row):
        row = st.columns(per_row)
        for offset, image in enumerate(images[start:start + per_row]):
            row[offset].image(image, caption=f"page {start + offset + 1}", width="stretch")
else:
    st.info("Page images need poppler's pdftoppm (apt-get install poppler-utils); here is the memo's text.")
    for block in memo.blocks:
        if isinstance(block, Heading):
            (st.subheader if block.level == 1 else st.markdown)(md(block.text) if block.level == 1 else f"**{md(block.text)}**")
        elif isinstance(block, Para):
            st.markdown(md(f"**{block.lead}** {block.text}" if block.lead else block.text))
        elif isinstance(block, Bullets):
            st.markdown("\n".join(f"- {md(item)}" for item in block.items))
        elif isinstance(block, Table):
            st.table([dict(zip(block.header, row, strict=False)) for row in block.rows])
        elif isinstance(block, Code):
            st.code("\n".join(block.lines))
