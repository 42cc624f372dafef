"""Published latency dispersion (pricing_data/latency_dispersion.csv): how far an upper percentile sits above
the median, per provider or for served engines, so a published median can be widened into a p90 band.

Each row is one published run that states both the median and an upper percentile of one metric (TTFT, the
per-request TPOT, or the per-gap ITL) under one workload: `p90_over_p50` is that upper percentile over the
median, from the same run. Where the source publishes no p90, `percentile` says which upper percentile the
ratio uses (p95 or p99); such a ratio is wider than the p90's would be, so a band built from it errs on the
slow side. Both published figures are kept (`median_seconds`, `upper_seconds`) and the ratio must match them.

`scope` is a provider id of the API price sheet (`fireworks`, `together`, ...) or `served-engine` for
self-run inference servers (vLLM, SGLang) benchmarked at stated loads. No ratio here is estimated.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from costmodel.errors import CostmodelError
from costmodel.fileio import read_user_text
from costmodel.pricing.latency import parse_csv_rows
from costmodel.pricing.sheets import PRICING_DIR
from costmodel.strict import StrictModel

DISPERSION_FILE = "latency_dispersion.csv"
SERVED_ENGINE = "served-engine"
DispersionMetric = Literal["ttft", "tpot", "itl"]
METRICS: tuple[str, ...] = ("ttft", "tpot", "itl")
UpperPercentile = Literal["p90", "p95", "p99"]
# Published figures are rounded (two decimals of ms on vLLM's report): the stored ratio must equal
# upper/median to this relative tolerance, so a typo in either figure is caught.
RATIO_RELATIVE_TOLERANCE = 0.005


class LatencyDispersionRow(StrictModel):
    """One published run's upper-percentile-over-median ratio of one latency metric."""

    scope: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$",
                       description="provider id of the API price sheet (e.g. fireworks), or served-engine")
    metric: DispersionMetric = Field(description="ttft; tpot (per-request time per output token); itl (per-gap)")
    percentile: UpperPercentile = Field(description="the published upper percentile the ratio uses")
    p90_over_p50: float = Field(gt=1.0, description="`percentile` over the median of the same run (> 1)")
    median_seconds: float = Field(gt=0, description="the published median, s")
    upper_seconds: float = Field(gt=0, description="the published upper percentile, s")
    workload: str = Field(min_length=1, description="model, prompt/output tokens, concurrency or rate, hardware")
    source: str = Field(min_length=1, description="who measured it and how")
    source_url: str = Field(pattern=r"^https://", description="the page or file the figures are read from")
    as_of: dt.date = Field(description="date of the run (the page's own date), else of the page")
    checked: dt.date = Field(description="date the figures were read from the source")
    notes: str | None = None

    @model_validator(mode="after")
    def _check_ratio(self) -> LatencyDispersionRow:
        if self.upper_seconds <= self.median_seconds:
            raise ValueError(f"upper_seconds ({self.upper_seconds}) must exceed median_seconds ({self.median_seconds})")
        published = self.upper_seconds / self.median_seconds
        if not math.isclose(self.p90_over_p50, published, rel_tol=RATIO_RELATIVE_TOLERANCE):
            raise ValueError(f"p90_over_p50 {self.p90_over_p50} is not upper_seconds / median_seconds = "
                             f"{published:.4f}; store the ratio of the published figures")
        if self.checked < self.as_of:
            raise ValueError(f"checked ({self.checked}) is before as_of ({self.as_of})")
        return self


@dataclass(frozen=True)
class LatencyDispersionSheet:
    """Validated dispersion rows in file order."""

    where: str
    rows: tuple[LatencyDispersionRow, ...]

    def scopes(self) -> tuple[str, ...]:
        """Scopes with at least one row, in first-seen order."""
        return tuple(dict.fromkeys(row.scope for row in self.rows))

    def for_scope(self, scope: str, *, metric: str) -> tuple[LatencyDispersionRow, ...]:
        """Rows of this scope and metric, in file order; empty if none."""
        return tuple(r for r in self.rows if r.scope == scope and r.metric == metric)


def default_dispersion_path() -> Path:
    """The bundled sheet, pricing_data/latency_dispersion.csv."""
    return PRICING_DIR / DISPERSION_FILE


def parse_dispersion_text(text: str, *, where: str) -> LatencyDispersionSheet:
    """Validate CSV text (leading '#' lines are comments) as a dispersion sheet; errors name line and field."""
    return LatencyDispersionSheet(where=where, rows=parse_csv_rows(
        text, where=where, row_model=LatencyDispersionRow, key="scope", sheet="dispersion sheet"))


def load_latency_dispersion(path: str | Path | None = None) -> LatencyDispersionSheet:
    """Read and validate the dispersion sheet (default: the bundled pricing_data/latency_dispersion.csv; its
    text is read each time, validated once per distinct text, so every `decide` can call this cheaply)."""
    file_path = Path(path) if path is not None else default_dispersion_path()
    return _parsed(read_user_text(file_path, what="dispersion sheet"), str(file_path))


@functools.lru_cache(maxsize=8)
def _parsed(text: str, where: str) -> LatencyDispersionSheet:
    return parse_dispersion_text(text, where=where)


def _band_rows(rows: tuple[LatencyDispersionRow, ...]) -> tuple[LatencyDispersionRow, ...]:
    """The p90 rows when there are any (the figure the band is for), else every upper percentile given."""
    p90 = tuple(r for r in rows if r.percentile == "p90")
    return p90 or rows


def dispersion_band(sheet: LatencyDispersionSheet, *, provider: str, metric: str) -> tuple[float, float] | None:
    """(low_ratio, high_ratio): the range of published upper-percentile-over-median ratios of `metric`.

    Rows of `provider` (a provider id, or `served-engine`) when it has any; else the rows of every provider
    (served-engine rows excluded: a provider's API is not a self-run engine); None when neither has a row.
    Within the chosen rows, p90 ratios are used when there are any, else the p95/p99 ones (wider, so the
    band errs on the slow side). Multiply a published median by both ends for a p90 band.
    """
    if metric not in METRICS:
        raise CostmodelError(f"dispersion metric {metric!r} is not one of {', '.join(METRICS)}; pick one of those")
    rows = sheet.for_scope(provider, metric=metric)
    if not rows and provider != SERVED_ENGINE:
        rows = tuple(r for r in sheet.rows if r.metric == metric and r.scope != SERVED_ENGINE)
    if not rows:
        return None
    ratios = [r.p90_over_p50 for r in _band_rows(rows)]
    return min(ratios), max(ratios)
