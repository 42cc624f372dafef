"""The horizon: what each option pays in months 0..horizon_months-1, growth applied, re-sized every month.

Month 0 is the as-of month. Formulas (docs/economics.md, "The horizon"):
- volume_m = volume_0 x (1 + growth_per_month)^m (`Workload.growth_factor`);
- API: usd_m = usd_per_request x requests_m (the per-request price does not change with volume);
- self-host: the option's plan (decision/plan.py `plan_cost`: headroom, replica floor, autoscaling, instances,
  ops) costed at month m's volume with the month-0 capacity per replica at the SLO: capacity is found once per
  option, never re-simulated per month or hour;
- hybrid: the base's plan with the overflow re-chosen (`plan.hybrid_cost`) on month m's fleet and volume;
- reserved rows with a term of T months (`GpuPriceRow.term_months`): replicas added in month k are paid for
  months k..k+T-1, so the fleet paid never shrinks below what is still committed:
  paid_m = max(needed_m, committed_m), each committed-but-idle replica at N x usd_per_gpu_hour x 730.5 h;
- a mixed fleet's reserved base is held the same way: base_m = committed_m over each month's cheapest base,
  and a month whose held base exceeds its cheapest is re-priced at the held base (`plan_cost` with
  base_replicas = base_m: the committed replicas serve what the burst would have; the burst shrinks or vanishes);
- usd_horizon_total = sum of usd_m; the ranking changes in the first month whose cheapest usable,
  SLO-meeting option differs from month 0's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from costmodel.decision.hybrid import hybrid_slo_status
from costmodel.decision.plan import OptionPlan, PlanCost, hybrid_cost, plan_cost, workload_demand
from costmodel.decision.results import OptionResult, RankingBasis, SloStatus
from costmodel.decision.self_host import self_host_evidence
from costmodel.scenario import ApiOption, HybridOption, Scenario, SelfHostOption, Workload
from costmodel.serving.analytic import Capacity
from costmodel.units import HOURS_PER_MONTH

_Month = TypeVar("_Month")


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


def committed_after_usd(needed: Sequence[int], *, term_months: int, plan: OptionPlan) -> float:
    """USD still owed after the horizon: sum over the months after it of GPUs billed for the replicas still
    committed x usd_per_gpu_hour x 730.5 h (whole instances, decision/instances.py)."""
    return sum(plan.packing.gpus_billed(n) for n in committed_after(needed, term_months=term_months)) * (
        plan.usd_per_gpu_hour * HOURS_PER_MONTH)


def api_horizon(result: OptionResult, months: Sequence[Scenario]) -> OptionHorizon:
    """usd_m = usd_per_request x requests_m."""
    assert result.api_usd_per_request is not None
    return OptionHorizon(months=tuple(
        MonthCost(usd=result.api_usd_per_request * s.workload.requests_per_month(), replicas=0,
                  slo_status=result.slo_status) for s in months))


@dataclass(frozen=True, kw_only=True)
class MonthFleet:
    """A self-host plan costed in one month of the horizon (decision/plan.py `plan_cost`)."""

    cost: PlanCost
    slo_status: SloStatus  # the evidence's verdict; "misses" in a month whose demand max_replicas caps


@dataclass(frozen=True, kw_only=True)
class PlanMonths:
    """What a self-host option's months are costed from: its plan, capacity, p90 figures and verdict."""

    plan: OptionPlan
    capacity: Capacity
    ttft_p90_seconds: float
    tpot_p90_seconds: float
    verdict_status: SloStatus  # the latency evidence's status, before any month's cap
    profile: tuple[float, ...]

    def month(self, scenario: Scenario, *, base_replicas: int | None = None) -> MonthFleet:
        """The plan at this month's demand (a mixed base pinned at `base_replicas`)."""
        feasible = self.capacity.feasible
        cost = plan_cost(self.plan, workload_demand(scenario.workload, hourly_profile=self.profile),
                         capacity_requests_per_second=self.capacity.requests_per_second if feasible else 0.0,
                         ttft_p90_seconds=self.ttft_p90_seconds, tpot_p90_seconds=self.tpot_p90_seconds,
                         base_replicas=base_replicas)
        status: SloStatus = "misses" if not feasible or cost.capped_hours else self.verdict_status
        return MonthFleet(cost=cost, slo_status=status)


def plan_months(option: SelfHostOption, result: OptionResult, scenario: Scenario, *, capacity: Capacity,
                profile: tuple[float, ...]) -> PlanMonths:
    """The month-0 result's plan with its capacity and evidence (the capacity is found once, never re-simulated)."""
    assert result.plan is not None  # every evaluated self-host result carries its plan
    _, verdict = self_host_evidence(option, scenario, capacity)
    return PlanMonths(plan=result.plan, capacity=capacity, ttft_p90_seconds=result.ttft_p90_seconds or 0.0,
                      tpot_p90_seconds=result.tpot_p90_seconds or 0.0, verdict_status=verdict.status,
                      profile=profile)


def self_host_months(result: OptionResult, months: Sequence[Scenario], *, planned: PlanMonths) -> tuple[MonthFleet, ...]:
    """Month 0's fleet (the result's), then the same plan costed at each later month's volume."""
    first = MonthFleet(cost=planned.month(months[0]).cost, slo_status=result.slo_status)
    return (first, *(planned.month(s) for s in months[1:]))


def _month_cost(fleet: MonthFleet) -> MonthCost:
    return MonthCost(usd=fleet.cost.usd_per_month, replicas=fleet.cost.replicas, slo_status=fleet.slo_status)


def self_host_horizon(by_month: Sequence[MonthFleet], *, plan: OptionPlan, gpu_price_scale: float = 1.0) -> OptionHorizon:
    """Each month's cost; a reserved term keeps the committed replicas paid when the volume shrinks
    (`gpu_price_scale`: the sensitivity's multiplier on $/GPU-hour, decision/volume_horizon.py)."""
    term = plan.term_months
    needed = [m.cost.replicas for m in by_month]
    if term is None or plan.fleet.scaling != "fixed":
        return OptionHorizon(months=tuple(_month_cost(m) for m in by_month))
    paid, _ = committed_replicas(needed, term_months=term)
    gpu_usd = plan.usd_per_gpu_hour * gpu_price_scale * HOURS_PER_MONTH
    packing = plan.packing
    return OptionHorizon(
        months=tuple(MonthCost(usd=m.cost.usd_per_month + (packing.gpus_billed(p) - packing.gpus_billed(m.cost.replicas))
                               * gpu_usd, replicas=p, slo_status=m.slo_status)
                     for m, p in zip(by_month, paid, strict=True)),
        committed_after_horizon_usd=committed_after_usd(needed, term_months=term, plan=plan) * gpu_price_scale,
        term_months=term)


def held_base_months(by_month: Sequence[_Month], *, bases: Sequence[int], term_months: int,
                     reprice: Callable[[int, int], _Month]) -> list[_Month]:
    """Each month of a mixed fleet whose reserved base is held for its term: a month whose committed base
    (`committed_replicas` over `bases`) exceeds its own cheapest base is re-priced at the held base
    (`reprice(month index, base)`: mixed.py at k = base); the other months stay as they are."""
    held, _ = committed_replicas(bases, term_months=term_months)
    return [reprice(k, h) if h != b else month
            for k, (month, b, h) in enumerate(zip(by_month, bases, held, strict=True))]


def mixed_horizon(by_month: Sequence[MonthFleet], months: Sequence[Scenario], *,
                  planned: PlanMonths) -> OptionHorizon | None:
    """A mixed fleet whose base is a reserved row with a term: the base replicas committed in month k stay
    paid through k+T-1 (`committed_replicas` over each month's base); None when not mixed or no term."""
    plan = planned.plan
    term = plan.term_months
    if term is None or plan.fleet.scaling != "mixed":
        return None
    bases = [m.cost.base_replicas or 0 for m in by_month]
    priced = held_base_months(by_month, bases=bases, term_months=term,
                              reprice=lambda k, base: planned.month(months[k], base_replicas=base))
    return OptionHorizon(months=tuple(_month_cost(m) for m in priced),
                         committed_after_horizon_usd=committed_after_usd(bases, term_months=term, plan=plan),
                         term_months=term)


def hybrid_horizon(self_host: Sequence[MonthFleet], months: Sequence[Scenario], *, result: OptionResult,
                   planned: PlanMonths, api: OptionResult) -> OptionHorizon:
    """The base-plus-overflow plan re-chosen on each month's self-host fleet and volume."""
    assert api.api_usd_per_request is not None
    feasible = planned.capacity.feasible
    out = [MonthCost(usd=result.usd_per_month, replicas=result.replicas, slo_status=result.slo_status)]
    for scenario, fleet in zip(months[1:], self_host[1:], strict=True):
        plan = hybrid_cost(planned.plan, mean_requests_per_second=scenario.workload.mean_requests_per_second(),
                           hourly_profile=planned.profile,
                           capacity_requests_per_second=planned.capacity.requests_per_second if feasible else 0.0,
                           api_usd_per_request=api.api_usd_per_request,
                           max_base_replicas=fleet.cost.replicas if feasible else 0)
        status = hybrid_slo_status(base_replicas=plan.base_replicas, overflow_fraction=plan.overflow_fraction,
                                   self_host_status=fleet.slo_status, api_status=api.slo_status,
                                   base_feasible=feasible)
        out.append(MonthCost(usd=plan.usd_per_month, replicas=plan.base_replicas, slo_status=status))
    return OptionHorizon(months=tuple(out))


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


def commits_past_horizon(horizon: OptionHorizon, *, horizon_months: int) -> bool:
    """True when the option signs for money after the horizon: USD still owed after its last month, or a reserved
    term longer than the horizon (what a ranking by month 0's $/month would leave out)."""
    return horizon.committed_after_horizon_usd > 0 or (horizon.term_months or 0) > horizon_months


def horizon_ranking_basis(scenario: Scenario, horizons: Sequence[OptionHorizon] = ()) -> RankingBasis:
    """Rank by the horizon total with commitments when the scenario (or --horizon-months) sets horizon_months,
    or when any of `horizons` (the usable options') commits past the horizon, whatever horizon_months' provenance:
    a 36-month term is what the plan signs for, not 12 x month 0. By $/month otherwise."""
    if "horizon_months" in scenario.model_fields_set or any(
            commits_past_horizon(h, horizon_months=scenario.horizon_months) for h in horizons):
        return "usd_horizon_total_with_commitments"
    return "usd_per_month"


def option_horizons(scenario: Scenario, results: dict[str, OptionResult], capacities: dict[str, tuple[Capacity, str]], *,
                    profile: tuple[float, ...]) -> dict[str, OptionHorizon]:
    """Each evaluated option over the horizon, from its month-0 result, its plan and its capacity."""
    months = month_scenarios(scenario)
    out: dict[str, OptionHorizon] = {}
    self_host: dict[str, tuple[MonthFleet, ...]] = {}
    planned: dict[str, PlanMonths] = {}
    for option in scenario.options:
        result = results[option.name]
        if result.excluded_reason is not None or not math.isfinite(result.usd_per_month):
            continue
        if isinstance(option, ApiOption):
            out[option.name] = api_horizon(result, months)
        elif isinstance(option, SelfHostOption) and result.plan is not None:
            planned[option.name] = plan_months(option, result, scenario, capacity=capacities[option.name][0],
                                               profile=profile)
            self_host[option.name] = self_host_months(result, months, planned=planned[option.name])
            out[option.name] = (mixed_horizon(self_host[option.name], months, planned=planned[option.name])
                                or self_host_horizon(self_host[option.name], plan=result.plan))
    for option in scenario.options:
        if isinstance(option, HybridOption) and option.name in results and option.self_host in self_host \
                and results[option.name].excluded_reason is None and math.isfinite(results[option.name].usd_per_month):
            out[option.name] = hybrid_horizon(self_host[option.self_host], months,
                                              result=results[option.name], planned=planned[option.self_host],
                                              api=results[option.api])
    return out
