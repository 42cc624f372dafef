"""Lay out `MemoContent` as a PDF with reportlab: embedded DejaVu fonts, page x of y, tables that repeat
their header and keep small ones whole, figures with their captions, deterministic bytes.

The page margin, running header and footer ('Page x of y') are costmodel/memo/pdf_pages.py; its MARGIN
and HEADER_CHARS are re-exported here.
Determinism: reportlab's invariant mode (fixed document id and no clock), the creation date set from the
memo's date, PNG charts without timestamps. The same scenario, data and date give the same bytes.
Imported only when a memo is built (needs the `memo` extra).
"""

from __future__ import annotations

import io
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from PIL import Image as PILImage
from reportlab import rl_config
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase import pdfmetrics
from reportlab.platypus import (
    Flowable,
    HRFlowable,
    KeepTogether,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    TableStyle,
    XPreformatted,
)
from reportlab.platypus import PageBreak as RlPageBreak
from reportlab.platypus import Table as RlTable

from costmodel.memo.blocks import Block, Bullets, Code, Figure, Heading, PageBreak, Para, Table
from costmodel.memo.cjk import register_cjk
from costmodel.memo.content import MemoContent
from costmodel.memo.pdf_pages import HEADER_CHARS, MARGIN, _canvas_class
from costmodel.memo.pdf_text import clean, markup, register_fonts

__all__ = [
    "ACCENT", "CELL_CHARS", "CELL_PADDING", "FRAME_PADDING", "HEADER_CHARS", "INK", "MARGIN", "TEXT_WIDTH",
    "content_text", "fit_widths", "render_pdf",
]

FRAME_PADDING = 6  # reportlab's Frame pads its content 6 pt on each side (SimpleDocTemplate's default frame)
TEXT_WIDTH = A4[0] - 2 * MARGIN - 2 * FRAME_PADDING  # what a flowable may use: tables and figures fit inside it
CELL_PADDING = 3  # left and right padding of a table cell
CELL_CHARS = 90  # longer user text in a table cell is cut (the full text is in the notes below the table)
INK = colors.HexColor("#1b2a3a")
ACCENT = colors.HexColor("#1f5fa8")


def _styles() -> dict[str, ParagraphStyle]:
    base = ParagraphStyle("body", fontName="DejaVuSans", bulletFontName="DejaVuSans", fontSize=9, leading=12.2,
                          textColor=INK, spaceAfter=5, splitLongWords=1)
    return {
        "body": base,
        "small": ParagraphStyle("small", parent=base, fontSize=7.8, leading=10.2, spaceAfter=3),
        "callout": ParagraphStyle("callout", parent=base, fontSize=9.5, leading=13.2, backColor=colors.HexColor("#eef3f9"),
                                  borderColor=colors.HexColor("#c5d5ea"), borderWidth=0.6, borderPadding=6,
                                  spaceBefore=4, spaceAfter=10),
        "title": ParagraphStyle("title", parent=base, fontName="DejaVuSans-Bold", fontSize=17, leading=21, spaceAfter=6),
        "subtitle": ParagraphStyle("subtitle", parent=base, fontSize=11.5, leading=15, spaceAfter=2),
        "meta": ParagraphStyle("meta", parent=base, fontSize=8, leading=10.5, textColor=colors.HexColor("#555555")),
        "h1": ParagraphStyle("h1", parent=base, fontName="DejaVuSans-Bold", fontSize=12, leading=15, spaceBefore=10,
                             spaceAfter=5, textColor=ACCENT),
        "h2": ParagraphStyle("h2", parent=base, fontName="DejaVuSans-Bold", fontSize=10, leading=13, spaceBefore=6,
                             spaceAfter=3),
        "caption": ParagraphStyle("caption", parent=base, fontSize=7.6, leading=9.8, textColor=colors.HexColor("#444444"),
                                  spaceBefore=2, spaceAfter=9),
        "mono": ParagraphStyle("mono", parent=base, fontName="DejaVuSansMono", fontSize=7.2, leading=9.4),
    }


def _longest_word_points(text: str, *, font: str, font_size: float) -> float:
    words = clean(text, limit=CELL_CHARS).split()
    return max((pdfmetrics.stringWidth(w, font, font_size) for w in words), default=0.0)


def fit_widths(block: Table, *, font_size: float) -> list[float]:
    """Column widths in points summing to TEXT_WIDTH: the block's fractions, widened where a column's
    longest word (a number, an id) would otherwise be split, the extra taken from columns with room."""
    wanted = [w * TEXT_WIDTH for w in block.widths]
    needed = []
    for column in range(len(block.header)):
        head = _longest_word_points(block.header[column], font="DejaVuSans-Bold", font_size=font_size)
        body = max((_longest_word_points(row[column], font="DejaVuSans", font_size=font_size) for row in block.rows),
                   default=0.0)
        needed.append(min(max(head, body) + 2 * CELL_PADDING + 0.5, TEXT_WIDTH / 2))
    widths = [max(w, n) for w, n in zip(wanted, needed, strict=True)]
    excess = sum(widths) - TEXT_WIDTH
    if excess > 0:
        room = [max(w - n, 0.0) for w, n in zip(widths, needed, strict=True)]
        total_room = sum(room)
        if total_room > 0:
            share = min(1.0, excess / total_room)
            widths = [w - r * share for w, r in zip(widths, room, strict=True)]
    scale = TEXT_WIDTH / sum(widths)  # still too wide (no room left): shrink all alike, words may then split
    return [w * scale for w in widths]


def _table(block: Table, styles: dict[str, ParagraphStyle], cjk: str | None) -> list[Flowable]:
    cell = ParagraphStyle("cell", parent=styles["body"], fontSize=block.font_size, leading=block.font_size * 1.28,
                          spaceAfter=0)
    right = ParagraphStyle("cell-r", parent=cell, alignment=2)
    head = ParagraphStyle("cell-h", parent=cell, fontName="DejaVuSans-Bold", textColor=colors.white)

    def para(text: str, column: int, style: ParagraphStyle | None = None) -> Paragraph:
        chosen = style or (right if block.align[column] == "r" else cell)
        return Paragraph(markup(text, limit=CELL_CHARS, cjk=cjk), chosen)

    data = [[para(h, i, head) for i, h in enumerate(block.header)]]
    data += [[para(value, i) for i, value in enumerate(row)] for row in block.rows]
    commands: list[tuple[Any, ...]] = [
        ("FONTNAME", (0, 0), (-1, -1), "DejaVuSans"),  # the table's own default is Helvetica (not embedded)
        ("BACKGROUND", (0, 0), (-1, 0), ACCENT),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("LINEBELOW", (0, 0), (-1, -1), 0.3, colors.HexColor("#c9d3de")),
        ("TOPPADDING", (0, 0), (-1, -1), 2.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 2.5),
        ("LEFTPADDING", (0, 0), (-1, -1), 3),
        ("RIGHTPADDING", (0, 0), (-1, -1), 3),
    ]
    for index in range(1, len(data)):
        if index % 2 == 0:
            commands.append(("BACKGROUND", (0, index), (-1, index), colors.HexColor("#f5f7fa")))
    if block.highlight_row is not None:
        row = block.highlight_row + 1
        commands.append(("BACKGROUND", (0, row), (-1, row), colors.HexColor("#fff3c4")))
    table = RlTable(data, colWidths=fit_widths(block, font_size=block.font_size), repeatRows=1, splitByRow=1,
                    style=TableStyle(commands), hAlign="LEFT")
    parts: list[Flowable] = [table]
    parts.append(Paragraph(markup(block.caption, cjk=cjk), styles["caption"]) if block.caption else Spacer(1, 8))
    # Short tables stay on one page with their caption; long ones split between rows, header repeated.
    return [_Keep(parts)] if len(block.rows) <= 15 else parts


class _Keep(list):  # type: ignore[type-arg]
    """Flowables to keep on one page (KeepTogether; nested KeepTogethers force a page break, so the story
    builder merges a heading into the group that follows it instead of nesting)."""


class _Raster(Flowable):
    """A chart's pixels drawn at a fixed size (reportlab's Image flowable wants a file, not pixels)."""

    def __init__(self, image: PILImage.Image, *, width: float, height: float) -> None:
        super().__init__()
        self.image, self.width, self.height = image, width, height

    def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        self.canv.drawImage(ImageReader(self.image), 0, 0, width=self.width, height=self.height)


def _figure(block: Figure, image: PILImage.Image, styles: dict[str, ParagraphStyle], cjk: str | None) -> _Keep:
    raster = _Raster(image, width=TEXT_WIDTH, height=TEXT_WIDTH * image.height / image.width)
    return _Keep([raster, Paragraph(markup(block.caption, cjk=cjk), styles["caption"])])


def _flowables(block: Block, charts: dict[str, PILImage.Image], styles: dict[str, ParagraphStyle],
               cjk: str | None = None) -> list[Flowable]:
    if isinstance(block, Heading):
        return [Paragraph(markup(block.text, cjk=cjk), styles["h1" if block.level == 1 else "h2"])]
    if isinstance(block, Para):
        lead = f"<b>{markup(block.lead, cjk=cjk)}</b> " if block.lead else ""
        return [Paragraph(lead + markup(block.text, cjk=cjk), styles[block.style])]
    if isinstance(block, Bullets):
        style = styles[block.style]
        return [Paragraph(markup(item, cjk=cjk), style, bulletText="\u2022") for item in block.items] + [Spacer(1, 3)]
    if isinstance(block, Table):
        return _table(block, styles, cjk)
    if isinstance(block, Figure):
        return [_figure(block, charts[block.key], styles, cjk)]
    if isinstance(block, Code):
        return [XPreformatted("\n".join(markup(line, cjk=cjk) for line in block.lines), styles["mono"]), Spacer(1, 6)]
    assert isinstance(block, PageBreak)
    return [RlPageBreak()]


def _costmodel_version() -> str:
    try:
        return version("costmodel")
    except PackageNotFoundError:
        return "(source tree)"


def _title_block(content: MemoContent, styles: dict[str, ParagraphStyle], cjk: str | None) -> list[Flowable]:
    parts: list[Flowable] = [
        Paragraph(markup(content.title, cjk=cjk), styles["title"]),
        Paragraph("<b>Scenario:</b> " + markup(content.scenario_name, cjk=cjk), styles["subtitle"]),
        Paragraph(f"<b>Date:</b> {content.date.isoformat()} \u00b7 prepared with costmodel {_costmodel_version()} "
                  "from the scenario file; every figure is reproduced by <i>costmodel compare"
                  + (f" --search {content.searched_top_k}" if content.searched_top_k else "")
                  + "</i> and <i>costmodel memo</i>.", styles["meta"]),
    ]
    if content.description:
        parts.append(Spacer(1, 4))
        parts.append(Paragraph(markup(content.description, cjk=cjk), styles["body"]))
    parts.append(HRFlowable(width="100%", thickness=0.8, color=ACCENT, spaceBefore=4, spaceAfter=4))
    return parts


def content_text(content: MemoContent) -> str:
    """Every piece of text the memo prints (to choose the fonts it needs)."""
    parts = [content.title, content.scenario_name, content.description or ""]
    for block in content.blocks:
        if isinstance(block, (Heading, Para)):
            parts += [block.text, getattr(block, "lead", "")]
        elif isinstance(block, Bullets):
            parts += list(block.items)
        elif isinstance(block, Table):
            parts += [*block.header, block.caption, *(cell for row in block.rows for cell in row)]
        elif isinstance(block, Figure):
            parts.append(block.caption)
        elif isinstance(block, Code):
            parts += list(block.lines)
    return "\n".join(parts)


def render_pdf(content: MemoContent, charts: dict[str, PILImage.Image]) -> tuple[bytes, int]:
    """(PDF bytes, page count) of the memo with the given chart PNGs."""
    register_fonts()
    styles = _styles()
    buffer = io.BytesIO()
    document = SimpleDocTemplate(
        buffer, pagesize=A4, leftMargin=MARGIN, rightMargin=MARGIN, topMargin=MARGIN, bottomMargin=MARGIN,
        title=clean(f"{content.title}: {content.scenario_name}", limit=200), author="costmodel",
        subject=clean(content.scenario_name, limit=200), creator=f"costmodel memo {_costmodel_version()}",
        keywords="LLM serving, cost model, design review", invariant=1, initialFontName="DejaVuSans",
    )
    cjk = register_cjk(content_text(content))  # None unless some text needs a CJK font
    story = _title_block(content, styles, cjk)
    pending: list[Flowable] = []  # a heading waits for the first flowable (or kept group) after it
    for block in content.blocks:
        made = _flowables(block, charts, styles, cjk)
        if isinstance(block, Heading):
            pending += made
            continue
        first = made[0] if made else Spacer(1, 1)
        head = pending + (list(first) if isinstance(first, _Keep) else [first])
        pending = []
        rest = [KeepTogether(list(f)) if isinstance(f, _Keep) else f for f in made[1:]]
        story += [KeepTogether(head) if len(head) > 1 else head[0], *rest]
    story += pending
    pages: list[int] = []
    saved = rl_config.useA85
    rl_config.useA85 = 0  # binary streams: ASCII85 in pure Python costs ~0.5 s and 25% more bytes
    try:
        document.build(story, canvasmaker=_canvas_class(content, pages, cjk))
    finally:
        rl_config.useA85 = saved
    return buffer.getvalue(), pages[-1]

