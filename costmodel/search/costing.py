"""The decision's cost and verdict of one searched configuration at its simulated capacity.

A candidate becomes a scenario option carrying the scenario's terms (search/scope.py: ops, host overrides,
warm-up) and is costed by the decision's own `self_host_result`, so a searched configuration costs what
`compare` says it costs, and its verdict is the decision's (`meets_slo` / `slo_status`, never recomputed here).
The breakdown splits the result's GPU line into the GPU-hours and, for owned GPUs, the host server's share,
both from the decision's one costing function (decision/plan.py `plan_cost`: the host's $/GPU-hour x the
owned replicas' GPU-hours, the fixed fleet or a mixed fleet's base). The cost the search ranks by is the
decision's horizon total with commitments per month, the month-0 fleet held constant (decision/commitment.py:
a reserved term past the horizon counts its committed tail; else usd_per_month itself).
"""

from __future__ import annotations

import datetime as dt

from costmodel.decision.commitment import committed_term_months, held_fleet_ranking_usd_per_month
from costmodel.decision.options import host_not_counted, self_host_result
from costmodel.pricing import GpuPriceRow, PriceSheet
from costmodel.scenario import Scenario, SelfHostOption
from costmodel.search.rows import Configuration
from costmodel.search.scope import SearchScope, option_terms
from costmodel.search.space import Candidate
from costmodel.serving.analytic import Capacity


def host_counted(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow]) -> bool:
    """False for an owned GPU whose host server has no figures (sheet or option): its cost leaves the host out,
    so it is never ranked (the decision's own rule, decision/options.py `host_not_counted`)."""
    return not host_not_counted(option, sheet)


def searched_option(scenario: Scenario, candidate: Candidate, *, name: str) -> SelfHostOption:
    """The candidate as the option `compare` would evaluate: the scenario's terms for its model and hardware."""
    return candidate.option(name=name, terms=option_terms(scenario, model=candidate.model,
                                                          hardware=candidate.hardware))


def ops_source(scenario: Scenario, candidate: Candidate) -> str:
    """Where the candidate's ops figures come from, for people."""
    return option_terms(scenario, model=candidate.model, hardware=candidate.hardware).ops_source


def configuration(scenario: Scenario, candidate: Candidate, capacity: tuple[Capacity, str], *,
                  gpu_sheet: PriceSheet[GpuPriceRow], today: dt.date, scope: SearchScope | None = None) -> Configuration:
    """The decision's cost and verdict of one candidate at its simulated capacity."""
    option = searched_option(scenario, candidate, name="search")
    result = self_host_result(option, scenario, gpu_sheet, capacity, reference=None, today=today)
    tpot = result.tpot_p90_seconds
    host = result.breakdown.host_usd_per_month
    c = candidate
    return Configuration(
        model=c.model, hardware=c.hardware, gpus_per_replica=c.gpus_per_replica, weight_dtype=c.weight_dtype,
        kv_dtype=c.kv_dtype, offering=c.offering, engine=c.engine, scaling=c.scaling,
        usd_per_month=result.usd_per_month, usd_per_mtok=result.usd_per_mtok,
        ranking_usd_per_month=held_fleet_ranking_usd_per_month(result, horizon_months=scenario.horizon_months),
        commitment_term_months=committed_term_months(result, horizon_months=scenario.horizon_months),
        tokens_per_second_per_user=1.0 / tpot if tpot and result.slo_status != "misses" else 0.0,
        ttft_p90_seconds=result.ttft_p90_seconds, meets_slo=result.meets_slo, slo_status=result.slo_status,
        replicas=result.replicas, gpus=result.gpus, capacity_requests_per_second=result.capacity_requests_per_second,
        batch=capacity[0].batch if capacity[0].feasible else None,
        quality_score=scope.quality_scores.get(c.model) if scope is not None else None,
        gpu_usd_per_month=result.breakdown.gpu_usd_per_month - host, host_usd_per_month=host,
        ops_usd_per_month=result.breakdown.ops_usd_per_month, ops_source=ops_source(scenario, c), host_counted=host_counted(option, gpu_sheet),
        excluded_kind=result.excluded_kind, mode_choice=c.mode)
