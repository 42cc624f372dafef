"""Evaluate one option of a scenario into an OptionResult (API, self-host, hybrid)."""

from __future__ import annotations

import datetime as dt

from costmodel.capacity import Capacity
from costmodel.decision_types import CostBreakdown, OptionResult, PriceSource
from costmodel.economics import (
    HOURS_PER_MONTH,
    SECONDS_PER_MONTH,
    break_even_tokens_per_month,
    break_even_utilization,
    plan_hybrid,
    size_self_host,
)
from costmodel.pricing import ApiPriceRow, GpuPriceRow, PriceSheet
from costmodel.pricing.api_cost import api_option_cost, token_rates
from costmodel.scenario import ApiOption, HybridOption, Scenario, SelfHostOption
from costmodel.units import fmt_seconds

MTOK = 1e6


def _source(what: str, source: str, row: ApiPriceRow | GpuPriceRow, today: dt.date) -> PriceSource:
    """Provenance of a sheet price; its age counts from the price's own date (price_as_of, else checked)."""
    return PriceSource(what=what, source=source, checked=row.checked.isoformat(),
                       age_days=(today - row.price_date).days,
                       price_as_of=row.price_as_of.isoformat() if row.price_as_of else None)


def api_slo(option: ApiOption, scenario: Scenario) -> tuple[bool, str]:
    """Verdict from the option's measured/published latency; unmeasured latency is flagged, not assumed."""
    slo = scenario.slo
    if option.ttft_p90_seconds is None or option.tpot_p90_seconds is None:
        return True, ("not verified: no measured latency for this API (run `costmodel probe-endpoint` and set "
                      "ttft_p90_seconds / tpot_p90_seconds); assumed to meet the SLO")
    problems = []
    if option.ttft_p90_seconds > slo.ttft_p90_seconds:
        problems.append(f"TTFT p90 {fmt_seconds(option.ttft_p90_seconds)} > {fmt_seconds(slo.ttft_p90_seconds)}")
    if option.tpot_p90_seconds > slo.tpot_p90_seconds:
        problems.append(f"TPOT p90 {fmt_seconds(option.tpot_p90_seconds)} > {fmt_seconds(slo.tpot_p90_seconds)}")
    if problems:
        return False, "misses the SLO: " + "; ".join(problems)
    return True, "meets the SLO (measured/published API latency)"


def api_result(option: ApiOption, scenario: Scenario, sheet: PriceSheet[ApiPriceRow], *, today: dt.date,
               api_price_scale: float = 1.0) -> OptionResult:
    """An API option: token charges for the month, rate limits, latency verdict."""
    workload = scenario.workload
    cost = api_option_cost(option, workload, sheet)
    row = sheet.get(option.price_id)
    usd_month = cost.usd_per_month * api_price_scale
    # Split by rate: output tokens at the (batch) output rate, weighted by the share of requests in the
    # long-context tier (whose output rate is higher); the rest is the prompt side.
    base = token_rates(row, long_context=False, batch=cost.batch).output_usd_per_mtok
    p_long = cost.long_context_request_fraction
    output_rate = base * (1 - p_long) + token_rates(row, long_context=True, batch=cost.batch).output_usd_per_mtok * p_long
    output_usd = cost.output_tokens_per_month * output_rate / MTOK * api_price_scale
    prompt_tokens = cost.tokens_per_month - cost.output_tokens_per_month
    meets, reason = api_slo(option, scenario)
    notes = [cost.rate_limit.reason]
    if cost.batch:
        notes.append("priced through the batch API (results within 24 h)")
    if cost.long_context_request_fraction > 0:
        notes.append(f"{cost.long_context_request_fraction:.0%} of requests pay the long-context rates")
    if row.is_retired(today=today):
        notes.append(f"RETIRED: the provider retired this model on {row.deprecation_date}; pick a live row")
    if row.disagreement:
        notes.append(f"price sources disagree: {row.disagreement}")
    return OptionResult(
        name=option.name, kind="api", usd_per_month=usd_month, usd_per_mtok=usd_month / cost.tokens_per_month * MTOK,
        usd_per_mtok_input=(usd_month - output_usd) / prompt_tokens * MTOK if prompt_tokens else 0.0,
        usd_per_mtok_output=output_usd / cost.output_tokens_per_month * MTOK,
        meets_slo=meets, slo_reason=reason, ttft_p90_seconds=option.ttft_p90_seconds,
        tpot_p90_seconds=option.tpot_p90_seconds, gpus=0, replicas=0, utilization=None,
        break_even_utilization=None, break_even_tokens_per_month=None, break_even_against=None,
        throttled=cost.rate_limit.throttled, capacity_requests_per_second=None, tokens_per_second_per_replica=None,
        breakdown=CostBreakdown(api_usd_per_month=usd_month),
        price_sources=(_source(f"API price {row.id}", f"{row.source} {row.source_version}", row, today),),
        notes=tuple(notes), api_usd_per_request=cost.usd_per_request * api_price_scale,
    )


def gpu_price(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow], *, today: dt.date) -> tuple[float, PriceSource]:
    """USD per GPU-hour (override or the offering's all-in price) and where it comes from."""
    if option.usd_per_gpu_hour is not None:
        return option.usd_per_gpu_hour, PriceSource(
            what=f"GPU price for {option.name}", source="scenario override", checked=today.isoformat(), age_days=0
        )
    assert option.offering is not None  # validated by the scenario schema
    row = sheet.get(option.offering)
    return row.all_in_usd_per_gpu_hour(), _source(f"GPU offering {row.id}", row.source, row, today)


def self_host_result(option: SelfHostOption, scenario: Scenario, sheet: PriceSheet[GpuPriceRow],
                     capacity_and_source: tuple[Capacity, str], *, reference: OptionResult | None, today: dt.date,
                     gpu_price_scale: float = 1.0) -> OptionResult:
    """A self-host option sized for the peak hour from its capacity at the SLO."""
    capacity, efficiency_source = capacity_and_source
    workload = scenario.workload
    usd_per_gpu_hour, source = gpu_price(option, sheet, today=today)
    usd_per_gpu_hour *= gpu_price_scale
    tokens_per_request = workload.mean_tokens_per_request()
    common = {"name": option.name, "kind": "self-host", "model_id": option.model, "hardware_id": option.hardware,
              "gpus_per_replica": option.gpus_per_replica, "usd_per_gpu_hour": usd_per_gpu_hour,
              "price_sources": (source,), "efficiency_source": efficiency_source,
              "ttft_p90_seconds": capacity.ttft_seconds or None, "tpot_p90_seconds": capacity.tpot_seconds or None}
    if not capacity.feasible:
        replica_usd = option.gpus_per_replica * usd_per_gpu_hour * HOURS_PER_MONTH
        return OptionResult(
            **common, usd_per_month=replica_usd + option.ops_usd_per_month, usd_per_mtok=float("inf"),  # type: ignore[arg-type]
            usd_per_mtok_input=float("inf"), usd_per_mtok_output=float("inf"), meets_slo=False,
            slo_reason=f"cannot meet the SLO at any load: {capacity.reason}", gpus=option.gpus_per_replica, replicas=1,
            utilization=None, break_even_utilization=None, break_even_tokens_per_month=None, break_even_against=None,
            throttled=False, capacity_requests_per_second=0.0, tokens_per_second_per_replica=0.0,
            breakdown=CostBreakdown(gpu_usd_per_month=replica_usd, ops_usd_per_month=option.ops_usd_per_month),
        )
    cost = size_self_host(
        mean_requests_per_second=workload.mean_requests_per_second(),
        peak_requests_per_second=workload.peak_requests_per_second(),
        capacity_requests_per_second=capacity.requests_per_second, tokens_per_request=tokens_per_request,
        gpus_per_replica=option.gpus_per_replica, usd_per_gpu_hour=usd_per_gpu_hour,
        ops_usd_per_month=option.ops_usd_per_month,
    )
    tokens_month = workload.tokens_per_month_total()
    output_month = workload.output_tokens_per_month()
    input_usd = cost.usd_per_month * capacity.prefill_time_fraction
    u_star = be_volume = None
    if reference is not None:
        u_star = break_even_utilization(usd_per_gpu_hour=usd_per_gpu_hour, gpus_per_replica=option.gpus_per_replica,
                                        tokens_per_second_per_replica=cost.tokens_per_second_per_replica,
                                        api_usd_per_mtok=reference.usd_per_mtok,
                                        ops_usd_per_month=option.ops_usd_per_month, replicas=cost.replicas)
        peak_to_mean = workload.peak_to_mean()
        be_volume = break_even_tokens_per_month(
            replica_usd_per_month=option.gpus_per_replica * usd_per_gpu_hour * HOURS_PER_MONTH,
            ops_usd_per_month=option.ops_usd_per_month,
            tokens_per_month_per_replica_at_peak=cost.tokens_per_second_per_replica * SECONDS_PER_MONTH / peak_to_mean,
            api_usd_per_mtok=reference.usd_per_mtok,
        )
    return OptionResult(
        **common, usd_per_month=cost.usd_per_month, usd_per_mtok=cost.usd_per_mtok,  # type: ignore[arg-type]
        usd_per_mtok_input=input_usd / (tokens_month - output_month) * MTOK,
        usd_per_mtok_output=(cost.usd_per_month - input_usd) / output_month * MTOK,
        meets_slo=True, slo_reason=f"{capacity.reason}; sized for the peak hour at {capacity.requests_per_second:.2f} "
        f"requests/s per replica (batch {capacity.batch})",
        gpus=cost.gpus, replicas=cost.replicas, utilization=cost.utilization, break_even_utilization=u_star,
        break_even_tokens_per_month=be_volume, break_even_against=reference.name if reference else None,
        throttled=False, capacity_requests_per_second=capacity.requests_per_second,
        tokens_per_second_per_replica=cost.tokens_per_second_per_replica,
        breakdown=CostBreakdown(gpu_usd_per_month=cost.gpu_usd_per_month, ops_usd_per_month=cost.ops_usd_per_month),
        notes=(f"capacity method: {capacity.method}",),
    )


def hybrid_result(option: HybridOption, scenario: Scenario, *, profile: tuple[float, ...], self_host: OptionResult,
                  capacity: Capacity, api: OptionResult) -> OptionResult:
    """Base replicas of the self-host option, overflow to the API, base count minimizing $/month."""
    workload = scenario.workload
    assert self_host.usd_per_gpu_hour is not None and self_host.gpus_per_replica is not None
    assert api.api_usd_per_request is not None
    replica_usd = self_host.gpus_per_replica * self_host.usd_per_gpu_hour * HOURS_PER_MONTH
    plan = plan_hybrid(
        mean_requests_per_second=workload.mean_requests_per_second(), hourly_profile=profile,
        capacity_requests_per_second=capacity.requests_per_second if capacity.feasible else 0.0,
        replica_usd_per_month=replica_usd, ops_usd_per_month=self_host.breakdown.ops_usd_per_month,
        api_usd_per_request=api.api_usd_per_request,
        max_base_replicas=self_host.replicas if capacity.feasible else 0,
    )
    meets = api.meets_slo and (capacity.feasible or plan.base_replicas == 0)
    reason = (f"{plan.base_replicas} base replica(s) of {self_host.name} serve {1 - plan.overflow_fraction:.0%} of "
              f"requests; the rest overflow to {api.name} ({api.slo_reason})")
    tokens_month = workload.tokens_per_month_total()
    return OptionResult(
        name=option.name, kind="hybrid", usd_per_month=plan.usd_per_month,
        usd_per_mtok=plan.usd_per_month / tokens_month * MTOK,
        usd_per_mtok_input=float("nan"), usd_per_mtok_output=float("nan"), meets_slo=meets, slo_reason=reason,
        ttft_p90_seconds=self_host.ttft_p90_seconds if plan.base_replicas else api.ttft_p90_seconds,
        tpot_p90_seconds=self_host.tpot_p90_seconds if plan.base_replicas else api.tpot_p90_seconds,
        gpus=plan.base_replicas * self_host.gpus_per_replica, replicas=plan.base_replicas,
        utilization=plan.utilization if plan.base_replicas else None, break_even_utilization=None,
        break_even_tokens_per_month=None, break_even_against=None, throttled=api.throttled and plan.overflow_fraction > 0,
        capacity_requests_per_second=capacity.requests_per_second if capacity.feasible else None,
        tokens_per_second_per_replica=self_host.tokens_per_second_per_replica,
        breakdown=type(self_host.breakdown)(gpu_usd_per_month=plan.self_host_usd_per_month - (
            self_host.breakdown.ops_usd_per_month if plan.base_replicas else 0.0),
            api_usd_per_month=plan.api_usd_per_month,
            ops_usd_per_month=self_host.breakdown.ops_usd_per_month if plan.base_replicas else 0.0),
        price_sources=self_host.price_sources + api.price_sources,
        notes=(f"overflow to the API: {plan.overflow_fraction:.1%} of requests" if plan.base_replicas else
               f"no base replica pays off: every request goes to {api.name}",),
        model_id=self_host.model_id, hardware_id=self_host.hardware_id, gpus_per_replica=self_host.gpus_per_replica,
        usd_per_gpu_hour=self_host.usd_per_gpu_hour, api_usd_per_request=api.api_usd_per_request,
    )
