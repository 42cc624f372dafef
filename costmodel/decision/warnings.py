"""The common mistakes a scenario is exposed to, as sentences with numbers (DESIGN.md's list)."""

from __future__ import annotations

import datetime as dt

from costmodel.catalog.loader import load_accelerator
from costmodel.decision.feasibility import RETIRING_SOON_DAYS
from costmodel.decision.results import OptionResult
from costmodel.scenario import Scenario, SelfHostOption
from costmodel.serving.analytic import Capacity

STALE_PRICE_DAYS = 90  # a price older than this on the as-of date is flagged in compare's warnings and the memo


def scenario_warnings(scenario: Scenario, ranked: tuple[OptionResult, ...], *,
                      capacities: dict[str, Capacity], decision_as_of: dt.date | None = None) -> tuple[str, ...]:
    """Risks worth a line in the review: KV at peak, spiky traffic, unmeasured API latency, wrong phase."""
    workload = scenario.workload
    warnings = [f"Excluded {r.name}: {r.excluded_reason}" for r in ranked if r.excluded_reason is not None]
    peak_to_mean = workload.peak_to_mean()
    if peak_to_mean >= 2.0:
        warnings.append(
            f"Spiky traffic: the peak hour is {peak_to_mean:.1f}x the mean, so replicas sized for the peak idle "
            "much of the day; compare the hybrid option or autoscaling."
        )
    unmeasured = [r.name for r in ranked if r.slo_status == "unverified" and r.excluded_reason is None]
    if unmeasured:
        warnings.append(
            "Latency is unverified for " + ", ".join(unmeasured)
            + ": no measured or published figure, or a band across a limit, so they are never recommended "
            "(scenario accept_unverified_latency: true allows it); the cheapest is named with its saving and the "
            "`costmodel probe-endpoint` check that would settle it."
        )
    warnings += retiring_soon_warnings(ranked, as_of=decision_as_of)
    warnings += stale_price_warnings(ranked)
    retired = [r.name for r in ranked if r.kind == "api" and r.retired]
    if retired:
        warnings.append("Retired API rows: " + ", ".join(retired) + " use models the provider has retired; "
                        "their prices may no longer be on offer.")
    ratio = workload.mean_prompt_tokens() / max(workload.mean_output_tokens(), 1.0)
    if ratio >= 8:
        warnings.append(
            f"Prefill-heavy: prompts are {ratio:.0f}x longer than outputs; TTFT and prefill FLOPs dominate, so "
            "optimize prefill (prefix caching, chunked prefill), not decode tokens/s."
        )
    for option in scenario.options:
        if not isinstance(option, SelfHostOption):
            continue
        cap = capacities.get(option.name)
        if cap is None or not cap.feasible or cap.max_batch <= 0:
            continue
        if cap.batch >= 0.8 * cap.max_batch:
            warnings.append(
                f"KV growth: {option.name} runs {cap.batch} sequences at the SLO against a KV-memory ceiling of "
                f"{cap.max_batch} at {workload.mean_prompt_tokens() + workload.mean_output_tokens():.0f} tokens; "
                "longer contexts at peak will preempt or queue."
            )
        target = next((r.target_peak_utilization for r in ranked if r.name == option.name), None)
        if cap.throughput_bound and (target is None or target > 0.85):  # 15% priced headroom answers it
            warnings.append(
                f"No headroom: {option.name} is sized at {cap.requests_per_second:.2f} requests/s per replica, next "
                "to its saturation rate (the SLO limits do not bind); a burst above the peak hour queues without "
                "bound. Keep ~15-20% headroom or an API overflow (hybrid)."
            )
        if option.offering and "/spot" in option.offering:
            warnings.append(f"{option.name} uses spot capacity, which can be reclaimed: not for SLO-bound serving.")
        warnings += fp4_peak_warnings(option)
    if workload.growth_per_month > 0:
        six = workload.growth_factor(months_ahead=6)
        warnings.append(f"Growth: {workload.growth_per_month:.0%}/month is {six:.1f}x the volume in 6 months; "
                        "re-run the comparison at that volume before committing to reserved capacity.")
    return tuple(warnings)


def retiring_soon_warnings(ranked: tuple[OptionResult, ...], *, as_of: dt.date | None) -> list[str]:
    """One line per option whose model retires within RETIRING_SOON_DAYS after `as_of`."""
    lines = []
    for r in ranked:
        if r.retires_on is None or as_of is None or not 0 < (r.retires_on - as_of).days <= RETIRING_SOON_DAYS:
            continue
        lines.append(f"Retiring soon: {r.name}'s model retires on {r.retires_on.isoformat()}, "
                     f"{(r.retires_on - as_of).days} days after the as-of date; plan the migration.")
    return lines


def fp4_peak_warnings(option: SelfHostOption) -> list[str]:
    """One line when fp4 weights run on an accelerator with no fitted fp4_realized_peak_fraction (today
    rtx-pro-6000 and mi355x): its fp4 layers then run at the datasheet fp4 peak, an assumption; on the fitted
    Blackwell parts that ratio put the held-out fp4 rows 40-78% off (docs/validation.md, 'FP4 by accelerator')."""
    if option.weight_dtype != "fp4":
        return []
    hardware = load_accelerator(option.hardware)
    if "fp4" not in hardware.peak_flops_per_s or hardware.fp4_realized_peak_fraction is not None:
        return []
    return [f"fp4 on {hardware.id}: {option.name}'s fp4 layers run at the datasheet fp4 peak, an assumption (no "
            "fitted fp4_realized_peak_fraction for this accelerator; on B200, GB200 and B300 the datasheet ratio put "
            "the held-out fp4 rows 40-78% off, docs/validation.md); calibrate with a probe before relying on it."]


def stale_prices(ranked: tuple[OptionResult, ...]) -> tuple[tuple[str, int, tuple[str, ...]], ...]:
    """(price, age in days, the usable options that use it) for each price older than STALE_PRICE_DAYS, by price."""
    found: dict[str, tuple[int, list[str]]] = {}
    for r in ranked:
        if r.excluded_reason is not None:
            continue
        for source in r.price_sources:
            if source.age_days > STALE_PRICE_DAYS:
                found.setdefault(source.what, (source.age_days, []))[1].append(r.name)
    return tuple((what, age, tuple(names)) for what, (age, names) in sorted(found.items()))


def stale_price_warnings(ranked: tuple[OptionResult, ...]) -> list[str]:
    """One line naming every usable option's price older than STALE_PRICE_DAYS, with its age and who uses it
    (the memo's open questions and sources table flag the same prices)."""
    stale = stale_prices(ranked)
    if not stale:
        return []
    return [f"Prices older than {STALE_PRICE_DAYS} days: " + "; ".join(
        f"{what} ({age} days old, used by {', '.join(names)})" for what, age, names in stale)
        + ". Re-check them before relying on these options' costs."]
