"""Exclusions found after an option is evaluated: retired before the horizon ends, below the quality floor,
misses the SLO, throttled by its rate limits.

Feasibility is one concept: each of these (and validity.py's invalid options and lengths a model cannot
serve) is a typed kind on the option (`excluded_kind`, the first found; `excluded_kinds`, every one). Such
an option keeps its costs (shown, with the reason) but is never ranked first, recommended or used as a
reference (break-evens, flips, sensitivity, the cost-vs-volume chart).
Also: which options retire soon (within `RETIRING_SOON_DAYS` of the as-of date) for page 1 and warnings.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from costmodel.catalog.quality import DEFAULT_BENCHMARK, QualitySheet
from costmodel.decision.quality import ResolvedFloor, below_floor, option_scores, resolve_floor
from costmodel.decision.results import OptionResult
from costmodel.pricing import ApiPriceRow, PriceSheet
from costmodel.scenario import ApiOption, HybridOption, Option, Scenario

# The window for "retiring soon": flagged on page 1 and in compare's warnings.
RETIRING_SOON_DAYS = 90


def add_months(day: dt.date, *, months: int) -> dt.date:
    """The same day `months` calendar months later (clamped to the month's last day)."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    for clamp in (day.day, 30, 29, 28):
        try:
            return dt.date(year, month, clamp)
        except ValueError:
            continue
    raise AssertionError("unreachable: every month has 28 days")


def retirement_date(option: Option, scenario: Scenario, api_sheet: PriceSheet[ApiPriceRow]) -> dt.date | None:
    """The date the option's API model retires (a hybrid: its API part's), or None."""
    if isinstance(option, HybridOption):
        option = scenario.option(option.api)
    if isinstance(option, ApiOption):
        return api_sheet.get(option.price_id).deprecation_date
    return None


def retirement_exclusion(option: Option, scenario: Scenario, api_sheet: PriceSheet[ApiPriceRow], *,
                         as_of: dt.date) -> str | None:
    """Why the option cannot be chosen when its model retires before as_of + horizon_months, else None."""
    retires = retirement_date(option, scenario, api_sheet)
    if retires is None:
        return None
    horizon_end = add_months(as_of, months=scenario.horizon_months)
    if retires >= horizon_end:
        return None
    when = "was retired" if retires <= as_of else "retires"
    return (f"retired: its model {when} on {retires.isoformat()}, before the end of the {scenario.horizon_months}-month "
            f"horizon ({horizon_end.isoformat()}); pick a live row or shorten horizon_months")


def retiring_soon(option: Option, scenario: Scenario, api_sheet: PriceSheet[ApiPriceRow], *,
                  as_of: dt.date) -> dt.date | None:
    """The retirement date when it is after as_of and within RETIRING_SOON_DAYS of it, else None."""
    retires = retirement_date(option, scenario, api_sheet)
    if retires is None or retires <= as_of or (retires - as_of).days > RETIRING_SOON_DAYS:
        return None
    return retires


def exclude(result: OptionResult, *, kind: str, reason: str) -> OptionResult:
    """The result marked excluded (costs kept), unless it already is."""
    if result.excluded_reason is not None:
        return result
    return replace(result, excluded_reason=reason, excluded_kind=kind)


def infeasibilities(result: OptionResult, *, retired: Mapping[str, str],
                    below_floor: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """Every (kind, reason) that makes an evaluated option infeasible, most fundamental first."""
    found = []
    if result.name in retired:
        found.append(("retired", retired[result.name]))
    if result.name in below_floor:
        found.append(("below_quality_floor", below_floor[result.name]))
    if result.slo_status == "misses":
        reason = result.slo_reason
        found.append(("misses_slo", reason if reason.startswith("misses the SLO") else f"misses the SLO: {reason}"))
    if result.throttled:
        # The rate-limit check's own sentence (pricing/api_cost.py), for people; the kind is read from `throttled`.
        limit = next((n for n in result.notes if "would be throttled" in n), "")
        found.append(("throttled", "throttled: its API rate limits are below the peak minute's demand"
                      + (f" ({limit})" if limit else "") + "; ask for a higher tier's limits or spread the load"))
    return tuple(found)


def apply_exclusions(result: OptionResult, *, retired: Mapping[str, str],
                     below_floor: Mapping[str, str]) -> OptionResult:
    """Mark one evaluated result with every reason it is infeasible (retired, below the quality floor,
    misses the SLO, throttled); the first is `excluded_kind` / `excluded_reason`, all are `excluded_kinds`."""
    found = infeasibilities(result, retired=retired, below_floor=below_floor)
    if not found:
        return result
    kinds = tuple(dict.fromkeys((*result.excluded_kinds, *(kind for kind, _ in found))))
    if result.excluded_reason is not None:
        return replace(result, excluded_kinds=kinds)
    kind, reason = found[0]
    return replace(result, excluded_reason=reason, excluded_kind=kind, excluded_kinds=kinds)


@dataclass(frozen=True, kw_only=True)
class Feasibility:
    """What decide needs beyond the per-option checks: the floor, scores and post-evaluation exclusions."""

    floor: ResolvedFloor | None
    quality_scores: dict[str, float | None]  # option name -> score on the floor's (or default) benchmark
    retired: dict[str, str]  # option name -> reason
    below_floor: dict[str, str]  # option name -> reason
    retiring_soon: dict[str, dt.date]  # option name -> retirement date within RETIRING_SOON_DAYS
    retirements: dict[str, dt.date]  # option name -> its model's retirement date, when the sheet has one


def assess(scenario: Scenario, *, api_sheet: PriceSheet[ApiPriceRow], quality: QualitySheet, as_of: dt.date,
           skip: Collection[str] = ()) -> Feasibility:
    """Resolve the quality floor and retirements for every option not in `skip` (already excluded)."""
    floor = resolve_floor(scenario, quality)
    benchmark = floor.benchmark if floor else DEFAULT_BENCHMARK
    live = [o for o in scenario.options if o.name not in skip]
    checked = scenario.model_copy(update={"options": live}) if floor and live else scenario
    below = below_floor(checked, quality, floor) if floor and live else {}
    retired = {o.name: r for o in live if (r := retirement_exclusion(o, scenario, api_sheet, as_of=as_of))}
    soon = {o.name: d for o in live if (d := retiring_soon(o, scenario, api_sheet, as_of=as_of))}
    scores = option_scores(scenario, quality, benchmark=benchmark) if live else {}
    dates = {o.name: d for o in live if (d := retirement_date(o, scenario, api_sheet))}
    return Feasibility(floor=floor, quality_scores=scores, retired=retired, below_floor=below, retiring_soon=soon,
                       retirements=dates)
