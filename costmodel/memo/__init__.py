"""The PDF design-review memo: decision, options, charts, sensitivity, risks, sources, formulas.

`build_memo` / `build_memo_pdf` need the `memo` extra (reportlab, matplotlib); those are imported only
when a memo is built, so `import costmodel.memo` (and the CLI) stays light.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from costmodel.errors import CostmodelError

if TYPE_CHECKING:
    from costmodel.decision.capacity import CapacityCache
    from costmodel.decision.results import Decision
    from costmodel.measurements.calibration import Calibration
    from costmodel.memo.content import MemoContent
    from costmodel.scenario import Scenario
    from costmodel.search import SearchResult


@dataclass(frozen=True)
class Memo:
    """A built memo: the PDF, its page count and the content it was laid out from."""

    pdf: bytes
    pages: int
    content: MemoContent


def load_renderers() -> tuple[Callable[..., tuple[bytes, int]], Callable[..., dict[str, Any]]]:
    """(`builder.render_pdf`, `charts.render_charts`), importing reportlab and matplotlib on the first call
    (the CLI calls it first, to import them with the collector off: `cli.startup`)."""
    try:
        from costmodel.memo.mpl_import import import_figure_modules

        import_figure_modules()  # before memo.charts imports them: skips building setter docstrings
        from costmodel.memo.builder import render_pdf
        from costmodel.memo.charts import render_charts
    except ImportError as exc:  # the memo extra is optional
        raise CostmodelError(
            f"the PDF memo needs reportlab and matplotlib ({exc.name} is missing); "
            "install them with: pip install 'costmodel[memo]'"
        ) from None
    return render_pdf, render_charts


def build_memo(
    scenario: Scenario,
    decision: Decision | None = None,
    *,
    calibration: Calibration | None = None,
    today: dt.date | None = None,
    capacity_cache: CapacityCache | None = None,
    search_result: SearchResult | None = None,
    search_top_k: int = 0,
) -> Memo:
    """Evaluate `scenario` (unless its `decision` is given) and lay out the memo as of `today`
    (`capacity_cache`: capacities shared with other pages of the same session; `search_result`: the
    deployment search whose top `search_top_k` the scenario lists, for "Configurations considered")."""
    render_pdf, render_charts = load_renderers()
    from costmodel.memo.blocks import Figure
    from costmodel.memo.content import memo_content

    content = memo_content(scenario, decision, calibration=calibration, today=today, capacity_cache=capacity_cache,
                           search_result=search_result, search_top_k=search_top_k)
    keys = {block.key for block in content.blocks if isinstance(block, Figure)}
    pdf, pages = render_pdf(content, render_charts(content.charts, keys) if content.charts is not None else {})
    return Memo(pdf=pdf, pages=pages, content=content)


def build_memo_pdf(
    scenario: Scenario,
    decision: Decision | None = None,
    *,
    calibration: Calibration | None = None,
    today: dt.date | None = None,
) -> bytes:
    """The memo's PDF bytes (what the app's Memo page offers for download)."""
    return build_memo(scenario, decision, calibration=calibration, today=today).pdf


__all__ = ["Memo", "build_memo", "build_memo_pdf", "load_renderers"]
