"""The sentences with numbers that explain a decision's recommendation (or why there is none)."""

from __future__ import annotations

from costmodel.decision.results import Decision, OptionResult


def no_recommendation_reason(ranked: tuple[OptionResult, ...]) -> str:
    """Why nothing is recommended: every option is excluded, each with its typed reason."""
    return ("No option is feasible, so nothing is recommended: "
            + "; ".join(f"{r.name} ({r.excluded_kind}): {r.excluded_reason}" for r in ranked) + ".")


def decision_reasons(ranked: tuple[OptionResult, ...]) -> tuple[str, ...]:
    """Why the first ranked (usable) option is chosen, its runner-up and where self-hosting breaks even."""
    chosen = ranked[0]
    reasons = []
    if chosen.meets_slo and not chosen.throttled:
        reasons.append(
            f"{chosen.name} is the cheapest option that meets the SLO: ${chosen.usd_per_month:,.0f}/month "
            f"(${chosen.usd_per_mtok:.3f} per million tokens)."
        )
    elif chosen.slo_status == "unverified" and not chosen.throttled:
        reasons.append(
            f"{chosen.name} is the cheapest option not known to miss the SLO: ${chosen.usd_per_month:,.0f}/month "
            f"(${chosen.usd_per_mtok:.3f} per million tokens); its latency is unverified, so verify it before committing."
        )
    else:
        reasons.append(f"No option meets the SLO; {chosen.name} is the cheapest (${chosen.usd_per_month:,.0f}/month) "
                       f"but {chosen.slo_reason}.")
    runner_up = next((r for r in ranked[1:] if r.slo_status != "misses" and not r.throttled and r.excluded_reason is None
                      and r.usd_per_month > chosen.usd_per_month * 1.005), None)
    if runner_up is not None and runner_up.usd_per_month > 0:
        saving = 1.0 - chosen.usd_per_month / runner_up.usd_per_month
        reasons.append(f"It costs {saving:.0%} less than the runner-up, {runner_up.name} "
                       f"(${runner_up.usd_per_month:,.0f}/month).")
    if chosen.kind != "api" and chosen.break_even_utilization is not None and chosen.utilization is not None:
        reasons.append(
            f"Its replicas run at {chosen.utilization:.0%} utilization; self-hosting beats {chosen.break_even_against} "
            f"above {chosen.break_even_utilization:.0%}."
        )
    elif chosen.kind == "api":
        # The pair is on each option's month-0 fleet (decision/breakeven.py): a volume beyond what that fleet
        # carries (u* > 1) is no break-even of it.
        volumes = [(r.break_even_tokens_per_month, r.name) for r in ranked
                   if r.kind == "self-host" and r.break_even_tokens_per_month and r.excluded_reason is None
                   and r.break_even_utilization is not None and r.break_even_utilization <= 1]
        if volumes:
            volume, name = min(volumes)
            reasons.append(f"Self-hosting ({name}) would break even at {volume / 1e9:,.1f}B tokens/month.")
        elif any(r.kind == "self-host" and r.excluded_reason is None for r in ranked):
            reasons.append("No self-host fleet priced here breaks even with this API: each would need more volume "
                           "than it can carry at the SLO (break-even utilization above 100%) or has no capacity at it.")
    return tuple(reasons)


def quality_statement(decision: Decision) -> str:
    """The quality assumption in one sentence: the floor and who falls below it, the substitutes groups and
    who is outside the competing one, or that the options are treated as substitutes."""
    floor = decision.quality_floor
    if floor is None and decision.substitutes is None:
        return ("No quality floor is set: the options are treated as substitutes (equally good answers), so they are "
                "compared on cost and latency alone; set `quality:` or `substitutes:` in the scenario if they are not.")
    parts = []
    if floor is not None:
        below = [o.name for o in decision.options if o.excluded_kind == "below_quality_floor"]
        parts.append(f"Quality floor: {floor.label}"
                     + (f"; below it (shown, never recommended): {', '.join(below)}" if below else "; every option meets it"))
    if decision.substitutes is not None:
        outside = [o.name for o in decision.options if o.excluded_kind == "not_substitute"]
        groups = "; ".join("[" + ", ".join(g) + "]" for g in decision.substitutes)
        parts.append(f"Substitutes: only options of one group compete (scenario substitutes: {groups}; an option in "
                     "no group is its own)" + (f"; not substitutes (shown, never recommended): {', '.join(outside)}"
                                               if outside else ""))
    return ". ".join(parts) + "."
