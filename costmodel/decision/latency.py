"""An API option's latency evidence and SLO verdict (decision/evidence.py), from measured, published or no figures.

- `measured`: the option carries `ttft_p90_seconds` and `tpot_p90_seconds` (a `probe-endpoint` result).
- `published`: rows of pricing_data/api_latency.csv for its price id, at the row whose prompt length is
  nearest the workload's mean prompt (or interpolated between the two rows around it; the basis says which).
  Always labelled "published, not your traffic". A published median becomes a p90 band through the
  provider's sourced p90/p50 ratios (pricing_data/latency_dispersion.csv; every provider's when it has none);
  a published p90 is itself and a p95 bounds the p90 from above.
- batch API (`batch_evidence`): the provider's published completion window bounds TTFT (`published`;
  pricing/batch_window.py); TPOT does not apply, the result arrives whole.
- `none`: no figures; unverified, except that a limit below the fastest figure any API of the sheet publishes
  misses (no API is known to be that fast).
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.decision.evidence import (
    NO_EVIDENCE,
    Band,
    LatencyEvidence,
    SloVerdict,
    measured_evidence,
    slo_verdict,
)
from costmodel.pricing.batch_window import BatchWindow, fmt_window
from costmodel.pricing.dispersion import LatencyDispersionSheet, dispersion_band
from costmodel.pricing.latency import ApiLatencyRow, ApiLatencySheet
from costmodel.scenario import ApiOption, Scenario
from costmodel.units import fmt_seconds

PUBLISHED_LABEL = "published, not your traffic"


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


def _published_evidence(found: PublishedLatency, *, provider: str,
                        dispersion: LatencyDispersionSheet | None) -> LatencyEvidence:
    """A published figure as a p90 band: a median (or mean) x the provider's sourced p90/p50 range; a p90 as
    itself; a p95 as the p90's upper bound (low = high = the p95: the p90 is at most that)."""
    what = f"{found.percentile} {PUBLISHED_LABEL}, {found.how}; {found.source}"
    if found.percentile == "p90":
        return LatencyEvidence(source="published", ttft=Band.around(found.ttft_seconds, low_factor=1, high_factor=1),
                               tpot=Band.around(found.tpot_seconds, low_factor=1, high_factor=1), basis=what)
    if found.percentile == "p95":  # p90 <= p95: an upper end, no lower one (a p95 over a limit proves no miss)
        def upper(value: float | None) -> Band:
            return Band(point=value, high=value) if value is not None else Band()

        return LatencyEvidence(source="published", ttft=upper(found.ttft_seconds), tpot=upper(found.tpot_seconds),
                               basis=f"{what}; a p95 bounds the p90 from above, and does not put the p90 over it")
    ttft_ratio = dispersion_band(dispersion, provider=provider, metric="ttft") if dispersion else None
    tpot_ratio = dispersion_band(dispersion, provider=provider, metric="tpot") if dispersion else None

    def widened(value: float | None, ratio: tuple[float, float] | None) -> Band:
        if value is None or ratio is None:
            return Band(point=value)
        return Band(point=value * (ratio[0] + ratio[1]) / 2, low=value * ratio[0], high=value * ratio[1])

    spread = "; ".join(f"{name} p90/p50 {r[0]:.2f}-{r[1]:.2f}" for name, r in (("TTFT", ttft_ratio), ("TPOT", tpot_ratio))
                       if r is not None) or "no sourced p90/p50 dispersion"
    return LatencyEvidence(source="published", ttft=widened(found.ttft_seconds, ttft_ratio),
                           tpot=widened(found.tpot_seconds, tpot_ratio),
                           basis=f"{what}; widened by the published {spread} (pricing_data/latency_dispersion.csv)")


def fastest_published(latency: ApiLatencySheet | None) -> tuple[float | None, float | None]:
    """The lowest TTFT (s) and TPOT (s, 1 / the highest output speed) any API row of the sheet publishes."""
    rows = latency.rows if latency else ()
    ttfts = [r.ttft_seconds for r in rows if r.ttft_seconds is not None]
    speeds = [r.output_tokens_per_second for r in rows if r.output_tokens_per_second is not None]
    return (min(ttfts) if ttfts else None), (1.0 / max(speeds) if speeds else None)


def _unpublished(scenario: Scenario, latency: ApiLatencySheet | None) -> tuple[LatencyEvidence, SloVerdict]:
    """No figure for this API: unverified, unless a limit is below what the fastest API of the sheet publishes."""
    slo = scenario.slo
    ttft, tpot = fastest_published(latency)
    below = []
    if ttft is not None and slo.ttft_p90_seconds < ttft:
        below.append(f"TTFT p90 limit {fmt_seconds(slo.ttft_p90_seconds)} < {fmt_seconds(ttft)}")
    if tpot is not None and slo.tpot_p90_seconds < tpot:
        below.append(f"TPOT p90 limit {fmt_seconds(slo.tpot_p90_seconds)} < {fmt_seconds(tpot)}")
    if below:
        return NO_EVIDENCE, SloVerdict(status="misses", reason=(
            "misses the SLO: no published latency for this API, and " + "; ".join(below)
            + ", the fastest figure any API in the latency sheet publishes (a median): no API is known to be that fast"))
    return NO_EVIDENCE, SloVerdict(status="unverified", reason=(
        "unverified: no measured or published latency for this API; run `costmodel probe-endpoint` and set "
        "ttft_p90_seconds / tpot_p90_seconds"))


def batch_evidence(window: BatchWindow) -> LatencyEvidence:
    """A batch API's latency: TTFT (and E2E) at most the published window, no lower end (results often come
    sooner, by an amount no provider publishes), TPOT not applicable. No sourced window: no evidence."""
    if window.window_seconds is None:
        return LatencyEvidence(source="none", ttft=Band(), tpot=Band(), tpot_applies=False,
                               basis=f"batch API with no published completion window ({window.source})")
    seconds = window.window_seconds
    return LatencyEvidence(
        source="published", ttft=Band(point=seconds, high=seconds), tpot=Band(), tpot_applies=False,
        basis=(f"batch API: results arrive whole within the provider's {fmt_window(seconds)} completion window, "
               f"so TTFT is at most {fmt_window(seconds)} and TPOT does not apply; {window.source}"))


def api_slo(option: ApiOption, scenario: Scenario, latency: ApiLatencySheet | None = None,
            dispersion: LatencyDispersionSheet | None = None) -> tuple[LatencyEvidence, SloVerdict]:
    """Evidence and verdict from the option's measured latency, else the published sheet (widened by the
    sourced dispersion), else none (decision/evidence.py)."""
    if option.ttft_p90_seconds is not None and option.tpot_p90_seconds is not None:
        evidence = measured_evidence(ttft_p90_seconds=option.ttft_p90_seconds, tpot_p90_seconds=option.tpot_p90_seconds,
                                     basis="measured p90 (probe-endpoint figures on the option; no interval given)")
        return evidence, slo_verdict(evidence, scenario.slo)
    found = published_latency(latency.for_price_id(option.price_id) if latency else (),
                              prompt_tokens=scenario.workload.mean_prompt_tokens())
    if found is None:
        return _unpublished(scenario, latency)
    evidence = _published_evidence(found, provider=option.price_id.split("/")[0], dispersion=dispersion)
    return evidence, slo_verdict(evidence, scenario.slo)
