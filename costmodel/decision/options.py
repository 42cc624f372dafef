"""Evaluate one option of a scenario into an OptionResult: API here; self-host in decision/self_host.py (its
plan, decision/terms.py, costed by decision/plan.py) and hybrid in decision/hybrid.py, re-exported."""

from __future__ import annotations

import datetime as dt

from costmodel.decision.evidence import slo_verdict, with_evidence
from costmodel.decision.hybrid import hybrid_result
from costmodel.decision.latency import api_slo, batch_evidence
from costmodel.decision.results import CostBreakdown, OptionResult
from costmodel.decision.self_host import self_host_result
from costmodel.decision.terms import (
    estimate_note,
    gpu_price,
    host_not_counted,
    host_price,
    mixed_packings,
    offering_packing,
    price_source,
)
from costmodel.pricing import ApiPriceRow, PriceSheet
from costmodel.pricing.api_cost import api_option_cost, token_rates
from costmodel.pricing.batch_window import fmt_window
from costmodel.pricing.dispersion import LatencyDispersionSheet
from costmodel.pricing.latency import ApiLatencySheet
from costmodel.scenario import ApiOption, Scenario
from costmodel.units import TOKENS_PER_MTOK

__all__ = ["api_result", "estimate_note", "gpu_price", "host_not_counted", "host_price", "hybrid_result",
           "mixed_packings", "offering_packing", "self_host_result"]


def api_result(option: ApiOption, scenario: Scenario, sheet: PriceSheet[ApiPriceRow], *, today: dt.date,
               api_price_scale: float = 1.0, latency: ApiLatencySheet | None = None,
               dispersion: LatencyDispersionSheet | None = None) -> OptionResult:
    """An API option: token charges for the month, rate limits, latency verdict."""
    workload = scenario.workload
    cost = api_option_cost(option, workload, sheet, slo=scenario.slo)
    row = sheet.get(option.price_id)
    usd_month = cost.usd_per_month * api_price_scale
    # Split by rate: output tokens at the (batch) output rate, weighted by the share of requests in the
    # long-context tier (whose output rate is higher); the rest is the prompt side.
    base = token_rates(row, long_context=False, batch=cost.batch).output_usd_per_mtok
    p_long = cost.long_context_request_fraction
    output_rate = base * (1 - p_long) + token_rates(row, long_context=True, batch=cost.batch).output_usd_per_mtok * p_long
    output_usd = cost.output_tokens_per_month * output_rate / TOKENS_PER_MTOK * api_price_scale
    prompt_tokens = cost.tokens_per_month - cost.output_tokens_per_month
    choice = cost.batch_choice
    retired = row.is_retired(today=today)
    notes = [cost.rate_limit.reason]
    if cost.batch:  # the batch price goes with the batch API's latency: its provider's completion window
        assert choice.window is not None and choice.window.window_seconds is not None  # choose_batch's contract
        evidence = batch_evidence(choice.window)
        verdict = slo_verdict(evidence, scenario.slo)
        notes.append(f"priced through the batch API (results within its {fmt_window(choice.window.window_seconds)} "
                     "completion window)")
    else:
        evidence, verdict = api_slo(option, scenario, latency, dispersion)
        if choice.declined:
            notes.append(choice.declined)
    if cost.long_context_request_fraction > 0:
        notes.append(f"{cost.long_context_request_fraction:.0%} of requests pay the long-context rates")
    if retired:
        notes.append(f"RETIRED: the provider retired this model on {row.deprecation_date}; pick a live row")
    if row.disagreement:
        notes.append(f"price sources disagree: {row.disagreement}")
    return with_evidence(OptionResult(
        name=option.name, kind="api", usd_per_month=usd_month, usd_per_mtok=usd_month / cost.tokens_per_month * TOKENS_PER_MTOK,
        usd_per_mtok_input=(usd_month - output_usd) / prompt_tokens * TOKENS_PER_MTOK if prompt_tokens else 0.0,
        usd_per_mtok_output=output_usd / cost.output_tokens_per_month * TOKENS_PER_MTOK,
        meets_slo=verdict.meets_slo, slo_reason=verdict.reason,
        throttled=cost.rate_limit.throttled, retired=retired, breakdown=CostBreakdown(api_usd_per_month=usd_month),
        price_sources=(price_source(f"API price {row.id}", f"{row.source} {row.source_version}", row, today),),
        notes=tuple(notes), api_usd_per_request=cost.usd_per_request * api_price_scale,
        priced_via_batch_api=cost.batch,
    ), evidence, verdict)


