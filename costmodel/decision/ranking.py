"""Ranking: usable options by the cost they are compared on, the excluded last, within one substitutes group.

Usable options (decision/feasibility.py: not retired, above the quality floor, not missing the SLO, not
throttled) come first, cheapest first (`OptionResult.ranking_usd`: $/month, or the horizon total with reserved
commitments when the scenario sets horizon_months or a usable option commits past the horizon; an owned option whose host server is not counted after every
option with a complete cost); then the excluded ones in scenario order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from costmodel.decision.horizon import OptionHorizon, commits_past_horizon, horizon_ranking_basis
from costmodel.decision.quality import not_substitutes, option_subject
from costmodel.decision.results import OptionResult, RankingBasis
from costmodel.scenario import Scenario


def _usable(results: tuple[OptionResult, ...]) -> list[OptionResult]:
    return [r for r in results if r.excluded_reason is None and math.isfinite(r.usd_per_month)]


def ranking_basis(scenario: Scenario, results: tuple[OptionResult, ...],
                   horizons: Mapping[str, OptionHorizon]) -> RankingBasis:
    """The horizon total with commitments when the scenario sets horizon_months or a usable option commits past
    the horizon (decision/horizon.py `horizon_ranking_basis`), and every usable option has one; else $/month (no
    option is compared on a different basis from another)."""
    usable = _usable(results)
    basis = horizon_ranking_basis(scenario, [horizons[r.name] for r in usable if r.name in horizons])
    return basis if all(r.name in horizons for r in usable) else "usd_per_month"


def ranking_basis_reason(scenario: Scenario, results: tuple[OptionResult, ...],
                         horizons: Mapping[str, OptionHorizon]) -> str:
    """Why the options are ranked on `ranking_basis`'s basis, in one sentence (compare, the memo, the app)."""
    usable = _usable(results)
    months = scenario.horizon_months
    committing = [(r.name, horizons[r.name]) for r in usable if r.name in horizons
                  and commits_past_horizon(horizons[r.name], horizon_months=months)]
    missing = [r.name for r in usable if r.name not in horizons]
    if ranking_basis(scenario, results, horizons) == "usd_per_month":
        if missing and (committing or "horizon_months" in scenario.model_fields_set):
            return (f"Ranked by month 0's $/month: {', '.join(missing)} has no month-by-month cost, so the options "
                    "cannot all be compared over the horizon with their commitments.")
        return (f"Ranked by month 0's $/month: no option commits past the {months}-month horizon and horizon_months "
                "is left at its default.")
    if committing:
        name, horizon = max(committing, key=lambda c: c[1].committed_after_horizon_usd)
        term = f"{horizon.term_months}-month reserved term" if horizon.term_months else "reserved term"
        more = f" (and {len(committing) - 1} more)" if len(committing) > 1 else ""
        return (f"Ranked by the {months}-month horizon total with the commitments still owed after it, not month "
                f"0's $/month: {name}{more} signs a {term} that runs past the horizon "
                f"(${horizon.committed_after_horizon_usd:,.0f} owed after month {months}).")
    return f"Ranked by the {months}-month horizon total with commitments: the scenario sets horizon_months."


def with_ranking_cost(result: OptionResult, horizons: Mapping[str, OptionHorizon], basis: RankingBasis) -> OptionResult:
    """The result with the horizon total with commitments it is ranked by (when the basis is the horizon)."""
    horizon = horizons.get(result.name)
    if horizon is None or result.excluded_reason is not None:
        return result
    total = sum(horizon.usd_by_month) + horizon.committed_after_horizon_usd
    return replace(result, usd_committed_after_horizon=horizon.committed_after_horizon_usd,
                   usd_horizon_total_with_commitments=total, ranking_basis=basis)


def finite_or_excluded(result: OptionResult) -> OptionResult:
    """A cost that is not a finite number (a bad price that slipped through) never ranks: it is excluded."""
    if result.excluded_reason is not None or math.isfinite(result.usd_per_month):
        return result
    reason = "its cost is not a finite number; check the prices it uses (price sheet or scenario override)"
    return replace(result, excluded_reason=reason, excluded_kind="non_finite_cost", meets_slo=False,
                   slo_status="misses", slo_reason=reason)


def rank_options(results: tuple[OptionResult, ...], *, accept_unverified: bool = False) -> tuple[OptionResult, ...]:
    """Usable options by `ranking_usd` (whatever their latency status: the recommendation picks among them,
    decision/recommend.py; owned hardware whose host is not counted after the options with a complete cost),
    then the excluded in scenario order. Ties (a hybrid keeping 0 base replicas costs what its API costs) go to
    the simpler. `accept_unverified` no longer changes the order (kept for callers)."""
    del accept_unverified
    simplicity = {"api": 0, "self-host": 1, "hybrid": 2}
    usable = [r for r in results if r.excluded_reason is None]
    out = [r for r in results if r.excluded_reason is not None]
    ordered = sorted(usable, key=lambda r: (r.throttled, r.host_not_counted, round(r.ranking_usd, 2),
                                            simplicity[r.kind]))
    return tuple(ordered + out)


def within_substitutes(ranked: tuple[OptionResult, ...], scenario: Scenario) -> tuple[OptionResult, ...]:
    """With `substitutes:` groups only one group competes (decision/quality.py `not_substitutes`): the others
    are excluded as `not_substitute` and the options re-ranked."""
    feasible = [(r.name, option_subject(scenario.option(r.name), scenario)) for r in ranked if r.excluded_reason is None]
    outside = not_substitutes(feasible, scenario=scenario)
    if not outside:
        return ranked
    marked = tuple(replace(r, excluded_reason=outside[r.name], excluded_kind="not_substitute",
                           excluded_kinds=("not_substitute",)) if r.name in outside else r for r in ranked)
    return rank_options(marked, accept_unverified=scenario.accept_unverified_latency)
