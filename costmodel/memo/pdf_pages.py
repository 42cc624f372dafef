"""The memo PDF's page furniture: the page margin, the running header (title and date, from page 2), the
footer with the scenario name (CJK runs in the registered CJK font) and 'Page x of y', drawn by a canvas
class once the page count is known, which also stamps the memo's date as the PDF's creation date.
Imported only when a memo is built (needs the `memo` extra), by costmodel/memo/builder.py.
"""

from __future__ import annotations

from typing import Any

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfgen import canvas as rl_canvas

from costmodel.memo.cjk import needs_cjk
from costmodel.memo.content import MemoContent
from costmodel.memo.pdf_text import clean

MARGIN = 18 * mm
HEADER_CHARS = 70


def _runs(text: str) -> list[tuple[bool, str]]:
    """`text` cut into runs of (needs a CJK font, characters)."""
    runs: list[tuple[bool, str]] = []
    for ch in text:
        cjk = needs_cjk(ch)
        if runs and runs[-1][0] == cjk:
            runs[-1] = (cjk, runs[-1][1] + ch)
        else:
            runs.append((cjk, ch))
    return runs


def _draw_mixed(canvas: Any, x: float, y: float, text: str, *, cjk: str | None, size: float) -> None:
    """drawString, with CJK runs in the registered CJK font (DejaVu has no CJK glyphs: boxes otherwise)."""
    for is_cjk, run in _runs(text) if cjk else [(False, text)]:
        font = cjk if is_cjk and cjk else "DejaVuSans"
        canvas.setFont(font, size)
        canvas.drawString(x, y, run)
        x += pdfmetrics.stringWidth(run, font, size)


def _canvas_class(content: MemoContent, pages: list[int], cjk: str | None = None) -> type:
    """A canvas that writes 'Page x of y' and the running header once the page count is known."""
    header = clean(f"{content.title} \u00b7 {content.date.isoformat()}", limit=HEADER_CHARS * 2)
    footer_name = clean(content.scenario_name, limit=HEADER_CHARS)
    stamp = content.date.strftime("D:%Y%m%d000000+00'00'")

    class MemoCanvas(rl_canvas.Canvas):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._pages: list[dict[str, Any]] = []
            self.setDateFormatter(lambda *_: stamp)  # CreationDate/ModDate = the memo's date

        def showPage(self) -> None:
            self._pages.append(dict(self.__dict__))
            self._startPage()

        def save(self) -> None:
            total = len(self._pages)
            for state in self._pages:
                self.__dict__.update(state)
                self._decorate(total)
                super().showPage()
            pages.append(total)
            super().save()

        def _decorate(self, total: int) -> None:
            number = self.getPageNumber()
            self.saveState()
            self.setFont("DejaVuSans", 7.5)
            self.setFillColor(colors.HexColor("#666666"))
            if number > 1:
                self.drawString(MARGIN, A4[1] - MARGIN + 6 * mm, header)
            _draw_mixed(self, MARGIN, MARGIN - 9 * mm, footer_name, cjk=cjk, size=7.5)
            self.setFont("DejaVuSans", 7.5)
            self.drawRightString(A4[0] - MARGIN, MARGIN - 9 * mm, f"Page {number} of {total}")
            self.restoreState()

    return MemoCanvas
