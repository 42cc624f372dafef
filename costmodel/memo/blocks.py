"""The memo as plain data: headings, paragraphs, bullet lists, tables, figures, code. All text is plain
(never markup): the PDF builder escapes it, so hostile scenario or option names render as written.
The number formats every section uses live in `costmodel.units` (re-exported here by their short names).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from costmodel.units import fmt_count as tokens
from costmodel.units import fmt_latency as latency
from costmodel.units import fmt_money as money
from costmodel.units import fmt_pct as pct
from costmodel.units import fmt_per_mtok as per_mtok
from costmodel.units import fmt_times as times

NAME_CHARS = 60  # option names longer than this are cut in running text (tables cut at their cell limit)


def short(name: str) -> str:
    """An option name for running text: cut at NAME_CHARS with an ellipsis."""
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "\u2026"


def cut_names(text: str, names: Iterable[str]) -> str:
    """Text written elsewhere (the decision's reasons, warnings, notes) with each long option name cut."""
    for name in sorted(names, key=len, reverse=True):
        if len(name) > NAME_CHARS:
            text = text.replace(name, short(name))
    return text


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
    key: str  # which chart: "volume" | "traffic" | "months" | "interactivity" | "kv" | "tornado"
    caption: str
    height_fraction: float = 0.42  # of the text width


@dataclass(frozen=True)
class Code:
    lines: tuple[str, ...]


@dataclass(frozen=True)
class PageBreak:
    pass


Block = Heading | Para | Bullets | Table | Figure | Code | PageBreak

__all__ = ["Block", "Bullets", "Code", "cut_names", "Figure", "Heading", "PageBreak", "Para", "Table", "latency", "money", "pct",
           "per_mtok", "short", "times", "tokens"]
