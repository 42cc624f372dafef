"""An option's commercial terms from the price sheet: GPU and host prices with their sources, instances, the
mixed burst's rows, and the typed plan (decision/plan.py `OptionPlan`) built once per self-host option."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from costmodel.decision.fleet import spot_interruption_rate
from costmodel.decision.fleet_policy import fleet_policy
from costmodel.decision.instances import InstancePacking
from costmodel.decision.mixed import BurstPrices, MixedPackings, burst_rows, check_mixed_base
from costmodel.decision.plan import BurstTerms, OptionPlan
from costmodel.decision.results import PriceSource
from costmodel.errors import CostmodelError
from costmodel.pricing import ApiPriceRow, GpuPriceRow, PriceSheet
from costmodel.pricing.hosts import host_row, host_share
from costmodel.scenario import Scenario, SelfHostOption


def price_source(what: str, source: str, row: ApiPriceRow | GpuPriceRow, today: dt.date) -> PriceSource:
    """Provenance of a sheet price; its age counts from the price's own date (price_as_of, else checked)."""
    return PriceSource(what=what, source=source, checked=row.checked.isoformat(),
                       age_days=(today - row.price_date).days,
                       price_as_of=row.price_as_of.isoformat() if row.price_as_of else None)


def gpu_price(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow], *, today: dt.date) -> tuple[float, PriceSource]:
    """USD per GPU-hour (override or the offering's all-in price) and where it comes from."""
    if option.usd_per_gpu_hour is not None:
        return option.usd_per_gpu_hour, PriceSource(
            what=f"GPU price for {option.name}", source="scenario override", checked=today.isoformat(), age_days=0
        )
    assert option.offering is not None  # validated by the scenario schema
    row = sheet.get(option.offering)
    return row.all_in_usd_per_gpu_hour(), price_source(f"GPU offering {row.id}", row.source, row, today)


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


def mixed_packings(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow], *, base: InstancePacking) -> MixedPackings:
    """The mixed fleet's instances: the base offering's, the on-demand burst's and the spot burst's rows."""
    on_demand, spot = burst_rows(option, sheet)
    return MixedPackings(base=base, on_demand=offering_packing(option, sheet, offering=on_demand.id),
                         spot=offering_packing(option, sheet, offering=spot.id) if spot is not None else base)


def burst_prices(option: SelfHostOption, sheet: PriceSheet[GpuPriceRow], *, today: dt.date,
                  scale: float) -> BurstPrices:
    """The mixed fleet's burst prices (on-demand, spot), scaled like the base price, with their sources."""
    on_demand, spot = burst_rows(option, sheet)
    sources = [price_source(f"burst GPU offering {on_demand.id}", on_demand.source, on_demand, today)]
    if spot is not None:
        sources.append(price_source(f"burst spot GPU offering {spot.id}", spot.source, spot, today))
    return BurstPrices(on_demand_usd_per_gpu_hour=on_demand.all_in_usd_per_gpu_hour() * scale,
                       spot_usd_per_gpu_hour=spot.all_in_usd_per_gpu_hour() * scale if spot is not None else None,
                       sources=tuple(sources))


@dataclass(frozen=True, kw_only=True)
class PlannedOption:
    """A self-host option's plan with what people read about its terms."""

    plan: OptionPlan
    price_sources: tuple[PriceSource, ...]  # the GPU's, the host's, a mixed burst's
    notes: tuple[str, ...]  # the host server, the instances, an analyst's estimate
    host_not_counted: bool


def _interruptions(option: SelfHostOption, offering_kind: str | None) -> float:
    """Spot interruptions per replica-hour that apply: autoscale on a spot row, or a mixed burst's spot share."""
    scaling = option.scaling
    if scaling.mode == "autoscale":
        if offering_kind in ("owned", "reserved"):
            raise CostmodelError(f"option '{option.name}': scaling.mode autoscale on a {offering_kind} offering "
                                 f"({option.offering}); {offering_kind} GPUs are paid whether used or not: use mode "
                                 "fixed or an on-demand/spot offering")
        return spot_interruption_rate(option, offering_kind)
    if scaling.mode == "mixed":
        return (scaling.interruption_rate_per_hour or 0.0) if scaling.spot_share > 0 else 0.0
    return 0.0


def option_plan(option: SelfHostOption, scenario: Scenario, sheet: PriceSheet[GpuPriceRow], *, today: dt.date,
                gpu_price_scale: float = 1.0) -> PlannedOption:
    """The option's plan: all-in $/GPU-hour (GPU + host share) x `gpu_price_scale`, instances, fleet policy,
    ops, a reserved term, a mixed fleet's burst (its rows checked)."""
    usd_per_gpu_hour, source = gpu_price(option, sheet, today=today)
    host_usd, host_source, host_note = host_price(option, sheet, today=today)
    packing = offering_packing(option, sheet)
    row = sheet.get(option.offering) if option.offering is not None else None
    kind = row.offering if row is not None else None
    sources: tuple[PriceSource, ...] = (source,) if host_source is None else (source, host_source)
    interruptions = _interruptions(option, kind)
    burst = None
    if option.scaling.mode == "mixed":
        check_mixed_base(option, kind)
        prices = burst_prices(option, sheet, today=today, scale=gpu_price_scale)
        packings = mixed_packings(option, sheet, base=packing)
        burst = BurstTerms(on_demand_usd_per_gpu_hour=prices.on_demand_usd_per_gpu_hour,
                           spot_usd_per_gpu_hour=prices.spot_usd_per_gpu_hour, on_demand=packings.on_demand,
                           spot=packings.spot)
        sources = (*sources, *prices.sources)
    plan = OptionPlan(
        name=option.name, gpus_per_replica=option.gpus_per_replica,
        usd_per_gpu_hour=(usd_per_gpu_hour + host_usd) * gpu_price_scale,
        host_usd_per_gpu_hour=host_usd * gpu_price_scale, packing=packing, fleet=fleet_policy(option, scenario),
        ops_usd_per_month=option.ops_usd_per_month, ops_usd_per_gpu_month=option.ops_usd_per_gpu_month,
        offering_kind=kind, term_months=row.term_months if row is not None else None,
        interruptions_per_replica_hour=interruptions, burst=burst)
    notes = ((packing.rule(),) if packing.packs else ()) + estimate_note(option, sheet)
    return PlannedOption(plan=plan, price_sources=sources, notes=(*host_note, *notes),
                         host_not_counted=host_not_counted(option, sheet))
