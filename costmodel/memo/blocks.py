"""The memo as plain data: headings, paragraphs, bullet lists, tables, figures, code. All text is plain
(never markup): the PDF builder escapes it, so hostile scenario or option names render as written.
Also the number formats every section uses (the same as `costmodel compare` prints).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 1  # 1: section, 2: subsection


@dataclass(frozen=True)
class Para:
    text: str
    lead: str = ""  # bold words that open the paragraph
    style: str = "body"  # "body" | "small" | "callout"


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]
    style: str = "body"


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    widths: tuple[float, ...]  # fractions of the text width, summing to 1
    align: tuple[str, ...]  # "l" | "r" per column
    highlight_row: int | None = None  # index into rows (the recommendation)
    caption: str = ""
    font_size: float = 8.0


@dataclass(frozen=True)
class Figure:
    key: str  # which chart: "volume" | "interactivity" | "traffic" | "kv" | "tornado"
    caption: str
    height_fraction: float = 0.42  # of the text width


@dataclass(frozen=True)
class Code:
    lines: tuple[str, ...]


@dataclass(frozen=True)
class PageBreak:
    pass


Block = Heading | Para | Bullets | Table | Figure | Code | PageBreak


def money(usd: float | None) -> str:
    """Whole dollars as `costmodel compare` prints them: '$2,952' ('n/a' when not finite)."""
    if usd is None or not math.isfinite(usd):
        return "n/a"
    return f"${usd:,.0f}"


def per_mtok(usd: float | None) -> str:
    """USD per million tokens, three decimals as `costmodel compare` prints: '$0.262'."""
    return "n/a" if usd is None or not math.isfinite(usd) else f"${usd:,.3f}"


def pct(value: float | None) -> str:
    """'37%' ('-' when missing)."""
    return "-" if value is None or not math.isfinite(value) else f"{value:.0%}"


def tokens(count: float | None) -> str:
    """Token or request counts: '11.26B', '845.3M', '12.4k'."""
    if count is None or not math.isfinite(count):
        return "n/a"
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(count) >= scale:
            return f"{count / scale:,.2f}{unit}"
    return f"{count:,.0f}"


def latency(seconds: float | None) -> str:
    """'46 ms' below a second, '1.20 s' above ('?' when unknown)."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    return f"{seconds:.2f} s" if seconds >= 1.0 else f"{seconds * 1e3:.0f} ms"


def times(ratio: float) -> str:
    """A multiple: '2.1x', '0.45x', '12x'."""
    if ratio >= 10:
        return f"{ratio:,.0f}x"
    return f"{ratio:.1f}x" if ratio >= 1 else f"{ratio:.2f}x"
