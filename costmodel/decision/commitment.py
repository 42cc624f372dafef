"""What a reserved term past the horizon adds to an option's cost when its month-0 fleet is held constant.

The one formula the deployment search ranks by (search/costing.py, its bounds in search/cost_bound.py) so that it
ranks on the decision's basis (decision/ranking.py `ranking_basis`: the horizon total with commitments whenever a
usable option's reserved term runs past the horizon; docs/economics.md, docs/search.md):

- a reserved row with a term of T months commits the GPUs it bills (a fixed fleet: all of them; a mixed fleet:
  its base), exactly as decision/horizon.py `self_host_horizon` / `mixed_horizon` hold them; an autoscaled fleet,
  or a row without a term, commits nothing;
- held constant for the H months of the horizon, the option pays H x usd_per_month, and still owes
  (T - H) x committed_usd_per_month after it when T > H (`committed_after_usd` of H equal months);
- so its horizon total with commitments, per month of the horizon, is
  usd_per_month + (max(1, T / H) - 1) x committed_usd_per_month
  = the committed GPUs at max(1, T / H) x their $/GPU-hour plus everything else at month 0's.

The factor max(1, T / H) is per offering and multiplies a price, so a lower bound taken at the price x the factor is
a lower bound of this figure. The decision then re-ranks the searched options exactly (growth, re-sized month by
month, decision/horizon.py); with T <= H the figure is usd_per_month itself.
"""

from __future__ import annotations

from costmodel.decision.results import OptionResult
from costmodel.units import HOURS_PER_MONTH

COMMITTING_SCALINGS = frozenset({"fixed", "mixed"})  # the fleets decision/horizon.py holds a reserved term for


def commitment_factor(*, term_months: int | None, horizon_months: int, scaling: str = "fixed") -> float:
    """max(1, T / H) for a fleet of `scaling` on a row with a term of `term_months` (1.0 without a term, when the
    term ends within the horizon, or for a fleet the horizon holds no term for)."""
    if term_months is None or scaling not in COMMITTING_SCALINGS or term_months <= horizon_months:
        return 1.0
    return term_months / horizon_months


def held_fleet_usd_per_month(*, usd_per_month: float, committed_usd_per_month: float, term_months: int | None,
                             horizon_months: int, scaling: str = "fixed") -> float:
    """The horizon total with commitments per month of the horizon, the month-0 fleet held constant:
    usd_per_month + (max(1, T / H) - 1) x committed_usd_per_month (module docstring); usd_per_month itself
    when nothing is owed after the horizon."""
    factor = commitment_factor(term_months=term_months, horizon_months=horizon_months, scaling=scaling)
    if factor == 1.0:
        return usd_per_month
    return usd_per_month + (factor - 1.0) * committed_usd_per_month


def committed_usd_per_month(result: OptionResult) -> float:
    """The $/month a self-host result's reserved term commits: its billed GPUs (a mixed fleet: the base's) x the
    row's $/GPU-hour x 730.5 h, as decision/horizon.py `committed_after_usd` prices a committed month; 0 without a
    term or a plan."""
    plan = result.plan
    if plan is None or plan.term_months is None or plan.fleet.scaling not in COMMITTING_SCALINGS:
        return 0.0
    replicas = result.replicas if plan.fleet.scaling == "fixed" else (result.base_replicas or 0)
    return plan.packing.gpus_billed(replicas) * plan.usd_per_gpu_hour * HOURS_PER_MONTH


def held_fleet_ranking_usd_per_month(result: OptionResult, *, horizon_months: int) -> float:
    """`held_fleet_usd_per_month` of a self-host result (its plan's term and scaling)."""
    plan = result.plan
    if plan is None:
        return result.usd_per_month
    return held_fleet_usd_per_month(usd_per_month=result.usd_per_month,
                                    committed_usd_per_month=committed_usd_per_month(result),
                                    term_months=plan.term_months, horizon_months=horizon_months,
                                    scaling=plan.fleet.scaling)


def committed_term_months(result: OptionResult, *, horizon_months: int) -> int | None:
    """The result's reserved term when it runs past the horizon and the fleet holds it, else None."""
    plan = result.plan
    if plan is None or commitment_factor(term_months=plan.term_months, horizon_months=horizon_months,
                                         scaling=plan.fleet.scaling) == 1.0:
        return None
    return plan.term_months
