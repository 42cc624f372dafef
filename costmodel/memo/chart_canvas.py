"""The memo charts' canvas: figure size, DPI, rc style, palette, legend labels, axis formatters, the Agg
figure and its raster, and the CJK font fallback that every chart (and `configurations.search_front_chart`)
draws with.

The Agg pixel buffer goes straight to the PDF (reportlab compresses it once); encoding a PNG first and
decoding it again in reportlab cost ~0.5 s per memo for nothing.
Deterministic: no timestamps, fixed colors, and user text never parsed as
mathtext (an option named "$x$" stays "$x$"). Figures are made with `matplotlib.figure.Figure` on an Agg
canvas, not pyplot: no global figure registry (safe in the app's threads), no GUI backend, faster import.
Imported only when a memo is built, through `costmodel.memo.charts` (needs the `memo` extra).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from costmodel.memo.cjk import cjk_font_path, needs_cjk
from costmodel.memo.content import ChartData

DPI = 200
WIDTH_INCHES = 6.8  # the PDF's text width (A4 less 2 x 18 mm)
PALETTE = ("#1f5fa8", "#d9822b", "#2e8540", "#b0303a", "#6b4fa0", "#3d9ea8", "#8c6d31", "#7a7a7a", "#c25e9a", "#4c4c4c")
RC: dict[str, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 9,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "text.parse_math": False,  # option names are user text, not LaTeX
    "text.usetex": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "path.simplify": True,
}
LABEL_CHARS = 42
# Extra rc settings of the charts being rendered (a CJK fallback font), per thread of the app's server.
_FONT: ContextVar[tuple[str, ...]] = ContextVar("memo_chart_font", default=())  # font families; () = RC's


def label(text: str) -> str:
    """User text for a legend: printable characters only, long names cut with an ellipsis."""
    clean = "".join(ch if ch.isprintable() else " " for ch in text)
    return clean if len(clean) <= LABEL_CHARS else clean[: LABEL_CHARS - 1] + "\u2026"


@contextmanager
def _figure(height_fraction: float, ncols: int = 1, *, left_inches: float = 0.62,
            bottom_inches: float = 0.42) -> Iterator[tuple[Any, Any]]:
    height = WIDTH_INCHES * height_fraction
    families = _FONT.get()
    rc = RC | ({"font.family": list(families)} if families else {})
    with matplotlib.rc_context(rc), warnings.catch_warnings():  # type: ignore[arg-type]
        warnings.simplefilter("ignore")  # missing glyphs (e.g. CJK) render as boxes; not an error
        fig = Figure(figsize=(WIDTH_INCHES, height), dpi=DPI, facecolor="white")
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, ncols, squeeze=False)
        # Fixed margins (inches) instead of tight_layout, which costs a second full draw.
        fig.subplots_adjust(left=left_inches / WIDTH_INCHES, right=1 - 0.12 / WIDTH_INCHES,
                            bottom=bottom_inches / height, top=1 - (0.25 if ncols > 1 else 0.1) / height, wspace=0.28)
        yield fig, axes[0]


def _png(fig: Any) -> Image.Image:
    """The figure's pixels at DPI, RGB (no alpha: the page is white anyway)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig.canvas.draw()
    width, height = fig.canvas.get_width_height(physical=True)
    # PIL drops the alpha in C (~8x faster than slicing and copying the numpy view; the same pixels).
    return Image.frombuffer("RGBA", (width, height), fig.canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")


def option_colors(data: ChartData) -> dict[str, str]:
    """One color per option, in the decision's ranked order, shared by every chart."""
    return {series.name: PALETTE[index % len(PALETTE)] for index, series in enumerate(data.volume.series)}


def _usd_axis(value: float, _: int) -> str:
    if value >= 1e6:
        return f"${value / 1e6:g}M"
    return f"${value / 1e3:g}k" if value >= 1e3 else f"${value:g}"


def _tokens_axis(value: float, _: int) -> str:
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:g}{unit}"
    return f"{value:g}"


def _cjk_family(names: Iterable[str]) -> str | None:
    """Noto Sans CJK registered with matplotlib when an option name needs it (and the font is installed)."""
    if not any(needs_cjk(ch) for name in names for ch in name):
        return None
    path = cjk_font_path()
    if path is None:
        return None
    from matplotlib import font_manager

    font_manager.fontManager.addfont(str(path))
    return str(font_manager.FontProperties(fname=str(path)).get_name())
