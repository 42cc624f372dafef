"""decide: scenario -> ranked options with SLO verdicts, the object `compare`, the app and the memo render.

`decide` runs named stages, each a small function here or in its own module:
1. validity (decision/validity.py): options that cannot be evaluated are shown with the reason, not compared;
2. feasibility (decision/feasibility.py `assess`): retirements, the quality floor, substitutes;
3. API options (decision/options.py): token charges, rate limits, latency evidence;
4. capacity (decision/capacity.py): each self-host option's capacity per replica at the SLO, found once;
5. fleet sizing and costing (decision/self_host.py): the option's plan (decision/terms.py) priced by the one
   costing function, decision/plan.py `plan_cost`, with its latency evidence (decision/evidence.py); hybrids
   on their base's plan (decision/hybrid.py);
6. the horizon (decision/horizon.py): the same plans costed month by month, reserved terms held;
7. ranking (decision/ranking.py): usable options by $/month or the horizon total with commitments (when
   horizon_months is set or a reserved term runs past the horizon);
8. recommendation (decision/recommend.py): the cheapest usable option that meets or likely meets the SLO, the
   cheaper unverified option to verify first, the premium, break-evens (decision/breakeven.py) and reasons.
The reference API for break-even is the cheapest feasible API option (of the same substitutes group).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, replace

from costmodel.catalog import accelerators
from costmodel.catalog.loader import model_ids
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
from costmodel.decision.feasibility import Feasibility, apply_exclusions, assess
from costmodel.decision.horizon import OptionHorizon, option_horizons, scaled_workload, with_horizon
from costmodel.decision.horizon_ranking import RankingChange, ranking_change, ranking_change_reason
from costmodel.decision.options import api_result, hybrid_result, self_host_result
from costmodel.decision.ranking import (
    finite_or_excluded,
    rank_options,
    ranking_basis,
    ranking_basis_reason,
    with_ranking_cost,
    within_substitutes,
)
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
from costmodel.scenario import ApiOption, HybridOption, Scenario, SelfHostOption
from costmodel.serving.analytic import Capacity

__all__ = ["CapacityCache", "CapacityMethod", "Overrides", "decide", "rank_options", "self_host_capacity"]


@dataclass(frozen=True)
class Overrides:
    """Multipliers for sensitivity analysis (1.0 = as given)."""

    gpu_price: float = 1.0
    api_price: float = 1.0
    efficiency: float = 1.0
    volume: float = 1.0


@dataclass(frozen=True, kw_only=True)
class _Sheets:
    """The data one decision reads (loaded once; tests and the app pass their own)."""

    api: PriceSheet[ApiPriceRow]
    gpu: PriceSheet[GpuPriceRow]
    latency: ApiLatencySheet
    dispersion: LatencyDispersionSheet


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
    """Evaluate every option of the scenario and rank them, stage by stage (module docstring;
    `capacity_cache`: share capacities across calls; `attached`: measurement files per option name, default
    read from the options' `calibration:` paths).

    Infeasible options (invalid, too long, retired, below the quality floor) are shown but never
    recommended; when every option is infeasible the recommendation is None with the reason stated."""
    api_sheet = api_sheet or load_api_prices()
    sheets = _Sheets(api=api_sheet, gpu=gpu_sheet or load_gpu_prices(), latency=latency_sheet or load_api_latency(),
                     dispersion=dispersion_sheet or load_latency_dispersion())
    over = overrides or Overrides()
    excluded, attached = _evaluable(scenario, sheets, attached)
    if over.volume != 1.0:
        scenario = scenario.model_copy(update={"workload": scaled_workload(scenario.workload, over.volume)})
    today = scenario.evaluation_date(override=today)
    quality = quality_sheet or load_quality_scores(open_model_ids=open_model_ids(api_sheet))
    feasible = assess(scenario, api_sheet=api_sheet, quality=quality, as_of=today, skip=excluded.keys())
    workload = scenario.workload
    profile = workload.hourly_load_factors() or diurnal_profile(peak_to_mean=workload.peak_to_mean())
    results: dict[str, OptionResult] = {o.name: excluded_result(o, excluded[o.name]) for o in scenario.options
                                        if o.name in excluded}
    results.update(_api_results(scenario, sheets, excluded=excluded, attached=attached, feasible=feasible,
                                today=today, api_price_scale=over.api_price))
    references = reference_apis(scenario, [r for r in results.values() if r.kind == "api" and r.excluded_reason is None],
                                {o.name: api_sheet.get(o.price_id).open_model_id for o in scenario.options
                                 if isinstance(o, ApiOption) and o.name not in excluded})
    capacities = _capacities(scenario, excluded=excluded, attached=attached, calibration=calibration,
                             efficiency_scale=over.efficiency, method=capacity_method, cache=capacity_cache)
    for option in scenario.options:  # fleet sizing and costing: the plan priced by plan_cost, with its evidence
        if isinstance(option, SelfHostOption) and option.name in capacities:
            results[option.name] = annotate(self_host_result(
                option, scenario, sheets.gpu, capacities[option.name], reference=references.get(option.name),
                today=today, gpu_price_scale=over.gpu_price,
            ), attached.get(option.name))
    results.update(_hybrid_results(scenario, results, capacities, excluded=excluded, profile=profile))
    results = {name: named_reference(r, references.get(name)) for name, r in results.items()}
    horizons = option_horizons(scenario, results, capacities, profile=profile)
    ranked, (basis, basis_reason), change = _ranked(scenario, results, horizons, feasible=feasible)
    api_models = {o.name: api_sheet.get(o.price_id).model for o in scenario.options
                  if isinstance(o, ApiOption) and o.name not in excluded}
    decision = _recommended(scenario, ranked, capacities, api_models=api_models, today=today, feasible=feasible,
                            profile=profile, basis=basis, change=change, attached=attached, calibration=calibration)
    decision = replace(with_break_evens(decision, scenario, api_sheet=api_sheet), ranking_basis_reason=basis_reason)
    return _explained(decision, scenario, api_models=api_models,
                      horizon_reason=decision.ranking_change_reason if change is not None else None)


def _evaluable(scenario: Scenario, sheets: _Sheets,
               attached: dict[str, Attached] | None) -> tuple[dict[str, Exclusion], dict[str, Attached]]:
    """Stage 1, validity: the options that cannot be evaluated (with why) and the measurement files of the rest."""
    excluded = option_exclusions(
        scenario, api_sheet=sheets.api, gpu_offerings={r.id: r.accelerator_id for r in sheets.gpu.rows},
        model_ids=model_ids(), hardware_ids=accelerators().keys(),
    )
    if attached is None:  # an option whose measurement files cannot be used is excluded, the rest compared
        attached, unusable = load_attached(scenario, skip=tuple(excluded))
        excluded = with_hybrid_parts(scenario, {**excluded, **{
            name: Exclusion(kind="invalid_option", reason=reason) for name, reason in unusable.items()}})
    if all(e.kind == "invalid_option" for e in excluded.values()) and len(excluded) == len(scenario.options):
        raise CostmodelError("no option of the scenario can be evaluated: "
                             + "; ".join(f"{name}: {e.reason}" for name, e in excluded.items()))
    return excluded, attached


def _api_results(scenario: Scenario, sheets: _Sheets, *, excluded: Mapping[str, Exclusion],
                 attached: Mapping[str, Attached], feasible: Feasibility, today: dt.date,
                 api_price_scale: float) -> dict[str, OptionResult]:
    """Stage 3, API options: token charges, rate limits and latency evidence, retirements and the floor marked."""
    out = {}
    for option in scenario.options:
        if isinstance(option, ApiOption) and option.name not in excluded:
            measured = measured_api_option(option, attached.get(option.name))
            out[option.name] = annotate(apply_exclusions(
                api_result(measured, scenario, sheets.api, today=today, api_price_scale=api_price_scale,
                           latency=sheets.latency, dispersion=sheets.dispersion),
                retired=feasible.retired, below_floor=feasible.below_floor), attached.get(option.name))
    return out


def _capacities(scenario: Scenario, *, excluded: Mapping[str, Exclusion], attached: Mapping[str, Attached],
                calibration: Calibration | None, efficiency_scale: float, method: CapacityMethod,
                cache: CapacityCache | None) -> dict[str, tuple[Capacity, str]]:
    """Stage 4, capacity: each evaluable self-host option's capacity per replica at the SLO and its source."""
    return {option.name: self_host_capacity(scenario, option, calibration=calibration, efficiency_scale=efficiency_scale,
                                            method=method, cache=cache, attached=attached.get(option.name))
            for option in scenario.options if isinstance(option, SelfHostOption) and option.name not in excluded}


def _hybrid_results(scenario: Scenario, results: Mapping[str, OptionResult],
                    capacities: Mapping[str, tuple[Capacity, str]], *, excluded: Mapping[str, Exclusion],
                    profile: tuple[float, ...]) -> dict[str, OptionResult]:
    """Stage 5, hybrids: base replicas of the self-host option's plan, the overflow to its API."""
    return {option.name: hybrid_result(option, scenario, profile=profile, self_host=results[option.self_host],
                                       capacity=capacities[option.self_host][0], api=results[option.api])
            for option in scenario.options if isinstance(option, HybridOption) and option.name not in excluded}


def _ranked(scenario: Scenario, results: Mapping[str, OptionResult], horizons: Mapping[str, OptionHorizon], *,
            feasible: Feasibility) -> tuple[tuple[OptionResult, ...], tuple[RankingBasis, str], RankingChange | None]:
    """Stage 7, ranking: exclusions marked, options ranked on one basis within one substitutes group, the month
    the ranking changes, and each usable option's horizon figures; the basis comes with why."""
    marked = tuple(replace(apply_exclusions(r, retired=feasible.retired, below_floor=feasible.below_floor),
                           quality_score=feasible.quality_scores.get(r.name), retires_on=feasible.retirements.get(r.name))
                   for r in results.values())
    basis = ranking_basis(scenario, marked, horizons)
    ranked = within_substitutes(rank_options(tuple(finite_or_excluded(with_ranking_cost(r, horizons, basis))
                                                   for r in marked),
                                             accept_unverified=scenario.accept_unverified_latency), scenario)
    change = ranking_change(ranked, horizons, accept_unverified=scenario.accept_unverified_latency)
    ranked = tuple(with_horizon(r, horizons[r.name], ranking_basis=basis)
                   if r.excluded_reason is None and r.name in horizons else r for r in ranked)
    if ranked[0].excluded_reason is not None and all(r.excluded_kind == "non_finite_cost" for r in ranked):
        raise CostmodelError("no option has a finite cost per month; check the prices and volumes of every option")
    return ranked, (basis, ranking_basis_reason(scenario, marked, horizons)), change


def _recommended(scenario: Scenario, ranked: tuple[OptionResult, ...], capacities: Mapping[str, tuple[Capacity, str]],
                 *, api_models: dict[str, str], today: dt.date, feasible: Feasibility, profile: tuple[float, ...],
                 basis: RankingBasis, change: RankingChange | None, attached: Mapping[str, Attached],
                 calibration: Calibration | None) -> Decision:
    """Stage 8, recommendation: the chosen option and the decision object with its warnings and workload figures."""
    workload = scenario.workload
    chosen = recommend(ranked, scenario, api_models=api_models).chosen
    efficiency_sources = sorted({src for _, src in capacities.values()}) or ["no self-host options"]
    return Decision(
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
        ranking_change_reason=ranking_change_reason(change, as_of=today, horizon_months=scenario.horizon_months,
                                                    growth_per_month=workload.growth_per_month),
        ranking_basis=basis,
    )


def _explained(decision: Decision, scenario: Scenario, *, api_models: dict[str, str],
               horizon_reason: str | None) -> Decision:
    """The decision with its recommendation figures (verify first, premium) and the sentences that explain it."""
    pick = recommend(decision.options, scenario, api_models=api_models)
    reasons = ((*decision_reasons(decision.options, pick, total_tokens=decision.tokens_per_month), *([horizon_reason] if horizon_reason else []))
               if pick.chosen is not None else no_recommendation_reason(decision.options, pick))
    return replace(decision, reasons=reasons, cheaper_unverified=pick.cheaper_unverified,
                   recommendation_premium_usd_per_month=pick.premium_usd_per_month,
                   recommendation_premium_usd_with_commitments=pick.premium_usd_with_commitments,
                   cheapest_usable=pick.cheapest_usable.name if pick.cheapest_usable is not None else None)
