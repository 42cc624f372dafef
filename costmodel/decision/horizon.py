"""The horizon: what each option pays in months 0..horizon_months-1, growth applied, re-sized every month.

Month 0 is the as-of month. Formulas (docs/economics.md, "The horizon"):
- volume_m = volume_0 x (1 + growth_per_month)^m (`Workload.growth_factor`);
- API: usd_m = usd_per_request x requests_m (the per-request price does not change with volume);
- self-host: the month-0 sizing (`options.self_host_result`: headroom, replica floor, autoscaling) applied to
  month m's volume with the month-0 capacity per replica at the SLO: capacity is found once per option,
  never re-simulated per month or hour;
- hybrid: the month-0 plan (`options.hybrid_result`) on month m's self-host fleet and volume;
- reserved rows with a term of T months (`GpuPriceRow.term_months`): replicas added in month k are paid for
  months k..k+T-1, so the fleet paid never shrinks below what is still committed:
  paid_m = max(needed_m, committed_m), each committed-but-idle replica at N x usd_per_gpu_hour x 730.5 h;
- a mixed fleet's reserved base is held the same way: base_m = committed_m over each month's cheapest base,
  and a month whose held base exceeds its cheapest is re-priced at the held base (decision/mixed.py with
  k = base_m: the committed replicas serve what the burst would have; the burst shrinks or vanishes);
- usd_horizon_total = sum of usd_m; the ranking changes in the first month whose cheapest usable,
  SLO-meeting option differs from month 0's.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from costmodel.decision.feasibility import add_months
from costmodel.decision.instances import InstancePacking
from costmodel.decision.options import hybrid_result, self_host_result
from costmodel.decision.recommend import allowed_statuses
from costmodel.decision.results import OptionResult, RankingBasis, SloStatus
from costmodel.pricing import GpuPriceRow, PriceSheet
from costmodel.scenario import ApiOption, HybridOption, Scenario, SelfHostOption, Workload
from costmodel.serving.analytic import Capacity
from costmodel.units import HOURS_PER_MONTH

SIMPLICITY = {"api": 0, "self-host": 1, "hybrid": 2}  # ties go to the simpler option, as in rank_options


@dataclass(frozen=True, kw_only=True)
class MonthCost:
    """One option in one month of the horizon."""

    usd: float
    replicas: int  # replicas paid (committed ones included); 0 for an API
    slo_status: SloStatus  # that month's verdict (an autoscaled fleet capped by max_replicas misses)


@dataclass(frozen=True, kw_only=True)
class OptionHorizon:
    """One option over the horizon."""

    months: tuple[MonthCost, ...]
    committed_after_horizon_usd: float = 0.0  # reserved replica-months still owed when the horizon ends
    term_months: int | None = None

    @property
    def usd_by_month(self) -> tuple[float, ...]:
        """USD paid in each month."""
        return tuple(m.usd for m in self.months)


def scaled_workload(workload: Workload, factor: float) -> Workload:
    """The workload with its volume (requests/day or tokens/month) multiplied by `factor`."""
    if workload.requests_per_day is not None:
        return workload.model_copy(update={"requests_per_day": workload.requests_per_day * factor})
    assert workload.tokens_per_month is not None
    return workload.model_copy(update={"tokens_per_month": workload.tokens_per_month * factor})


def month_scenarios(scenario: Scenario) -> tuple[Scenario, ...]:
    """The scenario of each month 0..horizon_months-1: month m's volume is month 0's x (1 + g)^m."""
    workload = scenario.workload
    return tuple(scenario if m == 0 else scenario.model_copy(
        update={"workload": scaled_workload(workload, workload.growth_factor(months_ahead=m))})
        for m in range(scenario.horizon_months))


def committed_replicas(needed: Sequence[int], *, term_months: int) -> tuple[tuple[int, ...], int]:
    """Replicas paid each month when every replica added is committed for `term_months` months, and the
    replica-months still committed after the last month.

    A tranche starts in month k with the replicas needed beyond those still committed; it runs k..k+T-1."""
    tranches: list[tuple[int, int]] = []  # (first month, replicas)
    paid = []
    for month, want in enumerate(needed):
        active = sum(n for start, n in tranches if start <= month < start + term_months)
        if want > active:
            tranches.append((month, want - active))
            active = want
        paid.append(active)
    horizon = len(needed)
    after = sum(n * max(0, start + term_months - horizon) for start, n in tranches)
    return tuple(paid), after


def committed_after(needed: Sequence[int], *, term_months: int) -> tuple[int, ...]:
    """Replicas still committed in each month after the horizon (months H, H+1, ... until the last term ends);
    their sum is `committed_replicas`' replica-months."""
    tranches: list[tuple[int, int]] = []
    for month, want in enumerate(needed):
        active = sum(n for start, n in tranches if start <= month < start + term_months)
        if want > active:
            tranches.append((month, want - active))
    horizon = len(needed)
    last = max((start + term_months for start, _ in tranches), default=horizon)
    return tuple(sum(n for start, n in tranches if start <= month < start + term_months)
                 for month in range(horizon, last))


def _packing(result: OptionResult) -> InstancePacking:
    assert result.gpus_per_replica is not None
    return InstancePacking(gpus_per_replica=result.gpus_per_replica, gpus_per_instance=result.gpus_per_instance or 1)


def committed_after_usd(needed: Sequence[int], *, term_months: int, result: OptionResult) -> float:
    """USD still owed after the horizon: sum over the months after it of GPUs billed for the replicas still
    committed x usd_per_gpu_hour x 730.5 h (whole instances, decision/instances.py)."""
    assert result.usd_per_gpu_hour is not None
    packing = _packing(result)
    return sum(packing.gpus_billed(n) for n in committed_after(needed, term_months=term_months)) * (
        result.usd_per_gpu_hour * HOURS_PER_MONTH)


def api_horizon(result: OptionResult, months: Sequence[Scenario]) -> OptionHorizon:
    """usd_m = usd_per_request x requests_m."""
    assert result.api_usd_per_request is not None
    return OptionHorizon(months=tuple(
        MonthCost(usd=result.api_usd_per_request * s.workload.requests_per_month(), replicas=0,
                  slo_status=result.slo_status) for s in months))


def self_host_months(option: SelfHostOption, result: OptionResult, months: Sequence[Scenario], *,
                     sheet: PriceSheet[GpuPriceRow], capacity: tuple[Capacity, str], today: dt.date,
                     gpu_price_scale: float) -> tuple[OptionResult, ...]:
    """Month 0's result, then the same sizing re-run on each later month's volume (capacity reused). `months`
    are `month_scenarios`', which differ only in volume: a later month at the volume of an earlier later month
    (no growth) reuses that month's result."""
    by_workload: dict[tuple[float | None, float | None], OptionResult] = {}
    later = []
    for s in months[1:]:
        key = (s.workload.requests_per_day, s.workload.tokens_per_month)  # all a month changes (month_scenarios)
        if key not in by_workload:
            by_workload[key] = self_host_result(option, s, sheet, capacity, reference=None, today=today,
                                                gpu_price_scale=gpu_price_scale)
        later.append(by_workload[key])
    return (result, *later)


def self_host_horizon(option: SelfHostOption, by_month: Sequence[OptionResult], *,
                      sheet: PriceSheet[GpuPriceRow]) -> OptionHorizon:
    """Each month's cost; a reserved term keeps the committed replicas paid when the volume shrinks."""
    term = sheet.get(option.offering).term_months if option.offering is not None else None
    needed = [r.replicas for r in by_month]
    if term is None or by_month[0].scaling != "fixed":
        return OptionHorizon(months=tuple(MonthCost(usd=r.usd_per_month, replicas=r.replicas, slo_status=r.slo_status)
                                          for r in by_month))
    paid, _ = committed_replicas(needed, term_months=term)
    first = by_month[0]
    assert first.gpus_per_replica is not None and first.usd_per_gpu_hour is not None
    gpu_usd = first.usd_per_gpu_hour * HOURS_PER_MONTH
    packing = _packing(first)
    return OptionHorizon(
        months=tuple(MonthCost(usd=r.usd_per_month + (packing.gpus_billed(p) - packing.gpus_billed(r.replicas)) * gpu_usd,
                               replicas=p, slo_status=r.slo_status)
                     for r, p in zip(by_month, paid, strict=True)),
        committed_after_horizon_usd=committed_after_usd(needed, term_months=term, result=first), term_months=term)


def mixed_horizon(option: SelfHostOption, by_month: Sequence[OptionResult], months: Sequence[Scenario], *,
                  sheet: PriceSheet[GpuPriceRow], capacity: tuple[Capacity, str], today: dt.date,
                  gpu_price_scale: float) -> OptionHorizon | None:
    """A mixed fleet whose base is a reserved row with a term: the base replicas committed in month k stay
    paid through k+T-1 (`committed_replicas` over each month's base); None when not mixed or no term."""
    term = sheet.get(option.offering).term_months if option.offering is not None else None
    if term is None or by_month[0].scaling != "mixed":
        return None
    bases = [r.base_replicas or 0 for r in by_month]
    held, _ = committed_replicas(bases, term_months=term)
    priced = []
    for result, base, month in zip(by_month, held, months, strict=True):
        if base != (result.base_replicas or 0):  # re-priced with the held base: mixed.py at k = base
            pinned = option.model_copy(update={"scaling": option.scaling.model_copy(update={"base_replicas": base})})
            result = self_host_result(pinned, month, sheet, capacity, reference=None, today=today,
                                      gpu_price_scale=gpu_price_scale)
        priced.append(result)
    return OptionHorizon(months=tuple(MonthCost(usd=r.usd_per_month, replicas=r.replicas, slo_status=r.slo_status)
                                      for r in priced),
                         committed_after_horizon_usd=committed_after_usd(bases, term_months=term, result=by_month[0]),
                         term_months=term)


def hybrid_horizon(option: HybridOption, self_host: Sequence[OptionResult], months: Sequence[Scenario], *,
                   result: OptionResult, profile: tuple[float, ...], capacity: Capacity,
                   api: OptionResult) -> OptionHorizon:
    """The base-plus-overflow plan re-chosen on each month's self-host fleet and volume."""
    plans = (result, *(hybrid_result(option, s, profile=profile, self_host=h, capacity=capacity, api=api)
                       for s, h in zip(months[1:], self_host[1:], strict=True)))
    return OptionHorizon(months=tuple(MonthCost(usd=p.usd_per_month, replicas=p.replicas, slo_status=p.slo_status)
                                      for p in plans))


def with_horizon(result: OptionResult, horizon: OptionHorizon, *, ranking_basis: RankingBasis = "usd_per_month",
                 ) -> OptionResult:
    """The result with usd_by_month, usd_horizon_total, usd_committed_after_horizon (what a reserved term still
    owes after the last month), usd_horizon_total_with_commitments (their sum), the ranking basis and a note on
    a reserved term's remaining commitment."""
    notes = result.notes
    if horizon.term_months is not None:
        notes = (*notes, f"reserved {horizon.term_months}-month term: replicas added are paid for the whole term; "
                         f"${horizon.committed_after_horizon_usd:,.0f} stays committed after the horizon")
    usd = horizon.usd_by_month
    return replace(result, usd_by_month=usd, usd_horizon_total=sum(usd), notes=notes,
                   usd_committed_after_horizon=horizon.committed_after_horizon_usd,
                   usd_horizon_total_with_commitments=sum(usd) + horizon.committed_after_horizon_usd,
                   ranking_basis=ranking_basis, commitment_term_months=horizon.term_months)


def horizon_ranking_basis(scenario: Scenario) -> RankingBasis:
    """Rank by the horizon total with commitments when the scenario (or --horizon-months) sets horizon_months;
    by $/month when it is left at its default."""
    return "usd_horizon_total_with_commitments" if "horizon_months" in scenario.model_fields_set else "usd_per_month"


def option_horizons(scenario: Scenario, results: dict[str, OptionResult], capacities: dict[str, tuple[Capacity, str]], *,
              gpu_sheet: PriceSheet[GpuPriceRow], profile: tuple[float, ...], today: dt.date,
              gpu_price_scale: float) -> dict[str, OptionHorizon]:
    """Each evaluated option over the horizon (decision/horizon.py), from its month-0 result and capacity."""
    months = month_scenarios(scenario)
    out: dict[str, OptionHorizon] = {}
    self_host: dict[str, tuple[OptionResult, ...]] = {}
    for option in scenario.options:
        result = results[option.name]
        if result.excluded_reason is not None or not math.isfinite(result.usd_per_month):
            continue
        if isinstance(option, ApiOption):
            out[option.name] = api_horizon(result, months)
        elif isinstance(option, SelfHostOption):
            self_host[option.name] = self_host_months(option, result, months, sheet=gpu_sheet,
                                                      capacity=capacities[option.name], today=today,
                                                      gpu_price_scale=gpu_price_scale)
            out[option.name] = mixed_horizon(
                option, self_host[option.name], months, sheet=gpu_sheet, capacity=capacities[option.name],
                today=today, gpu_price_scale=gpu_price_scale,
            ) or self_host_horizon(option, self_host[option.name], sheet=gpu_sheet)
    for option in scenario.options:
        if isinstance(option, HybridOption) and option.name in results and option.self_host in self_host \
                and results[option.name].excluded_reason is None and math.isfinite(results[option.name].usd_per_month):
            out[option.name] = hybrid_horizon(option, self_host[option.self_host], months,
                                              result=results[option.name], profile=profile,
                                              capacity=capacities[option.self_host][0], api=results[option.api])
    return out



@dataclass(frozen=True, kw_only=True)
class RankingChange:
    """The first month whose cheapest usable, SLO-meeting option differs from month 0's."""

    month: int
    before: str  # month 0's cheapest
    after: str  # month `month`'s cheapest
    before_usd: float  # both in that month
    after_usd: float


def _cheapest(results: Sequence[OptionResult], horizons: Mapping[str, OptionHorizon], month: int, *,
              allowed: set[str]) -> str | None:
    pool = [r for r in results if horizons[r.name].months[month].slo_status in allowed]
    if not pool:
        return None
    best = min(pool, key=lambda r: (round(horizons[r.name].months[month].usd, 2), SIMPLICITY[r.kind]))
    return best.name


def ranking_change(results: Sequence[OptionResult], horizons: Mapping[str, OptionHorizon], *,
                   accept_unverified: bool = False) -> RankingChange | None:
    """Candidates: not excluded, not throttled, meeting or likely meeting the SLO (unverified only when accepted)
    in the month considered; None when month 0 has none or the cheapest never changes."""
    allowed = set(allowed_statuses(accept_unverified=accept_unverified))
    candidates = [r for r in results if r.excluded_reason is None and not r.throttled and r.slo_status in allowed
                  and r.name in horizons]
    if not candidates:
        return None
    first = _cheapest(candidates, horizons, 0, allowed=allowed)
    for month in range(1, len(horizons[candidates[0].name].months)):
        now = _cheapest(candidates, horizons, month, allowed=allowed)
        if first is not None and now is not None and now != first:
            return RankingChange(month=month, before=first, after=now,
                                 before_usd=horizons[first].months[month].usd,
                                 after_usd=horizons[now].months[month].usd)
    return None


def ranking_change_reason(change: RankingChange | None, *, as_of: dt.date, horizon_months: int,
                          growth_per_month: float) -> str:
    """The sentence for the decision's reasons and the compare text."""
    if change is None:
        return (f"The cheapest option does not change over the {horizon_months}-month horizon "
                f"(volume growth {growth_per_month:+.1%}/month).")
    when = add_months(as_of, months=change.month)
    return (f"The ranking changes in month {change.month} ({when:%Y-%m}): {change.after} becomes cheaper than "
            f"{change.before} (${change.after_usd:,.0f} against ${change.before_usd:,.0f} that month) as volume "
            f"grows {growth_per_month:+.1%}/month.")
