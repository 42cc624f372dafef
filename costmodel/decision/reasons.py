"""The sentences with numbers that explain a decision's recommendation (or why there is none)."""

from __future__ import annotations

import math

from costmodel.decision.recommend import Recommendation, verify_first_sentence
from costmodel.decision.results import Decision, OptionResult
from costmodel.units import fmt_money, fmt_share


def no_recommendation_reason(ranked: tuple[OptionResult, ...], pick: Recommendation) -> tuple[str, ...]:
    """Why nothing is recommended: every option is excluded (each with its typed reason), or no usable option
    is known to meet the SLO (then what to verify first)."""
    if pick.cheapest_usable is None:
        return ("No option is feasible, so nothing is recommended: "
                + "; ".join(f"{r.name} ({r.excluded_kind}): {r.excluded_reason}" for r in ranked) + ".",)
    usable = [r.name for r in ranked if r.excluded_reason is None]
    reasons = [f"No option is known to meet the SLO, so nothing is recommended: the latency of {', '.join(usable)} "
               "is unverified (no measurement, no published figure, or a band across a limit)."]
    if pick.cheaper_unverified is not None:
        reasons.append(verify_first_sentence(pick.cheaper_unverified))
    return tuple(reasons)


def _status_words(option: OptionResult) -> str:
    return {"meets": "meets the SLO (measured)",
            "likely_meets": f"likely meets the SLO ({option.latency_source} p90 band within the limits)",
            "unverified": "has unverified latency (accepted by the scenario)"}.get(option.slo_status, option.slo_status)


def decision_reasons(ranked: tuple[OptionResult, ...], pick: Recommendation, *,
                     total_tokens: float = 0.0) -> tuple[str, ...]:
    """Why the recommended option is chosen, what verifying a cheaper one would save, the premium over the
    cheapest usable option, its runner-up and where self-hosting breaks even."""
    chosen = pick.chosen
    assert chosen is not None
    reasons = []
    if pick.cheaper_unverified is not None:
        reasons.append(verify_first_sentence(pick.cheaper_unverified))
    qualifier = "the cheapest option that" if pick.cheapest_usable is chosen else "the cheapest option whose latency"
    reasons.append(f"{chosen.name} is {qualifier} {_status_words(chosen)}: {fmt_money(chosen.usd_per_month)}/month "
                   f"(${chosen.usd_per_mtok:.3f} per million tokens).")
    if pick.premium_usd_per_month and pick.cheapest_usable is not None and pick.cheapest_usable is not chosen:
        cheapest = pick.cheapest_usable
        share = pick.premium_usd_per_month / cheapest.usd_per_month if cheapest.usd_per_month > 0 else float("nan")
        reasons.append(f"It costs {fmt_money(pick.premium_usd_per_month)}/month ({fmt_share(share)}) more than the cheapest usable "
                       f"option, {cheapest.name} ({fmt_money(cheapest.usd_per_month)}/month, latency {cheapest.slo_status}).")
    allowed = {"meets", "likely_meets"} | ({"unverified"} if chosen.slo_status == "unverified" else set())
    runner_up = next((r for r in ranked if r is not chosen and r.slo_status in allowed and not r.throttled
                      and r.excluded_reason is None and r.usd_per_month > chosen.usd_per_month * 1.005), None)
    if runner_up is not None and runner_up.usd_per_month > 0:
        saving = 1.0 - chosen.usd_per_month / runner_up.usd_per_month
        reasons.append(f"It costs {fmt_share(saving)} less than the next option that meets or likely meets the SLO, "
                       f"{runner_up.name} ({fmt_money(runner_up.usd_per_month)}/month).")
    reasons += _break_even_reasons(ranked, chosen, total_tokens=total_tokens)
    return tuple(reasons)


def _break_even_reasons(ranked: tuple[OptionResult, ...], chosen: OptionResult, *, total_tokens: float) -> list[str]:
    if chosen.kind != "api":
        if chosen.utilization is None or chosen.break_even_against is None:
            return []
        run = f"Its replicas run at {chosen.utilization:.0%} utilization"
        if chosen.break_even_tokens_per_month is None or chosen.break_even_utilization is None:
            return [f"{run}; its order against {chosen.break_even_against} does not change between 1/100x and "
                    "100x today's volume."]
        side = "below" if chosen.break_even_tokens_per_month < total_tokens else "above"
        return [f"{run}; it breaks even with {chosen.break_even_against} at "
                f"{chosen.break_even_tokens_per_month / 1e9:,.1f}B tokens/month{_on_month_0(chosen)} ({side} today's volume; "
                f"{chosen.break_even_utilization:.0%} utilization of the fleet sized for that volume)."]
    # V* is where the self-host option's cost, its fleet re-sized for that volume, crosses the API's
    # (decision/breakeven.py); none within 1/100x .. 100x: no break-even.
    # An owned option whose host server has no sourced figures is never the reference: its cost leaves the host out.
    volumes = [(r.break_even_tokens_per_month, r.name) for r in ranked
               if r.kind == "self-host" and r.break_even_tokens_per_month and r.excluded_reason is None
               and r.break_even_against == chosen.name and not r.host_not_counted]
    if volumes:
        volume, name = min(volumes, key=lambda pair: abs(math.log(pair[0] / max(total_tokens, 1.0))))
        return [f"Self-hosting ({name}) would break even with it at {volume / 1e9:,.1f}B tokens/month"
                f"{_on_month_0(chosen)}."]
    if any(r.kind == "self-host" and r.excluded_reason is None and r.break_even_against == chosen.name for r in ranked):
        return ["No self-host option here breaks even with this API between 1/100x and 100x today's volume."]
    return []


def _on_month_0(chosen: OptionResult) -> str:
    """A break-even is a crossing of $/month lines (decision/breakeven.py): say so when the ranking is not on $/month."""
    return (" on month 0's $/month (the ranking, on the horizon total with commitments, crosses elsewhere)"
            if chosen.ranking_basis == "usd_horizon_total_with_commitments" else "")


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
