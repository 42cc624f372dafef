"""Data behind the memo's charts (no plotting): cost vs volume, throughput vs interactivity, traffic vs
provisioned capacity over the day, KV memory vs concurrency. Every number comes from the decision, the
economics sweep (`costmodel.decision.volume`), the serving simulator's curve (`costmodel.serving`) or
`costmodel.charts.roofline`, so charts and tables agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from costmodel.catalog.loader import load_accelerator
from costmodel.charts.roofline import memory_grid
from costmodel.decision.result_parts import SloStatus
from costmodel.decision.results import Decision, OptionResult
from costmodel.decision.sensitivity import Sensitivity
from costmodel.decision.volume import CostModel, Scaling, throttled, usd_per_month
from costmodel.measurements.calibration import Calibration
from costmodel.scenario import Scenario, SelfHostOption, TokenDistribution
from costmodel.serving import build_replica, throughput_interactivity_curve

MAX_PANELS = 3  # self-host options drawn in the per-option charts (ranked order)
TAIL_QUANTILE = 0.99  # the long-context case of the KV chart


@dataclass(frozen=True)
class VolumeSeries:
    name: str
    kind: str
    slo_status: SloStatus  # the decision's verdict: the legend labels it (charts/compare.py slo_legend_note)
    usd_per_month: tuple[float, ...]


@dataclass(frozen=True)
class VolumeCurves:
    """$/month of every option over a range of monthly volumes (x = prompt + output tokens/month)."""

    tokens_per_month: tuple[float, ...]
    series: tuple[VolumeSeries, ...]
    current_tokens_per_month: float
    break_evens: tuple[tuple[str, float], ...]  # (self-host option, tokens/month vs its reference API)
    flips: tuple[float, ...]  # tokens/month where the recommendation changes


@dataclass(frozen=True)
class InteractivityCurve:
    """Simulated throughput per GPU vs tokens/s per user over a concurrency sweep (closed loop)."""

    name: str
    concurrency: tuple[int, ...]
    tokens_per_second_per_user: tuple[float, ...]  # 1 / mean TPOT
    output_tokens_per_second_per_gpu: tuple[float, ...]
    meets_tpot_limit: tuple[bool, ...]  # p90 TPOT of that point within the SLO
    operating_tokens_per_second_per_user: float | None  # the option's operating point at the SLO
    operating_output_tokens_per_second_per_gpu: float | None


@dataclass(frozen=True)
class TrafficCurves:
    """Requests/s in each hour of the day (month 0) against what each option provisions."""

    requests_per_second: tuple[float, ...]  # 24 hours
    provisioned: tuple[tuple[str, float], ...]  # (option, replicas x capacity requests/s)


@dataclass(frozen=True)
class KvPanel:
    """Memory per GPU vs concurrent sequences at the mean and a long-tail context, for one option."""

    name: str
    batches: tuple[int, ...]
    contexts_tokens: tuple[int, ...]
    total_bytes_per_gpu: tuple[tuple[float, ...], ...]  # per context, per batch
    hbm_bytes_per_gpu: float
    fixed_bytes_per_gpu: float  # weights + workspace + reserve
    max_batch: tuple[int, ...]  # per context
    peak_concurrency: float | None  # sequences in flight per replica in the peak hour (Little's law)


def quantile_tokens(distribution: TokenDistribution, *, quantile: float) -> float:
    """Smallest token count t with P(X > t) <= 1 - quantile (bisection on the closed-form tail)."""
    tail = 1.0 - quantile
    high = max(1.0, distribution.expected_tokens())
    while distribution.probability_above(high) > tail:
        high *= 2.0
    low = 0.0
    for _ in range(60):
        middle = (low + high) / 2.0
        low, high = (middle, high) if distribution.probability_above(middle) > tail else (low, middle)
    return math.ceil(high)


def volume_range(decision: Decision, sensitivity: Sensitivity) -> tuple[float, float]:
    """Volume multiples for the cost chart: 1/10x .. 10x, widened to show flips and break-evens (<= 100x)."""
    marks = [f.volume_scale for f in (sensitivity.flip_below, sensitivity.flip_above) if f is not None]
    marks += [o.break_even_tokens_per_month / decision.tokens_per_month for o in decision.usable_options
              if o.break_even_tokens_per_month]
    low = min([0.1] + [m / 2.0 for m in marks])
    high = max([10.0] + [m * 2.0 for m in marks])
    return max(low, 0.01), min(high, 100.0)


def volume_curves(decision: Decision, model: CostModel, sensitivity: Sensitivity, *, points: int = 160) -> VolumeCurves:
    """Each feasible option's $/month from `volume_range` low to high (log-spaced); NaN (not drawn) at the
    volumes where its API rate limits throttle it, so no line runs beyond where the option is feasible."""
    low, high = volume_range(decision, sensitivity)
    scales = np.logspace(math.log10(low), math.log10(high), points)

    def cost(name: str, scale: float) -> float:
        scaling = Scaling(volume=scale)
        return math.nan if throttled(model, name, scaling) else usd_per_month(model, name, scaling)

    series = tuple(
        VolumeSeries(o.name, o.kind, o.slo_status, tuple(cost(o.name, float(s)) for s in scales))
        for o in decision.usable_options
    )
    flips = tuple(f.tokens_per_month for f in (sensitivity.flip_below, sensitivity.flip_above) if f is not None)
    return VolumeCurves(
        tokens_per_month=tuple(float(s) * decision.tokens_per_month for s in scales),
        series=series,
        current_tokens_per_month=decision.tokens_per_month,
        break_evens=tuple((o.name, o.break_even_tokens_per_month) for o in decision.usable_options
                          if o.kind == "self-host" and o.break_even_tokens_per_month),
        flips=flips,
    )


def self_host_options(decision: Decision, scenario: Scenario) -> tuple[tuple[OptionResult, SelfHostOption], ...]:
    """Up to MAX_PANELS self-host options that can meet the SLO, in ranked order, with their scenario entries."""
    found = []
    for result in decision.usable_options:
        option = scenario.option(result.name)
        if isinstance(option, SelfHostOption) and (result.capacity_requests_per_second or 0) > 0:
            found.append((result, option))
    return tuple(found[:MAX_PANELS])


def _matching(calibration: Calibration | None, hardware_id: str) -> Calibration | None:
    return calibration if calibration is not None and calibration.hardware_id == hardware_id else None


def interactivity_curves(decision: Decision, scenario: Scenario, *,
                         calibration: Calibration | None = None) -> tuple[InteractivityCurve, ...]:
    """The serving simulator's throughput-vs-interactivity curve per self-host option (the scenario's token
    distributions and prefix-cache share, seed 0), with the decision's operating point."""
    curves = []
    workload = scenario.workload
    for result, option in self_host_options(decision, scenario):
        replica = build_replica(option.model, load_accelerator(option.hardware), gpus=option.gpus_per_replica,
                                weight_dtype=option.weight_dtype, kv_dtype=option.kv_dtype,
                                calibration=_matching(calibration, option.hardware))
        points = throughput_interactivity_curve(
            replica, prompt_tokens=workload.prompt_tokens, output_tokens=workload.output_tokens,
            prefix_cached_fraction=min(workload.cached_prompt_fraction, 0.99), seed=0,
        ) if replica.fits else ()
        operating_user = operating_gpu = None
        if result.tpot_p90_seconds and result.capacity_requests_per_second:
            operating_user = 1.0 / result.tpot_p90_seconds
            operating_gpu = (result.capacity_requests_per_second * decision.mean_output_tokens
                             / option.gpus_per_replica)
        curves.append(InteractivityCurve(
            name=result.name,
            concurrency=tuple(p.concurrency for p in points),
            tokens_per_second_per_user=tuple(p.output_tokens_per_second_per_user for p in points),
            output_tokens_per_second_per_gpu=tuple(p.output_tokens_per_second_per_gpu for p in points),
            meets_tpot_limit=tuple(p.tpot_p90_seconds <= scenario.slo.tpot_p90_seconds for p in points),
            operating_tokens_per_second_per_user=operating_user,
            operating_output_tokens_per_second_per_gpu=operating_gpu,
        ))
    return tuple(curves)


def traffic_curves(decision: Decision) -> TrafficCurves:
    """Hourly demand (mean x profile) and each self-host / hybrid option's provisioned requests/s."""
    provisioned = tuple(
        (o.name, o.replicas * (o.capacity_requests_per_second or 0.0)) for o in decision.usable_options
        if o.kind != "api" and o.replicas > 0 and (o.capacity_requests_per_second or 0) > 0
    )
    return TrafficCurves(
        requests_per_second=tuple(decision.mean_requests_per_second * f for f in decision.hourly_profile),
        provisioned=provisioned,
    )


def peak_concurrency(decision: Decision, result: OptionResult) -> float | None:
    """Sequences in flight per replica in the peak hour: L = lambda x W (Little's law), with
    lambda = peak requests/s / replicas and W = TTFT + (mean output - 1) x TPOT at the option's p90 latencies."""
    if not result.replicas or not result.ttft_p90_seconds or not result.tpot_p90_seconds:
        return None
    per_replica = decision.peak_requests_per_second / result.replicas
    if result.capacity_requests_per_second:
        per_replica = min(per_replica, result.capacity_requests_per_second)  # hybrid bases overflow above it
    seconds = result.ttft_p90_seconds + max(decision.mean_output_tokens - 1.0, 0.0) * result.tpot_p90_seconds
    return per_replica * seconds


def kv_panels(decision: Decision, scenario: Scenario) -> tuple[KvPanel, ...]:
    """Memory per GPU vs concurrency at the mean context and the p99 prompt + p99 output context."""
    workload = scenario.workload
    mean_context = round(decision.mean_prompt_tokens + decision.mean_output_tokens)
    tail_context = round(quantile_tokens(workload.prompt_tokens, quantile=TAIL_QUANTILE)
                         + quantile_tokens(workload.output_tokens, quantile=TAIL_QUANTILE))
    contexts = sorted({max(mean_context, 1), max(tail_context, 1)})
    panels = []
    for result, option in self_host_options(decision, scenario):
        concurrency = peak_concurrency(decision, result)
        probe = memory_grid(option.model, option.hardware, batches=[1], contexts_tokens=contexts,
                            gpus=option.gpus_per_replica, weight_dtype=option.weight_dtype, kv_dtype=option.kv_dtype)
        top = max(list(probe.max_batch) + [math.ceil(concurrency or 0), 8])
        batches = sorted({int(b) for b in np.unique(np.linspace(1, math.ceil(top * 1.3), 64).round())})
        grid = memory_grid(option.model, option.hardware, batches=batches, contexts_tokens=contexts,
                           gpus=option.gpus_per_replica, weight_dtype=option.weight_dtype, kv_dtype=option.kv_dtype)
        panels.append(KvPanel(
            name=result.name, batches=grid.batches, contexts_tokens=grid.contexts_tokens,
            total_bytes_per_gpu=tuple(tuple(float(v) for v in row) for row in grid.total_bytes_per_gpu),
            hbm_bytes_per_gpu=grid.hbm_bytes_per_gpu,
            fixed_bytes_per_gpu=float(grid.total_bytes_per_gpu[0, 0] - grid.kv_bytes_per_gpu[0, 0]),
            max_batch=grid.max_batch, peak_concurrency=concurrency,
        ))
    return tuple(panels)
