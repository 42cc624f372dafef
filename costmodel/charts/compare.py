"""Curve data for the Compare charts (app and memo): $/month vs monthly volume with break-even points,
$/M tokens vs utilization, traffic over the day vs provisioned capacity. Pure data, no plotting.

Every number comes from `decide` and the economics it uses: the volume sweep re-runs the month-0
economics through `costmodel.decision.volume` (checked against `decide(overrides=...)` by its tests), the
utilization curve is the option plan's fixed bill (decision/plan.py `fixed_cost`) over the tokens served at
each utilization.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from costmodel.decision.capacity import CapacityCache
from costmodel.decision.plan import fixed_cost
from costmodel.decision.rank import decide
from costmodel.decision.result_parts import SloStatus
from costmodel.decision.results import Decision, OptionResult
from costmodel.decision.volume import Scaling, cost_model, throttled, usd_per_month
from costmodel.measurements.calibration import Calibration
from costmodel.pricing import ApiPriceRow, GpuPriceRow, PriceSheet
from costmodel.scenario import Scenario
from costmodel.units import SECONDS_PER_MONTH, TOKENS_PER_MTOK

# 1/100x .. 100x the scenario's volume, 8 points per decade (log-spaced), plus the scenario's own volume.
DEFAULT_VOLUME_SCALES: tuple[float, ...] = tuple(float(s) for s in np.logspace(-2.0, 2.0, 33))
DEFAULT_UTILIZATIONS: tuple[float, ...] = tuple(float(u) for u in np.linspace(0.05, 1.0, 39))

# What a chart legend appends to an option's name for its `slo_status`: nothing for a verdict the
# recommendation may rest on, the truth for the others (an unverified option has no latency evidence; it
# does not miss the SLO).
SLO_LEGEND_NOTES: dict[str, str] = {"meets": "", "likely_meets": "", "unverified": " (latency unverified)",
                                    "misses": " (misses SLO)"}


def slo_legend_note(status: SloStatus) -> str:
    """The legend suffix for an option's SLO verdict (memo and app charts both use it)."""
    return SLO_LEGEND_NOTES[status]


@dataclass(frozen=True)
class VolumeCurve:
    """One option's $/month over monthly volumes (first-order economics at month-0 prices and SLO verdicts)."""

    name: str
    kind: str
    tokens_per_month: tuple[float, ...]  # prompt + output tokens
    usd_per_month: tuple[float, ...]
    throttled: tuple[bool, ...]  # API rate limits passed at that volume
    slo_status: SloStatus  # the decision's verdict at today's load (the legend says it)


@dataclass(frozen=True)
class BreakEvenPoint:
    """Where a self-host option's $/month meets its reference API's."""

    option: str
    against: str
    tokens_per_month: float
    usd_per_month: float  # the API's $/month at that volume (= the self-host's)


@dataclass(frozen=True)
class UtilizationCurve:
    """$/M tokens of a self-host option's provisioned replicas (GPUs + ops) as utilization goes 5% .. 100%."""

    name: str
    utilization: tuple[float, ...]
    usd_per_mtok: tuple[float, ...]
    current_utilization: float | None  # the option's mean utilization in the scenario
    current_usd_per_mtok: float | None  # $/M at that utilization (on the curve; the option's own $/M)
    break_even_utilization: float | None
    break_even_against: str | None


@dataclass(frozen=True)
class CapacityLine:
    """Requests/s an option's provisioned replicas sustain at the SLO."""

    name: str
    kind: str
    replicas: int
    requests_per_second: float


@dataclass(frozen=True)
class TrafficChart:
    """Requests/s in each hour of the day against each option's provisioned capacity."""

    hours: tuple[int, ...]
    requests_per_second: tuple[float, ...]
    mean_requests_per_second: float
    capacities: tuple[CapacityLine, ...]


@dataclass(frozen=True)
class CompareView:
    """Everything the Compare page renders: the ranked decision and its chart data."""

    decision: Decision
    tokens_per_month: float  # the scenario's volume
    volume_curves: tuple[VolumeCurve, ...]
    break_evens: tuple[BreakEvenPoint, ...]
    utilization_curves: tuple[UtilizationCurve, ...]
    api_usd_per_mtok: tuple[tuple[str, float], ...]  # (API option, blended $/M)
    traffic: TrafficChart


def volume_curves(
    decision: Decision, scenario: Scenario, *, scales: Sequence[float] = DEFAULT_VOLUME_SCALES,
    api_sheet: PriceSheet[ApiPriceRow] | None = None,
) -> tuple[VolumeCurve, ...]:
    """$/month of every option at `scales` x the scenario's monthly volume."""
    model = cost_model(decision, scenario, api_sheet=api_sheet)
    grid = sorted(set(scales) | {1.0})
    return tuple(
        VolumeCurve(
            name=option.name,
            kind=option.kind,
            tokens_per_month=tuple(decision.tokens_per_month * s for s in grid),
            usd_per_month=tuple(usd_per_month(model, option.name, Scaling(volume=s)) for s in grid),
            throttled=tuple(throttled(model, option.name, Scaling(volume=s)) for s in grid),
            slo_status=decision.option(option.name).slo_status,
        )
        for option in model.options
    )


def break_even_points(decision: Decision, scenario: Scenario, *,
                      api_sheet: PriceSheet[ApiPriceRow] | None = None) -> tuple[BreakEvenPoint, ...]:
    """Each self-host option's break-even volume against its reference API (where the option's $/month, its
    fleet re-sized for that volume, crosses the API's: decision/breakeven.py), placed on the API's curve."""
    model = cost_model(decision, scenario, api_sheet=api_sheet)
    points = []
    for result in decision.usable_options:
        volume, against = result.break_even_tokens_per_month, result.break_even_against
        if volume is None or against is None or decision.tokens_per_month <= 0:
            continue
        scale = volume / decision.tokens_per_month
        points.append(BreakEvenPoint(option=result.name, against=against, tokens_per_month=volume,
                                     usd_per_month=usd_per_month(model, against, Scaling(volume=scale))))
    return tuple(points)


def utilization_curve(result: OptionResult, *, utilizations: Sequence[float] = DEFAULT_UTILIZATIONS,
                      tokens_per_request: float) -> UtilizationCurve | None:
    """$/M of a self-host option's provisioned replicas (GPUs and ops) at each utilization; None without capacity.

    The replica count is the scenario's (sized for its peak); utilization u means a mean load of
    u x replicas x capacity. At u = break-even utilization the curve meets the reference API's $/M."""
    capacity = result.capacity_requests_per_second
    plan = result.plan  # every self-host result decide builds carries the plan it was costed from
    if result.kind != "self-host" or not capacity or plan is None:
        return None
    replicas = max(result.replicas, 1)
    full_rate = replicas * capacity
    # The provisioned fleet's bill is fixed; only the tokens it serves change with u (decision/plan.py fixed_cost:
    # the same bill decide, the sweep and the horizon price).
    monthly_usd = fixed_cost(plan, replicas=replicas).usd_per_month

    def at(utilization: float) -> float:
        tokens_per_month = utilization * full_rate * tokens_per_request * SECONDS_PER_MONTH
        return monthly_usd / (tokens_per_month / TOKENS_PER_MTOK) if tokens_per_month > 0 else math.inf

    current = result.utilization
    return UtilizationCurve(
        name=result.name,
        utilization=tuple(utilizations),
        usd_per_mtok=tuple(at(u) for u in utilizations),
        current_utilization=current,
        current_usd_per_mtok=at(current) if current else None,
        break_even_utilization=result.break_even_utilization,
        break_even_against=result.break_even_against,
    )


def traffic_chart(decision: Decision) -> TrafficChart:
    """The day's hourly request rate (profile x mean rate) and each option's provisioned capacity."""
    capacities = tuple(
        CapacityLine(name=r.name, kind=r.kind, replicas=r.replicas,
                     requests_per_second=r.replicas * r.capacity_requests_per_second)
        for r in decision.usable_options
        if r.kind != "api" and r.capacity_requests_per_second and r.replicas > 0
    )
    return TrafficChart(
        hours=tuple(range(len(decision.hourly_profile))),
        requests_per_second=tuple(f * decision.mean_requests_per_second for f in decision.hourly_profile),
        mean_requests_per_second=decision.mean_requests_per_second,
        capacities=capacities,
    )


def compare_view(
    scenario: Scenario, *, calibration: Calibration | None = None,
    api_sheet: PriceSheet[ApiPriceRow] | None = None, gpu_sheet: PriceSheet[GpuPriceRow] | None = None,
    volume_scales: Sequence[float] = DEFAULT_VOLUME_SCALES,
    capacity_cache: CapacityCache | None = None,
) -> CompareView:
    """One call for the Compare page: `decide` plus the chart data derived from it."""
    decision = decide(scenario, calibration=calibration, api_sheet=api_sheet, gpu_sheet=gpu_sheet,
                      capacity_cache=capacity_cache)
    if decision.recommendation is None:  # nothing feasible: no option to chart (the table says why)
        return CompareView(decision=decision, tokens_per_month=decision.tokens_per_month, volume_curves=(),
                           break_evens=(), utilization_curves=(), api_usd_per_mtok=(), traffic=traffic_chart(decision))
    tokens_per_request = decision.mean_prompt_tokens + decision.mean_output_tokens
    curves = (utilization_curve(r, tokens_per_request=tokens_per_request) for r in decision.usable_options)
    return CompareView(
        decision=decision,
        tokens_per_month=decision.tokens_per_month,
        volume_curves=volume_curves(decision, scenario, scales=volume_scales, api_sheet=api_sheet),
        break_evens=break_even_points(decision, scenario, api_sheet=api_sheet),
        utilization_curves=tuple(c for c in curves if c is not None),
        api_usd_per_mtok=tuple((r.name, r.usd_per_mtok) for r in decision.usable_options if r.kind == "api"),
        traffic=traffic_chart(decision),
    )
