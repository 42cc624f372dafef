"""Evaluate one option of a scenario into an OptionResult (API, self-host, hybrid)."""

from __future__ import annotations

import datetime as dt

from costmodel.decision.breakeven import with_break_even
from costmodel.decision.economics import diurnal_profile, plan_hybrid, size_self_host
from costmodel.decision.evidence import (
    USABLE_STATUSES,
    LatencyEvidence,
    SloVerdict,
    measured_evidence,
    simulated_evidence,
    slo_verdict,
    weakest_status,
    with_evidence,
)
from costmodel.decision.fleet import autoscaled_result, fleet_policy
from costmodel.decision.instances import InstancePacking
from costmodel.decision.latency import api_slo
from costmodel.decision.measured_capacity import MEASURED_METHOD
from costmodel.decision.mixed import BurstPrices, MixedPackings, burst_rows, check_mixed_base, mixed_result
from costmodel.decision.results import CostBreakdown, OptionResult, PriceSource
from costmodel.pricing import ApiPriceRow, GpuPriceRow, PriceSheet
from costmodel.pricing.api_cost import api_option_cost, token_rates
from costmodel.pricing.dispersion import LatencyDispersionSheet
from costmodel.pricing.hosts import host_row, host_share
from costmodel.pricing.latency import ApiLatencySheet
from costmodel.scenario import ApiOption, HybridOption, Scenario, SelfHostOption
from costmodel.serving.analytic import Capacity
from costmodel.units import HOURS_PER_MONTH, TOKENS_PER_MTOK, counted


def _source(what: str, source: str, row: ApiPriceRow | GpuPriceRow, today: dt.date) -> PriceSource:
    """Provenance of a sheet price; its age counts from the price's own date (price_as_of, else checked)."""
    return PriceSource(what=what, source=source, checked=row.checked.isoformat(),
                       age_days=(today - row.price_date).days,
                       price_as_of=row.price_as_of.isoformat() if row.price_as_of else None)


def api_result(option: ApiOption, scenario: Scenario, sheet: PriceSheet[ApiPriceRow], *, today: dt.date,
               api_price_scale: float = 1.0, latency: ApiLatencySheet | None = None,
               dispersion: LatencyDispersionSheet | None = None) -> OptionResult:
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
    output_usd = cost.output_tokens_per_month * output_rate / TOKENS_PER_MTOK * api_price_scale
    prompt_tokens = cost.tokens_per_month - cost.output_tokens_per_month
    evidence, verdict = api_slo(option, scenario, latency, dispersion)
    retired = row.is_retired(today=today)
    notes = [cost.rate_limit.reason]
    if cost.batch:
        notes.append("priced through the batch API (results within 24 h)")
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
        price_sources=(_source(f"API price {row.id}", f"{row.source} {row.source_version}", row, today),),
        notes=tuple(notes), api_usd_per_request=cost.usd_per_request * api_price_scale,
    ), evidence, verdict)


def gpu_price(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow], *, today: dt.date) -> tuple[float, PriceSource]:
    """USD per GPU-hour (override or the offering's all-in price) and where it comes from."""
    if option.usd_per_gpu_hour is not None:
        return option.usd_per_gpu_hour, PriceSource(
            what=f"GPU price for {option.name}", source="scenario override", checked=today.isoformat(), age_days=0
        )
    assert option.offering is not None  # validated by the scenario schema
    row = sheet.get(option.offering)
    return row.all_in_usd_per_gpu_hour(), _source(f"GPU offering {row.id}", row.source, row, today)


def offering_packing(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow], *,
                     offering: str | None = None) -> InstancePacking:
    """How the option's replicas pack into its offering's instances (or `offering`'s: a mixed fleet's burst);
    GPUs sold singly when the option sets its own usd_per_gpu_hour or names no offering."""
    row_id = offering if offering is not None else (option.offering if option.usd_per_gpu_hour is None else None)
    if row_id is None:
        return InstancePacking(gpus_per_replica=option.gpus_per_replica)
    row = sheet.get(row_id)
    return InstancePacking(gpus_per_replica=option.gpus_per_replica, gpus_per_instance=row.gpus_per_instance,
                           instance=row.instance)


def estimate_note(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow]) -> tuple[str, ...]:
    """A note when the option's price is an analyst's estimate rather than a provider's quote."""
    if option.usd_per_gpu_hour is not None or option.offering is None:
        return ()
    row = sheet.get(option.offering)
    if row.provider_kind != "analyst-estimate":
        return ()
    return (f"{row.id} is an analyst estimate, not a price a provider quotes: see its notes for public quotes",)


def host_not_counted(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow]) -> bool:
    """True for owned GPUs priced from the sheet whose host server has no sourced figures (no host row and no
    host_capex_usd_per_gpu / host_power_kw_per_gpu on the option): the cost leaves the host out."""
    if option.usd_per_gpu_hour is not None or option.offering is None:
        return False
    row = sheet.get(option.offering)
    if row.offering != "owned":
        return False
    return host_share(row, host=host_row(row.accelerator_id), capex_usd_per_gpu=option.host_capex_usd_per_gpu,
                      power_kw_per_gpu=option.host_power_kw_per_gpu) is None


def host_price(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow], *,
               today: dt.date) -> tuple[float, PriceSource | None, tuple[str, ...]]:
    """Owned GPUs: the host server's share per GPU-hour (pricing/hosts.py), its source and a note for people.

    Nothing for rented GPUs (the rental includes the host) or when the option sets usd_per_gpu_hour (its own
    all-in price)."""
    if option.usd_per_gpu_hour is not None or option.offering is None:
        return 0.0, None, ()
    row = sheet.get(option.offering)
    if row.offering != "owned":
        return 0.0, None, ()
    host = host_row(row.accelerator_id)
    share = host_share(row, host=host, capex_usd_per_gpu=option.host_capex_usd_per_gpu,
                       power_kw_per_gpu=option.host_power_kw_per_gpu)
    if share is None:
        return 0.0, None, (f"host server not counted: no sourced host figures for {row.accelerator_id}, so this cost "
                           "leaves the server's capex and power out and the option ranks after every option with a "
                           "complete cost; set host_capex_usd_per_gpu and host_power_kw_per_gpu on the option",)
    if share.usd_per_gpu_hour == 0:
        return 0.0, None, ("host server left out: host_capex_usd_per_gpu and host_power_kw_per_gpu are 0",)
    source = PriceSource(what=f"host server of {row.id}", source=share.source,
                         checked=host.checked.isoformat() if host and share.source != "scenario override"
                         else today.isoformat(),
                         age_days=(today - host.checked).days if host and share.source != "scenario override" else 0)
    note = (f"host server counted: ${share.capex_usd_per_gpu:,.0f} capex and {share.power_kw_per_gpu:.3f} kW per GPU "
            f"add ${share.usd_per_gpu_hour:.4f}/GPU-h to the GPU's ${row.all_in_usd_per_gpu_hour():.4f}")
    return share.usd_per_gpu_hour, source, (note,)


def self_host_result(option: SelfHostOption, scenario: Scenario, sheet: PriceSheet[GpuPriceRow],
                     capacity_and_source: tuple[Capacity, str], *, reference: OptionResult | None, today: dt.date,
                     gpu_price_scale: float = 1.0) -> OptionResult:
    """A self-host option sized for the peak hour from its capacity at the SLO."""
    capacity, efficiency_source = capacity_and_source
    workload = scenario.workload
    usd_per_gpu_hour, source = gpu_price(option, sheet, today=today)
    host_usd, host_source, host_note = host_price(option, sheet, today=today)
    usd_per_gpu_hour = (usd_per_gpu_hour + host_usd) * gpu_price_scale
    sources = (source,) if host_source is None else (source, host_source)
    ops_fixed, ops_per_gpu = option.ops_usd_per_month, option.ops_usd_per_gpu_month
    tokens_per_request = workload.mean_tokens_per_request()
    ttft_seconds, tpot_seconds = capacity.ttft_seconds or None, capacity.tpot_seconds or None
    policy = fleet_policy(option, scenario)
    packing = offering_packing(option, sheet)
    packing_note: tuple[str, ...] = ((packing.rule(),) if packing.packs else ()) + estimate_note(option, sheet)
    if not capacity.feasible:
        replica_usd = packing.gpus_billed(1) * usd_per_gpu_hour * HOURS_PER_MONTH
        return OptionResult(
            name=option.name, kind="self-host", model_id=option.model, hardware_id=option.hardware,
            gpus_per_replica=option.gpus_per_replica, usd_per_gpu_hour=usd_per_gpu_hour, price_sources=sources,
            efficiency_source=efficiency_source, latency_source="simulated", ttft_p90_seconds=ttft_seconds,
            tpot_p90_seconds=tpot_seconds,
            usd_per_month=replica_usd + ops_fixed + ops_per_gpu * packing.gpus_billed(1), usd_per_mtok=float("inf"),
            usd_per_mtok_input=float("inf"), usd_per_mtok_output=float("inf"), meets_slo=False, slo_status="misses",
            slo_reason=f"cannot meet the SLO at any load: {capacity.reason}", gpus=option.gpus_per_replica, replicas=1,
            capacity_requests_per_second=0.0, tokens_per_second_per_replica=0.0,
            breakdown=CostBreakdown(gpu_usd_per_month=replica_usd,
                                    ops_usd_per_month=ops_fixed + ops_per_gpu * packing.gpus_billed(1)),
            instances=packing.instances(1), gpus_billed=packing.gpus_billed(1),
            gpus_per_instance=packing.gpus_per_instance,
            min_replicas=policy.min_replicas, target_peak_utilization=policy.target_peak_utilization,
            fleet_reason=policy.reason, scaling="fixed", capacity_method=capacity.method,
            break_even_against=reference.name if reference else None,
            notes=(*host_note, *packing_note), ops_usd_per_gpu_month=ops_per_gpu, engine=option.engine,
            host_not_counted=host_not_counted(option, sheet),
        )
    cost = size_self_host(
        mean_requests_per_second=workload.mean_requests_per_second(),
        peak_requests_per_second=workload.peak_requests_per_second(),
        capacity_requests_per_second=capacity.requests_per_second, tokens_per_request=tokens_per_request,
        gpus_per_replica=option.gpus_per_replica, usd_per_gpu_hour=usd_per_gpu_hour,
        ops_usd_per_month=ops_fixed, ops_usd_per_gpu_month=ops_per_gpu, min_replicas=policy.min_replicas,
        target_peak_utilization=policy.target_peak_utilization, spare_replicas=policy.spare_replicas,
        packing=packing,
    )
    tokens_month = workload.tokens_per_month_total()
    output_month = workload.output_tokens_per_month()
    input_usd = cost.usd_per_month * capacity.prefill_time_fraction
    fixed = OptionResult(
        name=option.name, kind="self-host", model_id=option.model, hardware_id=option.hardware,
        gpus_per_replica=option.gpus_per_replica, usd_per_gpu_hour=usd_per_gpu_hour, price_sources=sources,
        efficiency_source=efficiency_source, latency_source="simulated", ttft_p90_seconds=ttft_seconds,
        tpot_p90_seconds=tpot_seconds,
        usd_per_month=cost.usd_per_month, usd_per_mtok=cost.usd_per_mtok,
        usd_per_mtok_input=input_usd / (tokens_month - output_month) * TOKENS_PER_MTOK,
        usd_per_mtok_output=(cost.usd_per_month - input_usd) / output_month * TOKENS_PER_MTOK,
        meets_slo=True, slo_reason="",
        gpus=cost.gpus, replicas=cost.replicas, utilization=cost.utilization,
        throughput_bound=capacity.throughput_bound, capacity_requests_per_second=capacity.requests_per_second,
        tokens_per_second_per_replica=cost.tokens_per_second_per_replica,
        breakdown=CostBreakdown(gpu_usd_per_month=cost.gpu_usd_per_month, ops_usd_per_month=cost.ops_usd_per_month),
        notes=(f"capacity method: {capacity.method}", *host_note, *packing_note), latency_owner=capacity.latency_owner,
        capacity_method=capacity.method,
        replicas_by_hour=(cost.replicas,) * 24, gpu_hours_per_month=cost.gpus_billed * HOURS_PER_MONTH,
        instances=cost.instances, gpus_billed=cost.gpus_billed, gpus_per_instance=packing.gpus_per_instance,
        host_not_counted=host_not_counted(option, sheet),
        min_replicas=policy.min_replicas, target_peak_utilization=policy.target_peak_utilization,
        fleet_reason=policy.reason, scaling="fixed", ops_usd_per_gpu_month=ops_per_gpu, engine=option.engine,
        spare_replicas=policy.spare_replicas,
    )
    fixed = with_evidence(fixed, *_self_host_evidence(option, scenario, capacity), detail=(
        f"{capacity.reason}; sized for the peak hour at {capacity.requests_per_second:.2f} requests/s per replica "
        f"(batch {capacity.batch}); {policy.reason}"))
    if option.scaling.mode == "fixed":
        return with_break_even(fixed, reference)
    profile = workload.hourly_load_factors() or diurnal_profile(peak_to_mean=workload.peak_to_mean())
    kind = sheet.get(option.offering).offering if option.offering is not None else None
    if option.scaling.mode == "mixed":
        check_mixed_base(option, kind)
        return with_break_even(mixed_result(fixed, option, scenario, hourly_profile=profile,
                                            burst=_burst_prices(option, sheet, today=today, scale=gpu_price_scale),
                                            packings=mixed_packings(option, sheet, base=packing)),
                               reference)
    return with_break_even(autoscaled_result(fixed, option, scenario, hourly_profile=profile, offering_kind=kind,
                                             packing=packing), reference)


def mixed_packings(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow], *, base: InstancePacking) -> MixedPackings:
    """The mixed fleet's instances: the base offering's, the on-demand burst's and the spot burst's rows."""
    on_demand, spot = burst_rows(option, sheet)
    return MixedPackings(base=base, on_demand=offering_packing(option, sheet, offering=on_demand.id),
                         spot=offering_packing(option, sheet, offering=spot.id) if spot is not None else base)


def _self_host_evidence(option: SelfHostOption, scenario: Scenario,
                        capacity: Capacity) -> tuple[LatencyEvidence, SloVerdict]:
    """The capacity's p90 figures as evidence: measured (a calibrate-endpoint fit of the deployment) or
    simulated with the engine's documented error (decision/evidence.py)."""
    ttft, tpot = capacity.ttft_seconds or None, capacity.tpot_seconds or None
    if capacity.method == MEASURED_METHOD:
        evidence = measured_evidence(ttft_p90_seconds=ttft, tpot_p90_seconds=tpot,
                                     basis="measured: the deployment's calibrate-endpoint step-time model")
    else:
        evidence = simulated_evidence(ttft_p90_seconds=ttft, tpot_p90_seconds=tpot, engine=option.engine)
    return evidence, slo_verdict(evidence, scenario.slo)


def _burst_prices(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow], *, today: dt.date,
                  scale: float) -> BurstPrices:
    """The mixed fleet's burst prices (on-demand, spot), scaled like the base price, with their sources."""
    on_demand, spot = burst_rows(option, sheet)
    sources = [_source(f"burst GPU offering {on_demand.id}", on_demand.source, on_demand, today)]
    if spot is not None:
        sources.append(_source(f"burst spot GPU offering {spot.id}", spot.source, spot, today))
    return BurstPrices(on_demand_usd_per_gpu_hour=on_demand.all_in_usd_per_gpu_hour() * scale,
                       spot_usd_per_gpu_hour=spot.all_in_usd_per_gpu_hour() * scale if spot is not None else None,
                       sources=tuple(sources))


def hybrid_result(option: HybridOption, scenario: Scenario, *, profile: tuple[float, ...], self_host: OptionResult,
                  capacity: Capacity, api: OptionResult) -> OptionResult:
    """Base replicas of the self-host option, overflow to the API, base count minimizing $/month."""
    workload = scenario.workload
    assert self_host.usd_per_gpu_hour is not None and self_host.gpus_per_replica is not None
    assert api.api_usd_per_request is not None
    own = scenario.option(option.self_host)
    ops_fixed = own.ops_usd_per_month if isinstance(own, SelfHostOption) else self_host.breakdown.ops_usd_per_month
    ops_per_gpu = own.ops_usd_per_gpu_month if isinstance(own, SelfHostOption) else 0.0
    gpu_replica_usd = self_host.gpus_per_replica * self_host.usd_per_gpu_hour * HOURS_PER_MONTH
    replica_usd = gpu_replica_usd + self_host.gpus_per_replica * ops_per_gpu  # per-GPU ops rides with each replica
    # The base runs at full capacity at the SLO and keeps no spare: the API overflow absorbs the burst and a
    # replica down (docs/economics.md, "Hybrid").
    target = 1.0
    packing = InstancePacking(gpus_per_replica=self_host.gpus_per_replica,
                              gpus_per_instance=self_host.gpus_per_instance or 1)
    plan = plan_hybrid(
        mean_requests_per_second=workload.mean_requests_per_second(), hourly_profile=profile,
        capacity_requests_per_second=capacity.requests_per_second * target if capacity.feasible else 0.0,
        min_base_replicas=self_host.min_replicas or 1,
        replica_usd_per_month=replica_usd, ops_usd_per_month=ops_fixed,
        api_usd_per_request=api.api_usd_per_request,
        max_base_replicas=self_host.replicas if capacity.feasible else 0, packing=packing,
        usd_per_gpu_month=self_host.usd_per_gpu_hour * HOURS_PER_MONTH + ops_per_gpu,
    )
    base_gpu_usd = packing.gpus_billed(plan.base_replicas) * self_host.usd_per_gpu_hour * HOURS_PER_MONTH
    parts = ([self_host] if plan.base_replicas else []) + ([api] if plan.overflow_fraction > 0 or not plan.base_replicas
                                                             else [])
    status = weakest_status(tuple(p.slo_status for p in parts)) if capacity.feasible or not plan.base_replicas \
        else "misses"
    meets = status in USABLE_STATUSES
    shown = self_host if plan.base_replicas else api  # whose p90 figures and band the row shows
    serve = "serves" if plan.base_replicas == 1 else "serve"
    reason = (f"{counted(plan.base_replicas, 'base replica')} of {self_host.name} {serve} {1 - plan.overflow_fraction:.0%} of "
              f"requests; the rest overflow to {api.name} ({api.slo_reason})")
    tokens_month = workload.tokens_per_month_total()
    return OptionResult(
        name=option.name, kind="hybrid", usd_per_month=plan.usd_per_month,
        usd_per_mtok=plan.usd_per_month / tokens_month * TOKENS_PER_MTOK,
        usd_per_mtok_input=float("nan"), usd_per_mtok_output=float("nan"), meets_slo=meets,
        slo_status=status, latency_source=shown.latency_source, slo_reason=reason,
        ttft_p90_seconds=shown.ttft_p90_seconds, tpot_p90_seconds=shown.tpot_p90_seconds,
        ttft_p90_seconds_low=shown.ttft_p90_seconds_low, ttft_p90_seconds_high=shown.ttft_p90_seconds_high,
        tpot_p90_seconds_low=shown.tpot_p90_seconds_low, tpot_p90_seconds_high=shown.tpot_p90_seconds_high,
        latency_basis=shown.latency_basis, engine=self_host.engine,
        gpus=plan.base_replicas * self_host.gpus_per_replica, replicas=plan.base_replicas,
        utilization=plan.utilization * target if plan.base_replicas else None,
        throttled=api.throttled and plan.overflow_fraction > 0, retired=api.retired,
        capacity_requests_per_second=capacity.requests_per_second if capacity.feasible else None,
        tokens_per_second_per_replica=self_host.tokens_per_second_per_replica,
        breakdown=CostBreakdown(gpu_usd_per_month=base_gpu_usd,
            api_usd_per_month=plan.api_usd_per_month,
            ops_usd_per_month=(ops_fixed + packing.gpus_billed(plan.base_replicas) * ops_per_gpu
                               if plan.base_replicas else 0.0)),
        instances=packing.instances(plan.base_replicas), gpus_billed=packing.gpus_billed(plan.base_replicas),
        gpus_per_instance=packing.gpus_per_instance,
        host_not_counted=self_host.host_not_counted and plan.base_replicas > 0,
        price_sources=self_host.price_sources + api.price_sources,
        notes=(f"overflow to the API: {plan.overflow_fraction:.1%} of requests" if plan.base_replicas else
               f"no base replica pays off: every request goes to {api.name}",),
        model_id=self_host.model_id, hardware_id=self_host.hardware_id, gpus_per_replica=self_host.gpus_per_replica,
        usd_per_gpu_hour=self_host.usd_per_gpu_hour, api_usd_per_request=api.api_usd_per_request,
        min_replicas=self_host.min_replicas, target_peak_utilization=target,
        fleet_reason=(f"base at 100% of capacity at the SLO, no spare replica: bursts and a replica down overflow to "
                      f"{api.name}"), scaling="fixed", replicas_by_hour=(plan.base_replicas,) * 24,
        gpu_hours_per_month=packing.gpus_billed(plan.base_replicas) * HOURS_PER_MONTH,
        ops_usd_per_gpu_month=ops_per_gpu,
    )
