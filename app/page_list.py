"""The app's pages in navigation order: file under app/, title (also the page's st.title), URL path.

main.py builds st.navigation from this list; the AppTest and browser tests walk the same list. The folder
is views/, not pages/: Streamlit treats a pages/ folder next to main.py as its legacy multipage folder (the
first run of a server process then goes through script_runner._mpa_v1, which lists every .py in it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    """One page: its script, its title (the heading it shows) and its URL path."""

    file: str
    title: str
    url_path: str
    charts: int  # plotly charts the page shows on the bundled default scenario (browser test waits for them)
    ready: str = ""  # CSS selector of an element the page shows once rendered (browser test)


PAGES: tuple[PageSpec, ...] = (
    PageSpec("views/overview.py", "Overview", "overview", charts=0, ready='[data-testid="stMetric"]'),
    PageSpec("views/scenario.py", "Scenario", "scenario", charts=1),
    PageSpec("views/compare.py", "Compare", "compare", charts=4),
    PageSpec("views/roofline.py", "Roofline", "roofline", charts=3),
    PageSpec("views/latency.py", "Latency", "latency", charts=3),
    PageSpec("views/search.py", "Search", "search", charts=0, ready='[data-testid="stButton"]'),
    PageSpec("views/probes.py", "Probes", "probes", charts=0, ready='[data-testid="stFileUploader"]'),
    PageSpec("views/prices.py", "Prices", "prices", charts=0, ready='[data-testid="stDataFrame"]'),
    PageSpec("views/memo.py", "Memo", "memo", charts=0, ready='[data-testid="stButton"]'),  # built on request
)
