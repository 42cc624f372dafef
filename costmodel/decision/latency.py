"""An API option's SLO verdict in three states: meets, misses or unverified, and where the latency comes from.

- `measured`: the option carries `ttft_p90_seconds` and `tpot_p90_seconds` (a `probe-endpoint` result).
- `published`: rows of pricing_data/api_latency.csv for its price id, at the row whose prompt length is
  nearest the workload's mean prompt (or interpolated between the two rows around it; the reason says which).
  Always labelled "published, not your traffic". A published p50 or p90 above a limit means the p90 is
  above it too, so the option misses; a published p50 within the limits proves nothing about the p90, so it
  stays unverified. Only a published p90/p95 within both limits meets; a p95 or a mean above a limit does
  not put the p90 above it, so it stays unverified too.
- `none`: no figures; unverified. Unverified never counts as meeting the SLO (`meets_slo` is
  `status == "meets"`); the ranking puts it after verified options unless `accept_unverified_latency`.
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.decision.results import LatencySource, SloStatus
from costmodel.pricing.latency import ApiLatencyRow, ApiLatencySheet
from costmodel.scenario import ApiOption, Scenario
from costmodel.units import fmt_seconds

PUBLISHED_LABEL = "published, not your traffic"
# Percentiles at or above the SLO's p90: a figure within the limit there bounds the p90 too.
UPPER_PERCENTILES = {"p90", "p95"}
# Percentiles at or below the SLO's p90: a figure over the limit there puts the p90 over it too.
LOWER_PERCENTILES = {"p50", "p90"}


@dataclass(frozen=True, kw_only=True)
class ApiSloVerdict:
    """The typed status, where the latency comes from, the figures used and the sentence for people."""

    status: SloStatus
    latency_source: LatencySource
    reason: str
    ttft_seconds: float | None = None
    tpot_seconds: float | None = None

    @property
    def meets_slo(self) -> bool:
        """Only a verified verdict meets the SLO."""
        return self.status == "meets"


@dataclass(frozen=True, kw_only=True)
class PublishedLatency:
    """Published figures at the workload's prompt length, and how they were picked."""

    ttft_seconds: float | None
    tpot_seconds: float | None
    percentile: str
    how: str  # "nearest prompt length 1,000 tokens", "interpolated between ...", "prompt length not stated"
    source: str


def _tpot(row: ApiLatencyRow) -> float | None:
    return 1.0 / row.output_tokens_per_second if row.output_tokens_per_second else None


def _lerp(low: float | None, high: float | None, weight: float) -> float | None:
    if low is None or high is None:
        return low if weight < 0.5 else high
    return low + (high - low) * weight


def published_latency(rows: tuple[ApiLatencyRow, ...], *, prompt_tokens: float) -> PublishedLatency | None:
    """Figures for one price id at `prompt_tokens`: interpolated between the rows around it, else the nearest."""
    if not rows:
        return None
    sized = [r for r in rows if r.prompt_tokens is not None]
    if not sized:
        row = rows[0]
        return PublishedLatency(ttft_seconds=row.ttft_seconds, tpot_seconds=_tpot(row), percentile=row.percentile,
                                how="prompt length not stated by the source", source=row.source_url)
    below = [r for r in sized if (r.prompt_tokens or 0) <= prompt_tokens]
    above = [r for r in sized if (r.prompt_tokens or 0) >= prompt_tokens]
    # Interpolate only between two figures of the same statistic (a p50 and a p95 do not mix).
    if (below and above and below[-1].prompt_tokens != above[0].prompt_tokens
            and below[-1].percentile == above[0].percentile):
        low, high = below[-1], above[0]
        assert low.prompt_tokens is not None and high.prompt_tokens is not None
        weight = (prompt_tokens - low.prompt_tokens) / (high.prompt_tokens - low.prompt_tokens)
        return PublishedLatency(
            ttft_seconds=_lerp(low.ttft_seconds, high.ttft_seconds, weight),
            tpot_seconds=_lerp(_tpot(low), _tpot(high), weight), percentile=low.percentile,
            how=f"interpolated between prompt lengths {low.prompt_tokens:,} and {high.prompt_tokens:,} tokens",
            source=low.source_url)
    row = min(sized, key=lambda r: abs((r.prompt_tokens or 0) - prompt_tokens))
    return PublishedLatency(ttft_seconds=row.ttft_seconds, tpot_seconds=_tpot(row), percentile=row.percentile,
                            how=f"nearest prompt length {row.prompt_tokens:,} tokens", source=row.source_url)


def _over_limits(*, ttft: float | None, tpot: float | None, ttft_limit: float, tpot_limit: float,
                 stat: str = "p90") -> list[str]:
    problems = []
    if ttft is not None and ttft > ttft_limit:
        problems.append(f"TTFT {stat} {fmt_seconds(ttft)} > {fmt_seconds(ttft_limit)}")
    if tpot is not None and tpot > tpot_limit:
        problems.append(f"TPOT {stat} {fmt_seconds(tpot)} > {fmt_seconds(tpot_limit)}")
    return problems


def api_slo(option: ApiOption, scenario: Scenario, latency: ApiLatencySheet | None = None) -> ApiSloVerdict:
    """Verdict from the option's measured latency, else the published sheet, else unverified."""
    slo = scenario.slo
    ttft_limit, tpot_limit = slo.ttft_p90_seconds, slo.tpot_p90_seconds
    if option.ttft_p90_seconds is not None and option.tpot_p90_seconds is not None:
        problems = _over_limits(ttft=option.ttft_p90_seconds, tpot=option.tpot_p90_seconds, ttft_limit=ttft_limit,
                                tpot_limit=tpot_limit)
        if problems:
            return ApiSloVerdict(status="misses", latency_source="measured", reason="misses the SLO (measured p90): "
                                 + "; ".join(problems), ttft_seconds=option.ttft_p90_seconds,
                                 tpot_seconds=option.tpot_p90_seconds)
        return ApiSloVerdict(status="meets", latency_source="measured", reason="meets the SLO (measured p90 latency)",
                             ttft_seconds=option.ttft_p90_seconds, tpot_seconds=option.tpot_p90_seconds)
    found = published_latency(latency.for_price_id(option.price_id) if latency else (),
                              prompt_tokens=scenario.workload.mean_prompt_tokens())
    if found is None:
        return ApiSloVerdict(status="unverified", latency_source="none", reason=(
            "unverified: no measured or published latency for this API; run `costmodel probe-endpoint` and set "
            "ttft_p90_seconds / tpot_p90_seconds"))
    figures = f"{found.percentile} {PUBLISHED_LABEL}, {found.how}; {found.source}"
    problems = _over_limits(ttft=found.ttft_seconds, tpot=found.tpot_seconds, ttft_limit=ttft_limit,
                            tpot_limit=tpot_limit, stat=found.percentile)
    complete = found.ttft_seconds is not None and found.tpot_seconds is not None
    status: SloStatus = "unverified"
    reason = (f"unverified: published {found.percentile} figures are within the limits but do not bound your p90 "
              f"({figures}); measure with `costmodel probe-endpoint`")
    if problems and found.percentile in LOWER_PERCENTILES:
        status, reason = "misses", f"misses the SLO: {'; '.join(problems)} ({figures})"
    elif problems:
        reason = (f"unverified: a published {found.percentile} over a limit ({'; '.join(problems)}) does not put "
                  f"the p90 over it ({figures}); measure with `costmodel probe-endpoint`")
    elif complete and found.percentile in UPPER_PERCENTILES:
        status, reason = "meets", f"meets the SLO ({figures})"
    return ApiSloVerdict(status=status, latency_source="published", reason=reason, ttft_seconds=found.ttft_seconds,
                         tpot_seconds=found.tpot_seconds)
