"""matplotlib's figure machinery imported without the property list in every Artist's `set()` docstring.

As each Artist subclass is defined, matplotlib builds its `set()` docstring from `matplotlib.artist.kwdoc`,
which introspects the docstring of every setter (and `%(Line2D:kwdoc)s`-style substitutions in the Axes
methods' docstrings do the same): about a quarter of the import of `matplotlib.figure`, ~0.1 s CPU per memo
on the 2-core dev machine, for help text a memo build never shows. While the figure modules are first
imported, `kwdoc` returns a one-line pointer instead; signatures, behaviour and pixels are unchanged, and
`kwdoc` itself is restored afterwards. Imported only when a memo is built (needs the `memo` extra).
"""

from __future__ import annotations

import sys

SHORT_KWDOC = "Properties: see matplotlib.artist.kwdoc(type(self))."


def _short_kwdoc(artist: object) -> str:
    return SHORT_KWDOC


def import_figure_modules() -> None:
    """Import matplotlib.figure, the Agg canvas, patches and tickers (once; later calls return at once)."""
    if "matplotlib.figure" in sys.modules:  # already imported (by this process's app, say): nothing to save
        return
    import matplotlib.artist as artist

    full_kwdoc = artist.kwdoc
    artist.kwdoc = _short_kwdoc
    try:
        import matplotlib.backends.backend_agg
        import matplotlib.figure
        import matplotlib.patches
        import matplotlib.ticker  # noqa: F401
    finally:
        artist.kwdoc = full_kwdoc
