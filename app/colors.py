"""One color per option name, the same on every chart of every page.

A name keeps its color when options are added, removed or re-ranked: the slot comes from a hash of
the name (crc32, stable across processes unlike `hash()`), probing to the next free slot on a clash.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

# Plotly's "D3" qualitative palette (10 colors) followed by "Dark24" picks, for up to 16 options.
PALETTE: tuple[str, ...] = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#2e91e5", "#e15f99", "#1ca71c", "#fb0d0d", "#da16ff", "#222a2a",
)
# Phases on the roofline charts.
PHASE_COLORS: dict[str, str] = {"prefill": "#d62728", "decode": "#1f77b4"}
SLO_COLOR = "#d62728"
LIMIT_COLOR = "#444444"


def option_colors(names: Iterable[str]) -> dict[str, str]:
    """A color for each distinct name; a name keeps its color unless another name clashes with its slot."""
    colors: dict[str, str] = {}
    used: set[int] = set()
    for name in sorted(set(names)):
        slot = zlib.crc32(name.encode("utf-8")) % len(PALETTE)
        for _ in range(len(PALETTE)):
            if slot not in used:
                break
            slot = (slot + 1) % len(PALETTE)
        used.add(slot)
        if len(used) >= len(PALETTE):
            used.clear()  # more names than colors: start reusing
        colors[name] = PALETTE[slot]
    return colors
