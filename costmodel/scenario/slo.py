"""Latency service-level objectives: percentile limits on TTFT, TPOT and end-to-end time.

TTFT: request sent to first token. TPOT: (E2E - TTFT) / (N - 1), first token excluded (vLLM's
convention). E2E: request sent to last token. Every limit is in seconds at a percentile.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from costmodel.scenario.limits import MAX_LATENCY_SECONDS, MIN_LATENCY_SECONDS
from costmodel.strict import StrictModel

SloMetric = Literal["ttft", "tpot", "e2e"]


@dataclass(frozen=True)
class SloLimit:
    """One limit: `metric` at `percentile` must be <= `limit_seconds`."""

    metric: SloMetric
    percentile: int
    limit_seconds: float

    @property
    def key(self) -> str:
        """The result field this limit is checked against, e.g. 'ttft_p90_seconds'."""
        return f"{self.metric}_p{self.percentile}_seconds"


class Slo(StrictModel):
    """Latency targets. p90 TTFT and TPOT are required; p50/p99 and E2E limits are optional."""

    ttft_p90_seconds: float = Field(ge=MIN_LATENCY_SECONDS, le=MAX_LATENCY_SECONDS, description="90th percentile time to first token, s")
    tpot_p90_seconds: float = Field(ge=MIN_LATENCY_SECONDS, le=MAX_LATENCY_SECONDS, description="90th percentile time per output token after the first, s")
    ttft_p50_seconds: float | None = Field(default=None, ge=MIN_LATENCY_SECONDS, le=MAX_LATENCY_SECONDS)
    ttft_p99_seconds: float | None = Field(default=None, ge=MIN_LATENCY_SECONDS, le=MAX_LATENCY_SECONDS)
    tpot_p50_seconds: float | None = Field(default=None, ge=MIN_LATENCY_SECONDS, le=MAX_LATENCY_SECONDS)
    tpot_p99_seconds: float | None = Field(default=None, ge=MIN_LATENCY_SECONDS, le=MAX_LATENCY_SECONDS)
    e2e_p90_seconds: float | None = Field(default=None, ge=MIN_LATENCY_SECONDS, le=MAX_LATENCY_SECONDS, description="90th percentile end-to-end time, s")
    e2e_p99_seconds: float | None = Field(default=None, ge=MIN_LATENCY_SECONDS, le=MAX_LATENCY_SECONDS)

    def limits(self) -> tuple[SloLimit, ...]:
        """Every limit that is set, as (metric, percentile, seconds)."""
        found = []
        for name, value in self.model_dump().items():
            if value is None:
                continue
            metric, percentile, _ = name.split("_")
            found.append(SloLimit(metric=metric, percentile=int(percentile[1:]), limit_seconds=value))  # type: ignore[arg-type]
        return tuple(found)
