"""The `compare --json` contract of the decision object: the keys each result dataclass renders to.

DESIGN.md names these keys (add freely, never rename or drop one); they are spelled here, once, and
`OptionResult.contract`, `CheaperUnverified.contract` and `Decision.contract` (costmodel.decision.results)
return what these functions build. The dataclasses themselves, and what their fields mean, live there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # results.py imports this module to delegate its contract() methods
    from costmodel.decision.results import CheaperUnverified, Decision, OptionResult


def option_contract(option: OptionResult) -> dict[str, object]:
    """DESIGN.md `compare --json` keys for one option, plus details."""
    return {
        "latency_owner": option.latency_owner,
        "name": option.name,
        "kind": option.kind,
        "usd_per_month": option.usd_per_month,
        "usd_per_mtok": option.usd_per_mtok,
        "usd_per_mtok_input": option.usd_per_mtok_input,
        "usd_per_mtok_output": option.usd_per_mtok_output,
        "meets_slo": option.meets_slo,
        "slo_reason": option.slo_reason,
        "ttft_p90_seconds": option.ttft_p90_seconds,
        "tpot_p90_seconds": option.tpot_p90_seconds,
        "ttft_p90_seconds_low": option.ttft_p90_seconds_low,
        "ttft_p90_seconds_high": option.ttft_p90_seconds_high,
        "tpot_p90_seconds_low": option.tpot_p90_seconds_low,
        "tpot_p90_seconds_high": option.tpot_p90_seconds_high,
        "latency_basis": option.latency_basis,
        "engine": option.engine,
        "gpus": option.gpus,
        "replicas": option.replicas,
        "utilization": option.utilization,
        "break_even_utilization": option.break_even_utilization,
        "break_even_tokens_per_month": option.break_even_tokens_per_month,
        "break_even_against": option.break_even_against,
        "throttled": option.throttled,
        "priced_via_batch_api": option.priced_via_batch_api,
        "capacity_requests_per_second": option.capacity_requests_per_second,
        "gpu_usd_per_month": option.breakdown.gpu_usd_per_month,
        "api_usd_per_month": option.breakdown.api_usd_per_month,
        "ops_usd_per_month": option.breakdown.ops_usd_per_month,
        "price_sources": [ps.__dict__ for ps in option.price_sources],
        "notes": list(option.notes),
        "excluded_reason": option.excluded_reason,
        "excluded_kind": option.excluded_kind,
        "excluded_kinds": list(option.excluded_kinds or ((option.excluded_kind,) if option.excluded_kind else ())),
        "slo_status": option.slo_status,
        "latency_source": option.latency_source,
        "quality_score": option.quality_score,
        "retires_on": option.retires_on.isoformat() if option.retires_on else None,
        "min_replicas": option.min_replicas,
        "target_peak_utilization": option.target_peak_utilization,
        "spare_replicas": option.spare_replicas,
        "fleet_reason": option.fleet_reason,
        "scaling": option.scaling,
        "replicas_by_hour": list(option.replicas_by_hour) if option.replicas_by_hour is not None else None,
        "gpu_hours_per_month": option.gpu_hours_per_month,
        "usd_by_month": list(option.usd_by_month) if option.usd_by_month is not None else None,
        "usd_horizon_total": option.usd_horizon_total,
        "usd_committed_after_horizon": option.usd_committed_after_horizon,
        "usd_horizon_total_with_commitments": option.usd_horizon_total_with_commitments,
        "ranking_basis": option.ranking_basis,
        "calibrations": list(option.calibrations),
        "calibration_forced": option.calibration_forced,
        "base_replicas": option.base_replicas,
        "burst_replicas_by_hour": (list(option.burst_replicas_by_hour)
                                   if option.burst_replicas_by_hour is not None else None),
        "ops_usd_per_gpu_month": option.ops_usd_per_gpu_month,
        "host_not_counted": option.host_not_counted,
        "instances": option.instances,
        "gpus_billed": option.gpus_billed,
        "gpus_per_instance": option.gpus_per_instance,
    }


def cheaper_unverified_contract(cheaper: CheaperUnverified) -> dict[str, object]:
    """`compare --json` `cheaper_unverified` object."""
    return {"option": cheaper.option, "usd_per_month": cheaper.usd_per_month,
            "saving_usd_per_month": cheaper.saving_usd_per_month, "saving_fraction": cheaper.saving_fraction,
            "check": cheaper.check, "saving_usd_with_commitments": cheaper.saving_usd_with_commitments}


def decision_contract(decision: Decision) -> dict[str, object]:
    """DESIGN.md `compare --json` object."""
    return {
        "scenario": decision.scenario_name,
        "as_of": decision.as_of.isoformat() if decision.as_of else None,
        "horizon_months": decision.horizon_months,
        "ranking_change_month": decision.ranking_change_month,
        "ranking_change_reason": decision.ranking_change_reason,
        "quality_floor": decision.quality_floor.contract() if decision.quality_floor else None,
        "substitutes": [list(g) for g in decision.substitutes] if decision.substitutes is not None else None,
        "options": [o.contract() for o in decision.options],
        "recommendation": decision.recommendation,
        "recommendation_meets_slo": decision.recommendation_meets_slo,
        "recommendation_premium_usd_per_month": decision.recommendation_premium_usd_per_month,
        "recommendation_premium_usd_with_commitments": decision.recommendation_premium_usd_with_commitments,
        "cheapest_usable": decision.cheapest_usable,
        "cheaper_unverified": decision.cheaper_unverified.contract() if decision.cheaper_unverified else None,
        "reasons": list(decision.reasons),
        "warnings": list(decision.warnings),
        "requests_per_month": decision.requests_per_month,
        "tokens_per_month": decision.tokens_per_month,
        "peak_requests_per_second": decision.peak_requests_per_second,
        "efficiency_source": decision.efficiency_source,
        "ranking_basis": decision.ranking_basis,
        "ranking_basis_reason": decision.ranking_basis_reason,
    }
