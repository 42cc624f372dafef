"""The parts of an option's result: where a price comes from, the cost by component, infeasibility labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class PriceSource:
    """Where a price in an option comes from, and how old it is."""

    what: str  # e.g. "API price openai/gpt-4o" or "GPU offering lambda/h100-sxm/on-demand"
    source: str
    checked: str  # ISO date the row was last compared with its source
    age_days: int  # days from the price's own date (price_as_of, else checked) to the as-of date
    price_as_of: str | None = None  # ISO date of the price's own source, when the sheet records it


@dataclass(frozen=True)
class CostBreakdown:
    """USD per month by component."""

    gpu_usd_per_month: float = 0.0  # rented GPU-hours, or owned capex + power + colocation
    api_usd_per_month: float = 0.0  # token charges
    ops_usd_per_month: float = 0.0  # people, monitoring
    host_usd_per_month: float = 0.0  # of gpu_usd_per_month: owned GPUs' host servers (capex + power)


SloStatus = Literal["meets", "likely_meets", "misses", "unverified"]
# Each infeasibility kind (decision/validity.py, decision/feasibility.py) in words, for tables and pages.
EXCLUSION_LABELS = {
    "invalid_option": "invalid option",
    "cannot_serve_lengths": "can't serve the lengths",
    "non_finite_cost": "no finite cost",
    "below_quality_floor": "below the quality floor",
    "not_substitute": "not a substitute",
    "retired": "retired",
    "misses_slo": "misses the SLO",
    "throttled": "throttled",
}


def exclusion_label(kind: str | None) -> str:
    """The words for an infeasibility kind ('' for None; the kind itself when it has no label)."""
    return "" if kind is None else EXCLUSION_LABELS.get(kind, kind.replace("_", " "))


# Each label counted, (one, many), where the bare label does not read after a number ('4 miss the SLO').
_COUNTED_LABELS = {
    "invalid_option": ("invalid option", "invalid options"),
    "non_finite_cost": ("with no finite cost", "with no finite cost"),
    "not_substitute": ("not a substitute", "not substitutes"),
    "misses_slo": ("misses the SLO", "miss the SLO"),
}


def counted_exclusion(kind: str | None, count: int) -> str:
    """'1 misses the SLO', '4 miss the SLO': `count` options of one infeasibility kind, the label in its number."""
    one, many = _COUNTED_LABELS.get(kind or "", (exclusion_label(kind), exclusion_label(kind)))
    return f"{count} {one if count == 1 else many}"
