"""Page 1's "what would change the answer": the revisit trigger, the quality assumption, the latency still
to verify and the retirements coming up. Pure functions of the decision, its scenario and the sweeps."""

from __future__ import annotations

import math

from costmodel.decision.breakeven import recommendation_break_even
from costmodel.decision.reasons import quality_statement
from costmodel.decision.results import Decision
from costmodel.decision.sensitivity import Sensitivity
from costmodel.memo.blocks import Block, Bullets, Para, cut_names, short, times, tokens
from costmodel.scenario import Scenario


def months_to_reach(*, volume_scale: float, growth_per_month: float) -> float | None:
    """Months of compound growth until volume is `volume_scale` x today's (None: growth never gets there)."""
    if volume_scale <= 1.0 or growth_per_month <= 0.0:
        return None
    return math.log(volume_scale) / math.log1p(growth_per_month)


def revisit_trigger(decision: Decision, scenario: Scenario, sensitivity: Sensitivity) -> str:
    """'Re-evaluate at 2.1x volume (~10 months at 8%/month growth)', or why no volume trigger applies."""
    flips = [f for f in (sensitivity.flip_above, sensitivity.flip_below) if f is not None]
    crossing = recommendation_break_even(decision)
    if not flips and crossing is not None:  # a break-even in range is a volume that changes the answer: say it
        side = "below" if crossing.volume_scale < 1 else "above"
        return (f"Revisit trigger: re-evaluate at {times(crossing.volume_scale)} volume "
                f"({tokens(crossing.tokens_per_month)} tokens/month), the break-even with {short(crossing.other)} "
                f"on month 0's $/month; {side} it the order of the two on $/month is reversed.")
    if not flips:
        return ("Revisit trigger: no volume from 1/100x to 100x today's changes the answer; re-evaluate when prices, "
                "the SLO or the options change.")
    flip = min(flips, key=lambda f: abs(math.log(f.volume_scale)))
    growth = scenario.workload.growth_per_month
    months = months_to_reach(volume_scale=flip.volume_scale, growth_per_month=growth)
    when = (f", ~{months:.0f} months at {growth:.0%}/month growth" if months is not None
            else "" if flip.direction == "below" else ", not reached without growth")
    who = short(flip.new_choice) if flip.new_choice else "another option"
    return (f"Revisit trigger: re-evaluate at {times(flip.volume_scale)} volume ({tokens(flip.tokens_per_month)} "
            f"tokens/month{when}), where {who} becomes the better choice.")


def latency_owed(decision: Decision) -> str:
    """Which options' latency is unverified or only published (not the scenario's traffic), read from each
    option's `slo_status` and `latency_source`: the usable options, or every option when none is usable."""
    options = decision.usable_options or decision.options
    scope = "usable option" if decision.usable_options else "option"
    unverified = [short(o.name) for o in options if o.slo_status == "unverified" or o.latency_source == "none"]
    published = [short(o.name) for o in options if o.latency_source == "published"]
    if not unverified and not published:
        sources = " or ".join(sorted({o.latency_source for o in options}))
        return f"Latency: every {scope}'s verdict is {sources}; nothing is owed."
    parts = []
    if unverified:
        parts.append("no measured or published latency (does not count as meeting the SLO): " + ", ".join(unverified))
    if published:
        parts.append("published, not your traffic: " + ", ".join(published))
    return ("Latency verification still owed, " + "; ".join(parts)
            + ". Measure with `costmodel probe-endpoint` and set ttft_p90_seconds / tpot_p90_seconds.")


def retirements(decision: Decision) -> list[str]:
    """Retirements coming up (within 90 days of the as-of date) and options excluded as retired."""
    lines = [f"{short(name)} retires on {day.isoformat()}, within 90 days: plan the migration."
             for name, day in decision.retiring_soon]
    lines += [f"{short(o.name)} is excluded: {o.excluded_reason}" for o in decision.options if o.excluded_kind == "retired"]
    return lines


def change_blocks(decision: Decision, scenario: Scenario, sensitivity: Sensitivity | None) -> list[Block]:
    """The page-1 list of what would change the answer."""
    items = [revisit_trigger(decision, scenario, sensitivity)] if sensitivity is not None else []
    items += [quality_statement(decision), latency_owed(decision), *retirements(decision)]
    names = [o.name for o in decision.options]
    return [Para("What would change the answer:", style="small"),
            Bullets(tuple(cut_names(item, names) for item in items))]
