"""The cost the decision ranks by, at scaled inputs: $/month, or the horizon total with commitments.

When the ranking compares the horizon total with the commitments still owed after it (decision/ranking.py), the
sensitivity's advantages and flip volumes must compare the same thing, or a reserved option cheaper in month 0
would "beat" the recommendation it lost to. At volume multiple s, month m carries s x (1 + g)^m of month 0's
volume (decision/horizon.py); each month is costed by the sweep's `usd_per_month` / `plan_cost_at` (the
decision's own plan_cost), and a reserved term is held by horizon.py's own functions (`self_host_horizon`,
`committed_replicas`, `committed_after_usd`), GPU prices scaled. Flat volume (g = 0) costs one month, not twelve.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from costmodel.decision.horizon import MonthFleet, committed_after_usd, held_base_months, self_host_horizon
from costmodel.decision.volume import AS_GIVEN, plan_cost_at, usd_per_month
from costmodel.decision.volume_model import CostModel, Scaling

RANKED_ON_HORIZON = "usd_horizon_total_with_commitments"
_T = TypeVar("_T")


def _months(model: CostModel, scaling: Scaling) -> list[Scaling]:
    growth = model.growth_per_month
    if growth == 0:
        return [scaling]
    return [replace(scaling, volume=scaling.volume * (1 + growth) ** m) for m in range(model.horizon_months)]


def _repeat(values: list[_T], model: CostModel) -> list[_T]:
    """Every month's value: a flat volume's one month repeated over the horizon."""
    return values * model.horizon_months if len(values) == 1 else values


def ranked_usd(model: CostModel, name: str, scaling: Scaling = AS_GIVEN) -> float:
    """Option `name`'s cost on the decision's ranking basis under `scaling` (module docstring)."""
    if model.ranking_basis != RANKED_ON_HORIZON:
        return usd_per_month(model, name, scaling)
    months = _months(model, scaling)
    option = model.option(name)
    plan = option.plan
    if option.kind != "self-host" or plan is None or plan.term_months is None \
            or plan.fleet.scaling not in ("fixed", "mixed"):
        total = sum(usd_per_month(model, name, s) for s in months)
        return total * model.horizon_months if len(months) == 1 else total
    costs = _repeat([plan_cost_at(model, name, s) for s in months], model)
    scale = scaling.usd_per_gpu_hour
    if plan.fleet.scaling == "fixed":
        horizon = self_host_horizon([MonthFleet(cost=c, slo_status="meets") for c in costs], plan=plan,
                                    gpu_price_scale=scale)
        return sum(horizon.usd_by_month) + horizon.committed_after_horizon_usd
    bases = [c.base_replicas or 0 for c in costs]  # mixed: the committed base held (decision/horizon.py)
    every = _repeat(months, model)
    paid = held_base_months(costs, bases=bases, term_months=plan.term_months,
                            reprice=lambda k, base: plan_cost_at(model, name, every[k], base_replicas=base))
    return sum(c.usd_per_month for c in paid) + committed_after_usd(bases, term_months=plan.term_months, plan=plan) * scale
