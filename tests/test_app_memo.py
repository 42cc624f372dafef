"""AppTest: the Memo page builds the PDF of the current scenario, offers it for download and previews
its pages (or its text without poppler). The bytes come from app.views.memo.build_memo_file."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
pytest.importorskip("reportlab", reason="the memo needs the memo extra")
from streamlit.testing.v1 import AppTest

from app.scenario_io import load_example
from app.views import memo as memo_preview
from costmodel.decision.rank import decide

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")
DATE = dt.date(2026, 12, 1)


@pytest.fixture(scope="module")
def memo_file() -> memo_preview.MemoFile:
    return memo_preview.build_memo_file(load_example("rag-service.yaml"), calibration=None, today=DATE)


def test_memo_bytes_are_the_scenarios_pdf(memo_file: memo_preview.MemoFile) -> None:
    pypdf = pytest.importorskip("pypdf")
    assert memo_file.pdf.startswith(b"%PDF-")
    reader = pypdf.PdfReader(io.BytesIO(memo_file.pdf))
    assert len(reader.pages) == memo_file.pages >= 3
    text = " ".join(page.extract_text() for page in reader.pages)
    assert "rag-service" in text
    assert memo_file.recommendation == decide(load_example("rag-service.yaml")).recommendation
    assert memo_file.recommendation in text


def test_page_images(memo_file: memo_preview.MemoFile) -> None:
    if not memo_preview.can_render_pages():
        pytest.skip("needs poppler's pdftoppm (apt-get install poppler-utils)")
    images = memo_preview.page_images(memo_file.pdf, dpi=30)
    assert len(images) == memo_file.pages
    assert all(image.startswith(b"\x89PNG") for image in images)


def _memo_page() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=120).run()
    at.switch_page("views/memo.py").run()
    assert not at.get("download_button")  # built on request, not on opening the page (first render < 2 s)
    return at.button(key="memo_build").click().run()


def test_page_offers_the_download_and_previews() -> None:
    at = _memo_page()
    assert not at.exception and not at.error
    recommendation = decide(load_example("chat-assistant.yaml")).recommendation
    assert any(f"**{recommendation}**" in c.value for c in at.caption)
    button = at.get("download_button")[0]
    assert "PDF" in button.proto.label and "pages" in button.proto.label
    if memo_preview.can_render_pages():
        assert len(at.image) == int(button.proto.label.split(", ")[1].split()[0])  # one image per page


def test_text_preview_without_poppler(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo_preview, "can_render_pages", lambda: False)
    at = _memo_page()
    assert not at.exception
    assert any("pdftoppm" in i.value for i in at.info)
    assert any("Design review" in s.value or "Decision" in s.value for s in at.subheader)
    # Dollar amounts are escaped, not rendered as LaTeX.
    assert any("\\$" in m.value for m in at.markdown)


def test_a_cancelled_memo_build_stops_at_its_next_chart(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build reports before each chart: a cancel while the first chart is drawn stops it before the second,
    and the PDF is never laid out (before, the charts were one call and the build stopped only after all)."""
    from types import SimpleNamespace

    import costmodel.memo.builder as builder
    import costmodel.memo.charts as charts
    import costmodel.memo.content as content
    from app.background import BackgroundWork, Cancelled
    from costmodel.memo.blocks import Figure

    figures = tuple(Figure(key=key, caption=key) for key in ("kv", "months", "traffic"))
    fake = SimpleNamespace(blocks=figures, charts=object(), decision=SimpleNamespace(recommendation="x"))
    monkeypatch.setattr(content, "memo_content", lambda *args, **kwargs: fake)
    drawn: list[str] = []
    job: list[BackgroundWork[memo_preview.MemoFile]] = []

    def one_chart(data: object, keys: set[str]) -> dict[str, object]:
        drawn.extend(sorted(keys))
        job[0].cancel()  # the user clicks Cancel while this chart is drawn
        return dict.fromkeys(keys)

    def no_pdf(*args: object) -> tuple[bytes, int]:
        raise AssertionError("the PDF was laid out after the cancel")

    monkeypatch.setattr(charts, "render_charts", one_chart)
    monkeypatch.setattr(builder, "render_pdf", no_pdf)
    work = memo_preview.memo_work(load_example("rag-service.yaml"), None, calibration=None,  # type: ignore[arg-type]
                                  today=DATE)
    job.append(BackgroundWork(work))
    job[0].start()
    assert job[0].join(timeout_seconds=60)
    assert isinstance(job[0].error, Cancelled)
    assert drawn == ["kv"]
