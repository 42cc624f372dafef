"""Scenario -> ranked options with SLO verdicts: the object `compare`, the app and the memo render.

Ranking: usable options (decision/feasibility.py: not retired, above the quality floor, not missing the SLO,
not throttled) come first, cheapest first (`OptionResult.ranking_usd`: $/month, or the horizon total with
reserved commitments when the scenario sets horizon_months; an owned option whose host server is not counted
after every option with a complete cost); then the excluded ones. The recommendation is the cheapest usable
option that meets or likely meets the SLO (decision/recommend.py, decision/evidence.py), with the cheaper
unverified option to verify first and the premium over the cheapest usable option. The reference API for
break-even is the cheapest feasible API option (of the same substitutes group).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from costmodel.catalog import (
    accelerators,
    models,
)
from costmodel.catalog.quality import QualitySheet, load_quality_scores
from costmodel.decision.attach import (  # option_efficiency: re-exported, search and the docs tests use it here
    Attached,
    annotate,
    forced_warnings,
    load_attached,
    measured_api_option,
)
from costmodel.decision.breakeven import named_reference, reference_apis, with_break_evens
from costmodel.decision.capacity import (  # re-exported: the app, search and memo import them here
    CapacityCache,
    CapacityMethod,
    self_host_capacity,
)
from costmodel.decision.economics import diurnal_profile
from costmodel.decision.feasibility import apply_exclusions, assess
from costmodel.decision.horizon import (
    OptionHorizon,
    horizon_ranking_basis,
    option_horizons,
    ranking_change,
    ranking_change_reason,
    scaled_workload,
    with_horizon,
)
from costmodel.decision.options import api_result, hybrid_result, self_host_result
from costmodel.decision.quality import not_substitutes, option_subject
from costmodel.decision.reasons import decision_reasons, no_recommendation_reason
from costmodel.decision.recommend import recommend
from costmodel.decision.results import Decision, OptionResult, RankingBasis
from costmodel.decision.validity import Exclusion, excluded_result, option_exclusions, with_hybrid_parts
from costmodel.decision.warnings import scenario_warnings
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.pricing import ApiPriceRow, GpuPriceRow, PriceSheet, load_api_prices, load_gpu_prices
from costmodel.pricing.dispersion import LatencyDispersionSheet, load_latency_dispersion
from costmodel.pricing.latency import ApiLatencySheet, load_api_latency
from costmodel.pricing.sheets import open_model_ids
from costmodel.scenario import ApiOption, HybridOption, Scenario, SelfHostOption, Workload
from costmodel.serving.analytic import Capacity


@dataclass(frozen=True)
class Overrides:
    """Multipliers for sensitivity analysis (1.0 = as given)."""

    gpu_price: float = 1.0
    api_price: float = 1.0
    efficiency: float = 1.0
    volume: float = 1.0


def decide(
    scenario: Scenario,
    *,
    calibration: Calibration | None = None,
    api_sheet: PriceSheet[ApiPriceRow] | None = None,
    gpu_sheet: PriceSheet[GpuPriceRow] | None = None,
    today: dt.date | None = None,
    overrides: Overrides | None = None,
    capacity_method: CapacityMethod = "simulator",
    capacity_cache: CapacityCache | None = None,
    quality_sheet: QualitySheet | None = None,
    latency_sheet: ApiLatencySheet | None = None,
    attached: dict[str, Attached] | None = None,
    dispersion_sheet: LatencyDispersionSheet | None = None,
) -> Decision:
    """Evaluate every option of the scenario and rank them (`capacity_cache`: share capacities across calls;
    `attached`: measurement files per option name, default read from the options' `calibration:` paths).

    Infeasible options (invalid, too long, retired, below the quality floor) are shown but never
    recommended; when every option is infeasible the recommendation is None with the reason stated."""
    api_sheet = api_sheet or load_api_prices()
    gpu_sheet = gpu_sheet or load_gpu_prices()
    over = overrides or Overrides()
    excluded = option_exclusions(
        scenario, api_sheet=api_sheet, gpu_offerings={r.id: r.accelerator_id for r in gpu_sheet.rows},
        model_ids=models().keys(), hardware_ids=accelerators().keys(),
    )
    if attached is None:  # an option whose measurement files cannot be used is excluded, the rest compared
        attached, unusable = load_attached(scenario, skip=tuple(excluded))
        excluded = with_hybrid_parts(scenario, {**excluded, **{
            name: Exclusion(kind="invalid_option", reason=reason) for name, reason in unusable.items()}})
    if all(e.kind == "invalid_option" for e in excluded.values()) and len(excluded) == len(scenario.options):
        raise CostmodelError("no option of the scenario can be evaluated: "
                             + "; ".join(f"{name}: {e.reason}" for name, e in excluded.items()))
    workload = scenario.workload
    if over.volume != 1.0:
        workload = _scaled_volume(workload, over.volume)
        scenario = scenario.model_copy(update={"workload": workload})
    today = scenario.evaluation_date(override=today)
    quality = quality_sheet or load_quality_scores(open_model_ids=open_model_ids(api_sheet))
    feasible = assess(scenario, api_sheet=api_sheet, quality=quality, as_of=today, skip=excluded.keys())
    latency = latency_sheet or load_api_latency()
    dispersion = dispersion_sheet or load_latency_dispersion()
    profile = workload.hourly_load_factors() or diurnal_profile(peak_to_mean=workload.peak_to_mean())
    results: dict[str, OptionResult] = {o.name: excluded_result(o, excluded[o.name]) for o in scenario.options
                                        if o.name in excluded}
    for option in scenario.options:
        if option.name in excluded:
            continue
        if isinstance(option, ApiOption):
            measured = measured_api_option(option, attached.get(option.name))
            results[option.name] = annotate(apply_exclusions(
                api_result(measured, scenario, api_sheet, today=today, api_price_scale=over.api_price, latency=latency,
                           dispersion=dispersion),
                retired=feasible.retired, below_floor=feasible.below_floor), attached.get(option.name))
    apis = [r for r in results.values() if r.kind == "api" and r.excluded_reason is None]
    open_models = {o.name: api_sheet.get(o.price_id).open_model_id for o in scenario.options
                   if isinstance(o, ApiOption) and o.name not in excluded}
    references = reference_apis(scenario, apis, open_models)
    capacities: dict[str, tuple[Capacity, str]] = {}
    for option in scenario.options:
        if isinstance(option, SelfHostOption) and option.name not in excluded:
            capacities[option.name] = self_host_capacity(scenario, option, calibration=calibration,
                                                         efficiency_scale=over.efficiency, method=capacity_method,
                                                         cache=capacity_cache, attached=attached.get(option.name))
            results[option.name] = annotate(self_host_result(
                option, scenario, gpu_sheet, capacities[option.name], reference=references.get(option.name),
                today=today, gpu_price_scale=over.gpu_price,
            ), attached.get(option.name))
    for option in scenario.options:
        if isinstance(option, HybridOption) and option.name not in excluded:
            results[option.name] = hybrid_result(
                option, scenario, profile=profile, self_host=results[option.self_host],
                capacity=capacities[option.self_host][0], api=results[option.api],
            )
    results = {name: named_reference(r, references.get(name)) for name, r in results.items()}
    horizons = option_horizons(scenario, results, capacities, profile=profile)
    marked = tuple(replace(apply_exclusions(r, retired=feasible.retired, below_floor=feasible.below_floor),
                           quality_score=feasible.quality_scores.get(r.name), retires_on=feasible.retirements.get(r.name))
                   for r in results.values())
    basis = _ranking_basis(scenario, marked, horizons)
    ranked = _within_substitutes(rank_options(tuple(_finite_or_excluded(with_ranking_cost(r, horizons, basis))
                                                    for r in marked),
                                              accept_unverified=scenario.accept_unverified_latency), scenario)
    change = ranking_change(ranked, horizons, accept_unverified=scenario.accept_unverified_latency)
    ranked = tuple(with_horizon(r, horizons[r.name], ranking_basis=basis)
                   if r.excluded_reason is None and r.name in horizons else r for r in ranked)
    horizon_reason = ranking_change_reason(change, as_of=today, horizon_months=scenario.horizon_months,
                                           growth_per_month=workload.growth_per_month)
    if ranked[0].excluded_reason is not None and all(r.excluded_kind == "non_finite_cost" for r in ranked):
        raise CostmodelError("no option has a finite cost per month; check the prices and volumes of every option")
    api_models = {o.name: api_sheet.get(o.price_id).model for o in scenario.options
                  if isinstance(o, ApiOption) and o.name not in excluded}
    chosen = recommend(ranked, scenario, api_models=api_models).chosen
    efficiency_sources = sorted({src for _, src in capacities.values()}) or ["no self-host options"]
    decision = Decision(
        scenario_name=scenario.name,
        options=ranked,
        recommendation=chosen.name if chosen is not None else None,
        recommendation_meets_slo=chosen is not None and chosen.meets_slo and not chosen.throttled,
        reasons=(),
        warnings=scenario_warnings(scenario, ranked, capacities={k: v[0] for k, v in capacities.items()},
                                   decision_as_of=today) + forced_warnings(attached),
        requests_per_month=workload.requests_per_month(),
        tokens_per_month=workload.tokens_per_month_total(),
        mean_prompt_tokens=workload.mean_prompt_tokens(),
        mean_output_tokens=workload.mean_output_tokens(),
        mean_requests_per_second=workload.mean_requests_per_second(),
        peak_requests_per_second=workload.mean_requests_per_second() * max(profile),
        hourly_profile=tuple(profile),
        efficiency_source="; ".join(efficiency_sources),
        calibration_source=calibration.source if calibration else None,
        as_of=today,
        horizon_months=scenario.horizon_months,
        quality_floor=feasible.floor,
        substitutes=tuple(tuple(g) for g in scenario.substitutes) if scenario.substitutes is not None else None,
        retiring_soon=tuple(feasible.retiring_soon.items()),
        ranking_change_month=change.month if change is not None else None,
        ranking_change_reason=horizon_reason,
        ranking_basis=basis,
    )
    decision = with_break_evens(decision, scenario, api_sheet=api_sheet)
    return _explained(decision, scenario, api_models=api_models,
                      horizon_reason=horizon_reason if change is not None else None)


def _explained(decision: Decision, scenario: Scenario, *, api_models: dict[str, str],
               horizon_reason: str | None) -> Decision:
    """The decision with its recommendation figures (verify first, premium) and the sentences that explain it."""
    pick = recommend(decision.options, scenario, api_models=api_models)
    reasons = ((*decision_reasons(decision.options, pick, total_tokens=decision.tokens_per_month), *([horizon_reason] if horizon_reason else []))
               if pick.chosen is not None else no_recommendation_reason(decision.options, pick))
    return replace(decision, reasons=reasons, cheaper_unverified=pick.cheaper_unverified,
                   recommendation_premium_usd_per_month=pick.premium_usd_per_month,
                   cheapest_usable=pick.cheapest_usable.name if pick.cheapest_usable is not None else None)


def _ranking_basis(scenario: Scenario, results: tuple[OptionResult, ...],
                   horizons: Mapping[str, OptionHorizon]) -> RankingBasis:
    """The horizon total with commitments when the scenario sets horizon_months and every usable option has
    one (decision/horizon.py); else $/month (no option is compared on a different basis from another)."""
    basis = horizon_ranking_basis(scenario)
    usable = [r for r in results if r.excluded_reason is None and math.isfinite(r.usd_per_month)]
    return basis if all(r.name in horizons for r in usable) else "usd_per_month"


def with_ranking_cost(result: OptionResult, horizons: Mapping[str, OptionHorizon], basis: RankingBasis) -> OptionResult:
    """The result with the horizon total with commitments it is ranked by (when the basis is the horizon)."""
    horizon = horizons.get(result.name)
    if horizon is None or result.excluded_reason is not None:
        return result
    total = sum(horizon.usd_by_month) + horizon.committed_after_horizon_usd
    return replace(result, usd_committed_after_horizon=horizon.committed_after_horizon_usd,
                   usd_horizon_total_with_commitments=total, ranking_basis=basis)


def _finite_or_excluded(result: OptionResult) -> OptionResult:
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


def _within_substitutes(ranked: tuple[OptionResult, ...], scenario: Scenario) -> tuple[OptionResult, ...]:
    """With `substitutes:` groups only one group competes (decision/quality.py `not_substitutes`): the others
    are excluded as `not_substitute` and the options re-ranked."""
    feasible = [(r.name, option_subject(scenario.option(r.name), scenario)) for r in ranked if r.excluded_reason is None]
    outside = not_substitutes(feasible, scenario=scenario)
    if not outside:
        return ranked
    marked = tuple(replace(r, excluded_reason=outside[r.name], excluded_kind="not_substitute",
                           excluded_kinds=("not_substitute",)) if r.name in outside else r for r in ranked)
    return rank_options(marked, accept_unverified=scenario.accept_unverified_latency)


def _scaled_volume(workload: Workload, factor: float) -> Workload:
    return scaled_workload(workload, factor)

