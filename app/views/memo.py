"""Memo page: preview and download the PDF design-review memo of the current scenario.
Built on request (decision, content, each chart, PDF) with progress and a Cancel button; kept in
the session for its scenario, calibration and date.

Owns: the memo's bytes (build_memo_file: the PDF, its page count and blocks), the PNG previews of its
pages rendered by poppler's `pdftoppm` (the page falls back to the memo's text when it is not installed),
and the cached calls of both.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from app import state
from app.background import BackgroundWork, ProgressHook
from app.cache_capacity import capacity_cache
from app.compare_cache import cached_compare_view
from app.scenario_io import file_stem
from app.widgets import md, show_error
from costmodel.decision.capacity import CapacityCache
from costmodel.decision.results import Decision
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.memo import build_memo
from costmodel.memo.blocks import Block, Bullets, Code, Heading, Para, Table
from costmodel.scenario import Scenario

PREVIEW_DPI = 60


# --- the memo's bytes ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemoFile:
    """A built memo: the PDF bytes the download button offers, its page count and blocks (text preview)."""

    pdf: bytes
    pages: int
    recommendation: str | None  # None: no option is feasible, and the memo says so
    blocks: tuple[Block, ...]


def build_memo_file(scenario: Scenario, *, calibration: Calibration | None, today: dt.date,
                    capacity_cache: CapacityCache | None = None) -> MemoFile:
    """One library call: build_memo for the scenario as of `today` (same date, same bytes)."""
    memo = build_memo(scenario, calibration=calibration, today=today, capacity_cache=capacity_cache)
    return MemoFile(pdf=memo.pdf, pages=memo.pages, recommendation=memo.content.decision.recommendation,
                    blocks=memo.content.blocks)


def can_render_pages() -> bool:
    """Whether poppler's pdftoppm is installed (Debian: apt-get install poppler-utils)."""
    return shutil.which("pdftoppm") is not None


def page_images(pdf: bytes, *, dpi: int = PREVIEW_DPI) -> list[bytes]:
    """PNG bytes of every page, in order."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "memo.pdf"
        source.write_bytes(pdf)
        try:
            subprocess.run(["pdftoppm", "-png", "-r", str(dpi), str(source), str(Path(folder) / "page")],
                           check=True, capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            raise CostmodelError(f"could not render the memo preview with pdftoppm ({exc})") from None
        return [path.read_bytes() for path in sorted(Path(folder).glob("page-*.png"), key=_page_number)]


def _page_number(path: Path) -> int:
    return int(path.stem.rsplit("-", 1)[1])


# --- cached calls -------------------------------------------------------------------------------------

@st.cache_data(show_spinner="Rendering the preview...", max_entries=8)
def cached_page_images(pdf: bytes) -> list[bytes]:
    """PNG previews of the memo's pages."""
    return page_images(pdf)


# --- page ---------------------------------------------------------------------------------------------

def _image_preview(memo: MemoFile) -> None:
    try:
        images = cached_page_images(memo.pdf)
    except CostmodelError as exc:
        show_error("Preview", exc)
        images = []
    per_row = 3
    for start in range(0, len(images), per_row):
        row = st.columns(per_row)
        for offset, image in enumerate(images[start:start + per_row]):
            row[offset].image(image, caption=f"page {start + offset + 1}", width="stretch")


def _text_preview(memo: MemoFile) -> None:
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


MEMO_KEY = "memo_file"  # (cache key, MemoFile) of the memo built in this session


def memo_work(scenario: Scenario, decision: Decision, *, calibration: Calibration | None,
              today: dt.date) -> Callable[[ProgressHook], MemoFile]:
    """The memo's build after its decision, for a worker thread: `progress` is called before the content, before
    each chart and before the PDF, so a cancelled build stops at the next of them (it raises Cancelled there)."""
    from costmodel.memo.blocks import Figure
    from costmodel.memo.builder import render_pdf
    from costmodel.memo.charts import render_charts
    from costmodel.memo.content import memo_content

    def work(progress: ProgressHook) -> MemoFile:
        progress(0.2, "Sensitivity, volume and latency curves...")
        content = memo_content(scenario, decision, calibration=calibration, today=today,
                               capacity_cache=capacity_cache())
        keys = sorted({block.key for block in content.blocks if isinstance(block, Figure)})
        charts: dict[str, Any] = {}
        for index, key in enumerate(keys if content.charts is not None else []):
            progress(0.55 + 0.25 * index / len(keys), f"Drawing chart {index + 1} of {len(keys)} ({key})...")
            charts |= render_charts(content.charts, {key})
        progress(0.8, "Laying out the PDF...")
        pdf, pages = render_pdf(content, charts)
        return MemoFile(pdf=pdf, pages=pages, recommendation=content.decision.recommendation, blocks=content.blocks)

    return work


def _build_in_steps(scenario: Scenario, calibration_json: str | None, today: dt.date) -> MemoFile:
    """The memo with a progress bar. The decision is the one Compare and Overview show (their shared cache; the
    memo uses the sheet's prices); the rest runs in a worker thread (app.background) while this thread draws the
    bar, so a click on Cancel (any widget) ends the page's run at once and the build at its next chart or step."""
    bar = st.progress(0.0, text="Evaluating the options...")
    st.button("Cancel", key="memo_cancel", help="Stops the build (at its next chart or step).")
    calibration = Calibration.model_validate_json(calibration_json) if calibration_json else None
    decision = cached_compare_view(scenario.model_dump_json(), calibration_json, None).decision
    work = BackgroundWork(memo_work(scenario, decision, calibration=calibration, today=today),
                          name="costmodel-memo").start()
    memo = work.wait(lambda fraction, text: bar.progress(fraction, text=text or "Building the memo..."))
    bar.progress(1.0, text=f"Built: {memo.pages} pages.")
    return memo


def _memo(scenario: Scenario, today: dt.date) -> MemoFile | None:
    """The memo built for this scenario, calibration and date, or None until the user asks for it."""
    key = (scenario.model_dump_json(), state.calibration_json(), today.isoformat())
    built = st.session_state.get(MEMO_KEY)
    if built is not None and built[0] == key:
        return built[1]  # type: ignore[no-any-return]
    if not st.button("Build the memo", key="memo_build", type="primary",
                     help="Evaluates the scenario, its sensitivity and charts, then lays out the PDF (seconds)."):
        st.caption("The memo is built on request: it re-runs the sensitivity and draws every chart.")
        return None
    memo = _build_in_steps(scenario, key[1], today)
    st.session_state[MEMO_KEY] = (key, memo)
    return memo


def render() -> None:
    """The Memo page."""
    st.title("Memo")
    st.caption("The design-review memo: the decision and the two numbers that drive it, the options table, cost, "
               "traffic, interactivity and KV charts, sensitivity and the volume where the decision flips, risks, "
               "drawbacks, rollback and monitoring, sources with their dates, and the formulas. Same scenario and "
               "date, same PDF.")
    scenario = state.current()
    cols = st.columns([1, 3])
    today = scenario.evaluation_date()  # the one as-of date: the scenario's, else today, as on every page
    cols[0].caption(f"Dated **{today.isoformat()}**: " + ("the scenario's as-of date" if scenario.as_of else
                    "today (the scenario sets no as-of date)") + "; retirements and price ages count to it. "
                    "Change it on the Scenario page.")
    if state.api_overrides():
        cols[1].warning("The memo prices API options from the price sheet; this session's API price overrides "
                        "(Prices page) are not in it.")

    try:
        memo = _memo(scenario, today)
    except CostmodelError as exc:
        show_error("Memo", exc)
        st.stop()
    if memo is None:
        return

    st.download_button(f"Download the memo (PDF, {memo.pages} pages)", memo.pdf,
                       file_name=f"memo-{file_stem(scenario)}.pdf", mime="application/pdf", key="memo_download",
                       type="primary")
    st.caption(f"Recommendation in the memo: **{md(memo.recommendation)}**." if memo.recommendation else
               "The memo recommends no option: none is feasible (its page 1 says why).")

    st.subheader("Preview")
    if can_render_pages():
        _image_preview(memo)
    else:
        _text_preview(memo)


if __name__ == "__main__":  # st.navigation runs this file as a script: render through the imported
    from app.views import memo  # module, so its caches (and the tests' patches) are the shared ones

    memo.render()
