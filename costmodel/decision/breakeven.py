"""Break-even against a reference API: one definition, on the fleet re-sized for the break-even volume.

V* is the monthly volume nearest today's (within 1/100x .. 100x) at which the self-host option's $/month, its
fleet sized for that volume by its own policy (headroom, N+1, autoscaling: decision/volume.py, the same
economics as `decide`), crosses the reference API's $/month at that volume: the crossing of the two lines of
the memo's cost-vs-volume chart. For the fleet sized for V*, whose replicas serve R_h replicas in hour h,
each at X tokens/s at the SLO (prompt + output), C = sum_h R_h x D x 3,600 x X tokens a month (D = 30.4375
days) is what it could carry at full utilization, and

    u* = V* / C                   the break-even utilization: the share of that fleet's capacity in use at V*

so that fleet's cost F = p_api x V* / 1e6 and u* = F x 1e6 / (p_api x C) (docs/economics.md, "Break-even").
No crossing in the range: no break-even (None), and every face says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from costmodel.decision.crossing import FLIP_SEARCH_DECADES, first_volume
from costmodel.decision.quality import substitute_group
from costmodel.decision.results import Decision, OptionResult
from costmodel.decision.volume import (
    CostModel,
    Scaling,
    cost_model,
    replicas_by_hour_at,
    step_volumes,
    tokens_per_second_per_replica,
    usd_per_month,
)
from costmodel.pricing import ApiPriceRow, PriceSheet
from costmodel.scenario import HybridOption, Scenario, SelfHostOption
from costmodel.units import DAYS_PER_MONTH, SECONDS_PER_HOUR, TOKENS_PER_MTOK


@dataclass(frozen=True, kw_only=True)
class BreakEven:
    """One consistent (utilization, volume) pair on one fleet."""

    utilization: float  # u* = V* / C
    tokens_per_month: float  # V*
    fleet_tokens_per_month: float  # C: the fleet's capacity at the SLO, every paid serving hour busy


def fleet_tokens_per_month(*, replicas_by_hour: Sequence[int], tokens_per_second_per_replica: float) -> float:
    """C = sum_h R_h x D x 3,600 s x X: prompt + output tokens the fleet serves a month at full utilization."""
    return sum(replicas_by_hour) * DAYS_PER_MONTH * SECONDS_PER_HOUR * tokens_per_second_per_replica


def break_even_on_fleet(*, fleet_usd_per_month: float, fleet_tokens_per_month: float,
                        api_usd_per_mtok: float) -> BreakEven | None:
    """V* = F x 1e6 / p_api and u* = V* / C; None when the API price or the capacity is not positive and finite."""
    if not (api_usd_per_mtok > 0 and math.isfinite(api_usd_per_mtok) and fleet_tokens_per_month > 0
            and math.isfinite(fleet_usd_per_month)):
        return None
    volume = fleet_usd_per_month * TOKENS_PER_MTOK / api_usd_per_mtok
    return BreakEven(utilization=volume / fleet_tokens_per_month, tokens_per_month=volume,
                     fleet_tokens_per_month=fleet_tokens_per_month)


def with_break_even(result: OptionResult, reference: OptionResult | None) -> OptionResult:
    """A self-host result with its reference API named; the (u*, V*) pair is set by `with_break_evens` once
    the whole decision is priced (it needs every option's cost at other volumes)."""
    against = reference.name if reference is not None else None
    if (result.break_even_utilization is None and result.break_even_tokens_per_month is None
            and result.break_even_against == against):
        return result  # already so (every horizon month): no copy
    return replace(result, break_even_utilization=None, break_even_tokens_per_month=None,
                   break_even_against=reference.name if reference is not None else None)


def break_even_crossing(model: CostModel, name: str, *, against: str) -> BreakEven | None:
    """V* (nearest today's volume where the order of `name` and `against` changes) and u* on the fleet sized
    for it; None when the order does not change within 1/100x .. 100x."""
    priced: dict[tuple[str, float], float] = {}

    def usd(option: str, scale: float) -> float:
        key = (option, scale)
        if key not in priced:
            priced[key] = usd_per_month(model, option, Scaling(volume=scale))
        return priced[key]

    def gap(scale: float) -> float:  # linear between cost steps: the API's cost and the fleet's are
        return usd(name, scale) - usd(against, scale)

    steps = step_volumes(model, up_to=10.0**FLIP_SEARCH_DECADES, names=(name, against))
    own, api = usd(name, 1.0), usd(against, 1.0)
    # The option's cost never falls as volume grows (replicas follow demand) and the API's is linear in it, so
    # the lines can only cross beyond own / api x today's volume, on either side: the scan starts there. For
    # the same reason, past a volume where the option costs X, the lines cannot cross while the API costs
    # less than X (upward; downward: no less than X): those samples are skipped (`known_false`).
    start = own / api if api > 0 and math.isfinite(own) else 1.0
    scale = (first_volume(lambda s: usd(name, s) > usd(against, s), upward=False, steps=steps, start=min(start, 1.0),
                          known_false=lambda last, s: usd(against, s) >= usd(name, last), gap=gap)
             if own <= api else
             first_volume(lambda s: usd(name, s) <= usd(against, s), upward=True, steps=steps, start=max(start, 1.0),
                          known_false=lambda last, s: usd(against, s) < usd(name, last), gap=gap))
    if scale is None:
        return None
    at = Scaling(volume=scale)
    capacity = fleet_tokens_per_month(replicas_by_hour=replicas_by_hour_at(model, name, at),
                                      tokens_per_second_per_replica=tokens_per_second_per_replica(model, name, at))
    volume = scale * model.tokens_per_month
    return BreakEven(utilization=volume / capacity if capacity > 0 else math.inf, tokens_per_month=volume,
                     fleet_tokens_per_month=capacity)


def with_break_evens(decision: Decision, scenario: Scenario, *,
                     api_sheet: PriceSheet[ApiPriceRow] | None = None) -> Decision:
    """The decision with every usable self-host option's (u*, V*) against its reference API."""
    if not decision.usable_options:
        return decision
    model = cost_model(decision, scenario, api_sheet=api_sheet)
    names = {o.name for o in model.options}

    def priced(result: OptionResult) -> OptionResult:
        against = result.break_even_against
        if result.kind != "self-host" or result.excluded_reason is not None or against not in names:
            return result
        pair = break_even_crossing(model, result.name, against=against)
        return replace(result, break_even_utilization=pair.utilization if pair else None,
                       break_even_tokens_per_month=pair.tokens_per_month if pair else None)

    return replace(decision, options=tuple(priced(o) for o in decision.options))


@dataclass(frozen=True, kw_only=True)
class RecommendationCrossing:
    """The break-even nearest today's volume that involves the recommendation: where its order with an API changes."""

    tokens_per_month: float  # V*
    volume_scale: float  # V* / today's tokens per month
    other: str  # the option on the other side of the crossing


def recommendation_break_even(decision: Decision) -> RecommendationCrossing | None:
    """From the decision's own break-evens (`with_break_evens`, one definition): the recommendation's V* against its
    reference API when it is self-hosted, else the nearest V* of a usable SLO-meeting self-host option whose
    reference is the recommended API; None when none crosses within 1/100x .. 100x."""
    if decision.recommendation is None or decision.tokens_per_month <= 0:
        return None
    chosen = decision.chosen()
    pairs = ([(chosen.break_even_tokens_per_month, chosen.break_even_against)] if chosen.kind == "self-host" else
             [(o.break_even_tokens_per_month, o.name) for o in decision.usable_options
              if o.kind == "self-host" and o.meets_slo and o.break_even_against == chosen.name])
    found = [(volume, other) for volume, other in pairs if volume is not None and other is not None]
    if not found:
        return None
    volume, other = min(found, key=lambda p: abs(math.log(p[0] / decision.tokens_per_month)))
    return RecommendationCrossing(tokens_per_month=volume, volume_scale=volume / decision.tokens_per_month, other=other)


def reference_apis(scenario: Scenario, apis: list[OptionResult],
                open_models: dict[str, str | None]) -> dict[str, OptionResult]:
    """The reference API of each self-host and hybrid option (its self-host part's): the API serving the same
    open model when the scenario has one, else the cheapest SLO-meeting API (else the cheapest). With
    `substitutes:` groups only an API of the option's own group (a substitute) can be its reference."""
    out: dict[str, OptionResult] = {}
    for option in scenario.options:
        if isinstance(option, SelfHostOption):
            group = substitute_group(option.name, scenario.substitutes)
            peers = [a for a in apis if group is None or a.name in group]
            same_model = [a for a in peers if open_models.get(a.name) == option.model]
            reference = cheapest_api(same_model) or cheapest_api(peers)
            if reference is not None:
                out[option.name] = reference
    for option in scenario.options:
        if isinstance(option, HybridOption) and option.self_host in out:
            out[option.name] = out[option.self_host]
    return out


def named_reference(result: OptionResult, reference: OptionResult | None) -> OptionResult:
    """Every self-host and hybrid row names its reference API, evaluated or excluded."""
    if result.kind == "api" or reference is None or result.break_even_against is not None:
        return result
    return replace(result, break_even_against=reference.name)


def cheapest_api(apis: list[OptionResult]) -> OptionResult | None:
    """The cheapest API by blended $/M among those meeting the SLO unthrottled (else among all); None: none."""
    apis = [a for a in apis if math.isfinite(a.usd_per_mtok)]  # break-even against NaN would be NaN
    meeting = [a for a in apis if a.meets_slo and not a.throttled]
    pool = meeting or apis
    return min(pool, key=lambda a: a.usd_per_mtok) if pool else None
