"""Break-even against a reference API, both forms on one fleet: the month-0 fleet the option is priced with.

For a fleet costing F $/month (GPUs + ops) whose replicas serve R_h replicas in hour h of the day, each at
X tokens/s at the SLO (prompt + output), the fleet carries at most C = sum_h R_h x D x 3,600 x X tokens a
month (D = 30.4375 days; a fixed fleet of n replicas: C = n x X x S, S = 2,629,800 s). Against an API at
p_api $/M (blended over prompt and output tokens):

    V* = F x 1e6 / p_api          the monthly volume at which the API bills what this fleet costs
    u* = V* / C                   the same volume as a share of the fleet's capacity (> 1: never on this fleet)

so V* = u* x C by construction (docs/economics.md, "Break-even"). The fleet is the one priced today (same
replicas, same hours); a larger volume would need a larger fleet, whose break-even is another pair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from costmodel.decision.quality import substitute_group
from costmodel.decision.results import OptionResult
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
    """A self-host result with its reference API named and the (u*, V*) pair on its month-0 fleet."""
    if reference is None:
        return replace(result, break_even_utilization=None, break_even_tokens_per_month=None, break_even_against=None)
    pair = None
    if result.replicas_by_hour is not None and result.tokens_per_second_per_replica:
        capacity = fleet_tokens_per_month(replicas_by_hour=result.replicas_by_hour,
                                          tokens_per_second_per_replica=result.tokens_per_second_per_replica)
        pair = break_even_on_fleet(fleet_usd_per_month=result.usd_per_month, fleet_tokens_per_month=capacity,
                                   api_usd_per_mtok=reference.usd_per_mtok)
    return replace(result, break_even_against=reference.name,
                   break_even_utilization=pair.utilization if pair else None,
                   break_even_tokens_per_month=pair.tokens_per_month if pair else None)


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
