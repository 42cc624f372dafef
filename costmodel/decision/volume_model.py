"""The volume sweep's inputs, taken once from an evaluated `Decision` (decision/volume.py re-costs them).

Per option: an API's prompt and output $/request and the volume multiples at which its per-minute limits
bind; a self-host option's plan (`OptionResult.plan`, decision/plan.py), capacity at the SLO, prefill share
of GPU time and p90 figures; a hybrid's base plan and API. Nothing is recovered from finished costs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from costmodel.decision.plan import OptionPlan
from costmodel.decision.results import Decision, OptionResult
from costmodel.pricing import ApiPriceRow, PriceSheet, load_api_prices
from costmodel.pricing.api_cost import api_option_cost
from costmodel.scenario import ApiOption, HybridOption, Scenario, SelfHostOption


@dataclass(frozen=True)
class Scaling:
    """Multipliers applied to the month-0 inputs (1.0 = as evaluated)."""

    volume: float = 1.0  # requests per month (and so utilization at fixed replicas)
    usd_per_gpu_hour: float = 1.0
    api_usd_per_mtok: float = 1.0
    throughput: float = 1.0  # capacity per replica at the SLO (efficiency)
    prompt_tokens: float = 1.0  # mean prompt tokens per request
    output_tokens: float = 1.0  # mean output tokens per request
    capacity_factors: tuple[tuple[str, float], ...] = ()  # (self-host option, capacity multiplier); 0 = infeasible


@dataclass(frozen=True)
class OptionCost:
    """What one option's $/month depends on: an API's prices and limits, or a self-host option's plan."""

    name: str
    kind: str
    meets_slo: bool
    api_usd_per_request_prompt: float = 0.0  # API: prompt share of $/request at month 0
    api_usd_per_request_output: float = 0.0
    requests_limit_volume_scale: float = math.inf  # API: volume multiple at which requests/min hit the limit
    tokens_limit_volume_scale: float = math.inf  # API: same for tokens/min (at the month-0 token mix)
    prompt_token_share: float = 0.0  # prompt tokens / (prompt + output tokens) per request
    ops_usd_per_month: float = 0.0  # API: its ops line (self-host ops are the plan's)
    plan: OptionPlan | None = None  # self-host, and a hybrid's base (decision/plan.py)
    capacity_requests_per_second: float = 0.0  # per replica at the SLO; 0 = no load meets the SLO
    prefill_time_fraction: float = 0.0  # share of a replica's GPU time spent on prompt tokens
    ttft_p90_seconds: float = 0.0  # with TPOT p90 and the output length: the work a spot interruption redoes
    tpot_p90_seconds: float = 0.0
    base: str | None = None  # hybrid: the self-host option it keeps
    api: str | None = None  # hybrid: the API option that takes the overflow


@dataclass(frozen=True)
class CostModel:
    """Everything needed to re-run the month-0 economics of every option under a `Scaling`."""

    options: tuple[OptionCost, ...]
    recommendation: str
    mean_requests_per_second: float
    peak_requests_per_second: float
    hourly_profile: tuple[float, ...]
    mean_prompt_tokens: float
    mean_output_tokens: float
    tokens_per_month: float
    # Infeasible options a feasible hybrid is built from (its base or its API): priced, never competing.
    parts: tuple[OptionCost, ...] = ()
    # What the decision ranks by (decision/ranking.py) and the horizon it sums over (decision/volume_horizon.py).
    ranking_basis: str = "usd_per_month"
    horizon_months: int = 12
    growth_per_month: float = 0.0

    def option(self, name: str) -> OptionCost:
        """The option with this name (a feasible option, or a part of a feasible hybrid)."""
        for option in (*self.options, *self.parts):
            if option.name == name:
                return option
        raise KeyError(name)


def _share(part: float, whole: float) -> float:
    return part / whole if whole > 0 and math.isfinite(whole) and math.isfinite(part) else 0.0


def _api_cost(result: OptionResult, option: ApiOption, decision: Decision, scenario: Scenario,
              sheet: PriceSheet[ApiPriceRow]) -> OptionCost:
    per_request = result.api_usd_per_request
    if per_request is None:
        per_request = _share(result.breakdown.api_usd_per_month, decision.requests_per_month)
    prompt_usd = result.usd_per_mtok_input * decision.mean_prompt_tokens
    prompt_share = _share(prompt_usd, prompt_usd + result.usd_per_mtok_output * decision.mean_output_tokens)
    limits = api_option_cost(option, scenario.workload, sheet, slo=scenario.slo).rate_limit
    # A batch-API route has no per-minute limit: check_rate_limits never throttles it.
    batch = limits.batch

    def headroom(limit: int | None, demand: float) -> float:
        return math.inf if batch or limit is None or demand <= 0 else limit / demand

    return OptionCost(
        name=result.name, kind=result.kind, meets_slo=result.meets_slo,
        api_usd_per_request_prompt=per_request * prompt_share,
        api_usd_per_request_output=per_request * (1.0 - prompt_share),
        requests_limit_volume_scale=headroom(limits.requests_per_minute_limit, limits.peak_requests_per_minute),
        tokens_limit_volume_scale=headroom(limits.tokens_per_minute_limit, limits.peak_tokens_per_minute),
        prompt_token_share=_share(decision.mean_prompt_tokens, decision.mean_prompt_tokens + decision.mean_output_tokens),
        ops_usd_per_month=result.breakdown.ops_usd_per_month,
    )


def _self_host_cost(result: OptionResult, decision: Decision) -> OptionCost:
    assert result.plan is not None  # every evaluated self-host result carries its plan
    prompt_usd = result.usd_per_mtok_input * decision.mean_prompt_tokens
    return OptionCost(
        name=result.name, kind=result.kind, meets_slo=result.meets_slo, plan=result.plan,
        capacity_requests_per_second=result.capacity_requests_per_second or 0.0,
        prefill_time_fraction=_share(prompt_usd, prompt_usd + result.usd_per_mtok_output * decision.mean_output_tokens),
        ttft_p90_seconds=result.ttft_p90_seconds or 0.0, tpot_p90_seconds=result.tpot_p90_seconds or 0.0,
    )


def cost_model(decision: Decision, scenario: Scenario, *, api_sheet: PriceSheet[ApiPriceRow] | None = None) -> CostModel:
    """The economics inputs of every evaluated option (hybrids and rate limits resolved through the scenario)."""
    sheet = api_sheet or load_api_prices()
    costs: dict[str, OptionCost] = {}
    usable = {r.name for r in decision.usable_options}
    hybrid_parts = {part for r in decision.usable_options if isinstance(o := scenario.option(r.name), HybridOption)
                    for part in (o.self_host, o.api)}
    for result in decision.options:
        if result.name not in usable and result.name not in hybrid_parts:
            continue
        option = scenario.option(result.name)
        if isinstance(option, ApiOption):
            costs[result.name] = _api_cost(result, option, decision, scenario, sheet)
        elif result.kind == "self-host" and isinstance(option, SelfHostOption) and result.plan is not None:
            costs[result.name] = _self_host_cost(result, decision)
    for result in decision.usable_options:
        option = scenario.option(result.name)
        if isinstance(option, HybridOption):
            base = costs[option.self_host]
            costs[result.name] = replace(base, name=result.name, kind="hybrid", meets_slo=result.meets_slo,
                                         base=option.self_host, api=option.api)
    return CostModel(
        options=tuple(costs[r.name] for r in decision.usable_options), recommendation=decision.recommendation or "",
        parts=tuple(costs[name] for name in sorted(hybrid_parts - usable)),
        mean_requests_per_second=decision.mean_requests_per_second,
        peak_requests_per_second=decision.peak_requests_per_second, hourly_profile=decision.hourly_profile,
        mean_prompt_tokens=decision.mean_prompt_tokens, mean_output_tokens=decision.mean_output_tokens,
        tokens_per_month=decision.tokens_per_month, ranking_basis=decision.ranking_basis,
        horizon_months=decision.horizon_months, growth_per_month=scenario.workload.growth_per_month,
    )
