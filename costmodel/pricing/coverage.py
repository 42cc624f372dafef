"""How much of the API price sheet the published latency sheet covers: which live rows have both a
published TTFT and a published output speed.

A row is live on `as_of` when its model is not retired by then (`ApiPriceRow.is_retired`, the test the
decision uses). A price id is covered when the latency sheet gives it at least one TTFT figure and at least
one output-speed figure; they may come from different rows (sources), each with its own workload and date.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from costmodel.pricing.latency import ApiLatencySheet
from costmodel.pricing.schema import ApiPriceRow
from costmodel.pricing.sheets import PriceSheet


@dataclass(frozen=True)
class LatencyCoverage:
    """Live API price ids on `as_of`, split into those with a published TTFT and output speed and the rest."""

    as_of: dt.date
    live_ids: tuple[str, ...]
    covered_ids: tuple[str, ...]

    @property
    def uncovered_ids(self) -> tuple[str, ...]:
        """Live ids lacking a published TTFT, a published output speed, or both, in price-sheet order."""
        covered = set(self.covered_ids)
        return tuple(i for i in self.live_ids if i not in covered)

    @property
    def covered_fraction(self) -> float:
        """Covered live ids over live ids (0 when nothing is live)."""
        return len(self.covered_ids) / len(self.live_ids) if self.live_ids else 0.0

    def missing(self, price_ids: Iterable[str]) -> tuple[str, ...]:
        """Those of `price_ids` that are live and not covered (retired ids need no latency)."""
        live, covered = set(self.live_ids), set(self.covered_ids)
        return tuple(dict.fromkeys(i for i in price_ids if i in live and i not in covered))


def has_ttft_and_speed(latency: ApiLatencySheet, price_id: str) -> bool:
    """Whether the latency sheet publishes both a TTFT and an output speed for this price id."""
    rows = latency.for_price_id(price_id)
    return (any(r.ttft_seconds is not None for r in rows)
            and any(r.output_tokens_per_second is not None for r in rows))


def latency_coverage(*, latency: ApiLatencySheet, prices: PriceSheet[ApiPriceRow],
                     as_of: dt.date) -> LatencyCoverage:
    """Coverage of the live rows of `prices` on `as_of` by `latency`."""
    live = tuple(row.id for row in prices.rows if not row.is_retired(today=as_of))
    covered = tuple(i for i in live if has_ttft_and_speed(latency, i))
    return LatencyCoverage(as_of=as_of, live_ids=live, covered_ids=covered)
