"""A batch API's latency: its provider's published completion window, and when the batch price applies.

A batch API returns each request's result whole (no stream) some time within the provider's completion
window, so the window's bound is the only latency a provider stands behind: TTFT (and end-to-end time) is
at most the window, and TPOT does not apply to a result that arrives in one piece. A provider that
publishes no bound ("typically within 24 hours") gives no batch latency (`window_seconds` None).

The rule (docs/economics.md "Batch APIs"), one formula: an API option is priced through its batch API only
when the workload allows batching, the row has batch prices, the option does not opt out, the provider's
window is sourced, and every TTFT and E2E limit the SLO sets (p50, p90, p99) is at least the window.
Otherwise it is priced at its interactive price with its interactive latency evidence, and
`BatchChoice.declined` says why the batch API was not used.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from costmodel.fileio import read_user_text
from costmodel.pricing.latency import parse_csv_rows
from costmodel.pricing.sheets import PRICING_DIR
from costmodel.scenario.slo import Slo
from costmodel.strict import StrictModel
from costmodel.units import fmt_seconds

SECONDS_PER_DAY = 86_400.0
BATCH_WINDOWS_FILE = "batch_windows.csv"


class BatchWindowRow(StrictModel):
    """One provider's published batch completion window (pricing_data/batch_windows.csv)."""

    provider: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="provider id of the API price sheet")
    window_seconds: float | None = Field(default=None, gt=0, le=30 * SECONDS_PER_DAY,
                                         description="the published bound, s; empty: no bound is published")
    quote: str = Field(min_length=1, description="the page's own words")
    source_url: str = Field(pattern=r"^https://", description="the page the window is read from")
    checked: dt.date = Field(description="date the page was read")
    notes: str | None = None


@dataclass(frozen=True, kw_only=True)
class BatchWindow:
    """One provider's published batch completion window (s); None: no bound published."""

    provider: str
    window_seconds: float | None
    source: str  # URL, the page's words, and when it was read


def _window(row: BatchWindowRow) -> BatchWindow:
    kind = "" if row.window_seconds is not None else " (typical, not a bound)"
    extra = f"; {row.notes}" if row.notes else ""
    return BatchWindow(provider=row.provider, window_seconds=row.window_seconds,
                       source=f'{row.source_url}: "{row.quote}"{kind}{extra}, read {row.checked.isoformat()}')


@functools.lru_cache(maxsize=4)
def load_batch_windows(path: str | None = None) -> dict[str, BatchWindow]:
    """The validated windows by provider (default: the bundled pricing_data/batch_windows.csv)."""
    file_path = Path(path) if path is not None else PRICING_DIR / BATCH_WINDOWS_FILE
    rows = parse_csv_rows(read_user_text(file_path, what="batch window sheet"), where=str(file_path),
                          row_model=BatchWindowRow, key="provider", sheet="batch window sheet")
    return {row.provider: _window(row) for row in rows}


def batch_window(provider: str) -> BatchWindow:
    """The provider's window; a provider not in the sheet has no sourced window."""
    return load_batch_windows().get(provider) or BatchWindow(
        provider=provider, window_seconds=None, source=f"no published batch completion window found for {provider}")


def fmt_window(seconds: float) -> str:
    """A window in hours ("24 h") when it is whole hours, else in seconds."""
    hours = seconds / 3600.0
    return f"{hours:g} h" if hours >= 1 and hours == round(hours) else fmt_seconds(seconds)


@dataclass(frozen=True, kw_only=True)
class BatchChoice:
    """Whether an API option is priced through its batch API, and why not when it could have been."""

    batch: bool
    window: BatchWindow | None = None  # set whenever the batch API was considered
    declined: str | None = None  # for people: why the batch API was not used although the workload allows it


def _window_limits(slo: Slo) -> list[tuple[str, float]]:
    """Every TTFT and E2E limit set: a batch result arrives whole, so its first token and its last arrive together."""
    return [(f"{limit.metric.upper()} p{limit.percentile}", limit.limit_seconds) for limit in slo.limits()
            if limit.metric in ("ttft", "e2e")]


def choose_batch(*, provider: str, has_batch_price: bool, batch_allowed: bool, use_batch_api: bool,
                 slo: Slo | None) -> BatchChoice:
    """The batch API only where its window fits every TTFT/E2E limit (module docstring); `slo` None: no limit."""
    if not (batch_allowed and has_batch_price and use_batch_api):
        return BatchChoice(batch=False)
    window = batch_window(provider)
    if window.window_seconds is None:
        return BatchChoice(batch=False, window=window, declined=(
            f"batch API not used: {provider} publishes no bound on its batch completion window ({window.source}), "
            "so it cannot be shown to meet the TTFT limit"))
    over = [(name, limit) for name, limit in (_window_limits(slo) if slo else [])
            if limit < window.window_seconds * (1 - 1e-9)]
    if over:
        limits = ", ".join(f"the {name} limit of {fmt_window(limit)}" for name, limit in over)
        return BatchChoice(batch=False, window=window, declined=(
            f"batch API not used: its {fmt_window(window.window_seconds)} completion window exceeds {limits}; "
            "priced at the interactive rates"))
    return BatchChoice(batch=True, window=window)
