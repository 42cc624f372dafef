"""What-if data for the Compare page: the sensitivity tornado and flip volumes (the memo's section 5, same
functions), and every option's $/month at a volume multiplier. Pure data, no plotting.

The volume multiplier re-runs the month-0 economics through `costmodel.decision.volume` (the sweep the
volume chart and the flip search use, checked against `decide(overrides=Overrides(volume=...))` by its
tests): API cost scales with tokens, self-hosted fleets re-size replica by replica at the same capacity.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from costmodel.decision.capacity import CapacityCache
from costmodel.decision.result_parts import SloStatus
from costmodel.decision.results import Decision
from costmodel.decision.sensitivity import DEFAULT_FRACTION, Sensitivity, sensitivity
from costmodel.decision.volume import CostModel, Scaling, cost_model, throttled, usd_per_month
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.pricing import ApiPriceRow, PriceSheet
from costmodel.scenario import Scenario

MIN_MULTIPLIER, MAX_MULTIPLIER = 0.01, 100.0  # the range the volume sweep and flip search cover


@dataclass(frozen=True)
class WhatIf:
    """The economics model of one decision and its sensitivity (tornado bars, flip volumes)."""

    model: CostModel
    sensitivity: Sensitivity


@dataclass(frozen=True)
class WhatIfRow:
    """One option at `multiplier` x today's volume."""

    name: str
    kind: str
    usd_per_month: float
    usd_per_month_today: float
    meets_slo: bool  # the verdict at today's load (the sweep keeps capacity per replica fixed)
    slo_status: SloStatus  # that verdict typed (an unverified option does not miss the SLO)
    throttled: bool  # API rate limits passed at the scaled volume


def whatif(scenario: Scenario, decision: Decision, *, calibration: Calibration | None = None,
           today: dt.date | None = None, api_sheet: PriceSheet[ApiPriceRow] | None = None,
           capacity_cache: CapacityCache | None = None, fraction: float = DEFAULT_FRACTION) -> WhatIf | None:
    """Sensitivity of `decision` (None when nothing is recommended: there is no advantage to move).

    Pass the `capacity_cache` the decision was made with so no capacity is simulated again."""
    if decision.recommendation is None:
        return None
    model = cost_model(decision, scenario, api_sheet=api_sheet)
    sens = sensitivity(scenario, decision, model, calibration=calibration, today=today, fraction=fraction,
                       capacity_cache=capacity_cache)
    return WhatIf(model=model, sensitivity=sens)


def at_volume(decision: Decision, model: CostModel, *, multiplier: float) -> tuple[WhatIfRow, ...]:
    """Every usable option's $/month at `multiplier` x today's volume, cheapest first."""
    if not (math.isfinite(multiplier) and MIN_MULTIPLIER <= multiplier <= MAX_MULTIPLIER):
        raise CostmodelError(f"volume multiplier must be a number in {MIN_MULTIPLIER:g}..{MAX_MULTIPLIER:g}, "
                             f"got {multiplier!r}; pick a multiple of today's volume in that range")
    scaling = Scaling(volume=multiplier)
    rows = [
        WhatIfRow(name=o.name, kind=o.kind, usd_per_month=usd_per_month(model, o.name, scaling),
                  usd_per_month_today=o.usd_per_month, meets_slo=o.meets_slo, slo_status=o.slo_status,
                  throttled=throttled(model, o.name, scaling))
        for o in decision.usable_options
    ]
    return tuple(sorted(rows, key=lambda r: (not r.meets_slo or r.throttled, r.usd_per_month)))
