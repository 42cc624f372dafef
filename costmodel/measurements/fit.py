"""Fit eff_compute, eff_memory, overhead and the small-GEMM half-saturation to probe points.

Model (costmodel.roofline.step_arrays, one formula): for each op i of a step,
    seconds_i = max(FLOPs_i / (peak * eff_compute * s(m)), bytes_i / (bandwidth * eff_memory))
    step = sum_i seconds_i + overhead,
with peak and bandwidth the probe's measured microbenchmark rates and s(m) the GEMM saturation at m
rows (see roofline.gemm_saturation). Writing a = 1/eff_compute, b = 1/eff_memory, each op is
max(a * c_i, b * m_i) with c_i, m_i its compute-only and memory-only seconds at full efficiency, so for
a fixed half-saturation h the step time is piecewise linear in (a, b, overhead). We minimise the squared
*relative* error by alternating: fix which side of each max wins, solve the 3-variable bounded linear
least squares, repeat until the sides stop changing (several starts, best kept). h is searched on a
log grid and refined by golden-section search. Every 4th measured point is held out of the fit and only used to report the error.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from costmodel.catalog.loader import load_accelerator
from costmodel.catalog.params import ModelShape
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import (
    MAX_HOLDOUT_MEDIAN_ABS_ERROR,
    Calibration,
    holdout_error_message,
)
from costmodel.measurements.probe_result import ProbeResult, predict_arrays, sliced_shape
from costmodel.roofline import Efficiency

HOLDOUT_EVERY = 4  # points 3, 7, 11, ... (0-based, in measured order) are held out
MIN_POINTS = 8
MIN_POINTS_PER_PHASE = 2  # prefill (compute-bound) and decode (memory-bound) points pin different factors
# Calibration's bound: the efficiencies are fractions of the probe's measured peaks. (A GEMV that only reads
# can beat the copy rate, which also writes; the fit then stops at 1 and the residual shows in the error.)
MAX_EFFICIENCY = 1.0
HALF_SATURATION_GRID = (0.0, *np.geomspace(1.0, 8192.0, 14).tolist())  # GEMM rows; 0 = no penalty
WEIGHT_READS_GRID = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0)  # rows; 1 = weights read once
HUGE = 1e30  # an efficiency so large that its side of the max vanishes


@dataclass(frozen=True)
class PointFit:
    """One measured point with its calibrated prediction."""

    phase: str
    batch: int
    new_tokens: int
    context_tokens: int
    measured_seconds: float
    roofline_seconds: float  # measured roofline, before calibration
    calibrated_seconds: float
    holdout: bool

    @property
    def abs_error(self) -> float:
        return abs(self.calibrated_seconds - self.measured_seconds) / self.measured_seconds


@dataclass(frozen=True)
class CalibrationFit:
    """Fitted factors and their errors (fractions of the measured time)."""

    efficiency: Efficiency
    points: tuple[PointFit, ...]
    holdout_median_abs_error: float
    holdout_max_abs_error: float
    fit_median_abs_error: float
    fit_max_abs_error: float

    @property
    def points_fit(self) -> int:
        return sum(not p.holdout for p in self.points)

    @property
    def points_holdout(self) -> int:
        return sum(p.holdout for p in self.points)


@dataclass(frozen=True)
class _Data:
    compute: np.ndarray  # [ops, points] seconds at eff_compute = 1 (with the GEMM saturation applied)
    memory: np.ndarray  # [ops, points] seconds at eff_memory = 1
    measured: np.ndarray  # [points]


def _op_seconds(result: ProbeResult, shape: ModelShape, arrays: dict[str, np.ndarray], *, eff_c: float,
                eff_m: float, half: float, reads: float) -> np.ndarray:
    raw = predict_arrays(
        shape, dtype=result.environment.dtype, peak_flops_per_s=result.peak_flops_per_s,
        hbm_bytes_per_s=result.copy_bytes_per_s,
        efficiency=Efficiency(eff_compute=eff_c, eff_memory=eff_m, overhead_seconds_per_step=0.0,
                              compute_half_saturation_tokens=half, weight_reads_max_rows=reads),
        **arrays,
    )
    return np.array([np.broadcast_to(s, arrays["batch"].shape) for s in raw.op_seconds], dtype=np.float64)


def _data(result: ProbeResult, shape: ModelShape, arrays: dict[str, np.ndarray], half: float, reads: float) -> _Data:
    measured = np.array([p.seconds_median for p in result.ok_points], dtype=np.float64)
    return _Data(
        compute=_op_seconds(result, shape, arrays, eff_c=1.0, eff_m=HUGE, half=half, reads=reads),
        memory=_op_seconds(result, shape, arrays, eff_c=HUGE, eff_m=1.0, half=half, reads=reads),
        measured=measured,
    )


def _predict(data: _Data, params: np.ndarray) -> np.ndarray:
    a, b, overhead = params
    return np.maximum(a * data.compute, b * data.memory).sum(axis=0) + overhead


def _loss(data: _Data, params: np.ndarray, mask: np.ndarray) -> float:
    rel = (_predict(data, params) - data.measured) / data.measured
    return float(np.sum(rel[mask] ** 2))


def _solve_small(matrix: list[list[float]], rhs: list[float]) -> list[float] | None:
    """Solve a 1x1..3x3 linear system by Cramer's rule (None if singular); plain floats are fast here."""
    n = len(rhs)
    if n == 1:
        return [rhs[0] / matrix[0][0]] if matrix[0][0] else None

    def det(m: list[list[float]]) -> float:
        if len(m) == 2:
            return m[0][0] * m[1][1] - m[0][1] * m[1][0]
        return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))

    whole = det(matrix)
    if abs(whole) < 1e-300:
        return None
    return [det([[rhs[r] if c == k else matrix[r][c] for c in range(n)] for r in range(n)]) / whole for k in range(n)]


def _bounded_lstsq(design: np.ndarray, target: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """min |design x - target|^2 subject to x >= lower; 3 variables, so try every set of clamped ones.

    Works on the normal equations (G = D'D, h = D't): cost(x) = x'Gx - 2h'x + const.
    """
    gram, rhs, low = (design.T @ design).tolist(), (design.T @ target).tolist(), lower.tolist()
    best, best_cost = low, np.inf
    for clamped in itertools.product((False, True), repeat=len(low)):
        free = [i for i, c in enumerate(clamped) if not c]
        x = list(low)
        if free:
            sub = [[gram[i][j] for j in free] for i in free]
            sub_rhs = [rhs[i] - sum(gram[i][j] * low[j] for j in range(len(low)) if clamped[j]) for i in free]
            solved = _solve_small(sub, sub_rhs)
            if solved is None:
                continue
            for i, value in zip(free, solved, strict=True):
                x[i] = value
        if any(v < lo - 1e-12 for v, lo in zip(x, low, strict=True)):
            continue
        cost = sum(x[i] * gram[i][j] * x[j] for i in range(3) for j in range(3)) - 2.0 * sum(
            r * v for r, v in zip(rhs, x, strict=True))
        if cost < best_cost:
            best, best_cost = x, cost
    return np.array(best)


def _fit_linear(data: _Data, mask: np.ndarray) -> tuple[np.ndarray, float]:
    """Best (a, b, overhead) for fixed saturation, by alternating sides of each max (several starts)."""
    lower = np.array([1.0 / MAX_EFFICIENCY, 1.0 / MAX_EFFICIENCY, 0.0])
    best, best_loss = lower, np.inf
    for start in ((1.0, 1.0), (1.0, 4.0), (4.0, 1.0), (10.0, 10.0)):
        params = np.array([*start, 0.0])
        for _ in range(50):
            compute_wins = params[0] * data.compute >= params[1] * data.memory
            design = np.stack(
                [
                    np.where(compute_wins, data.compute, 0.0).sum(axis=0),
                    np.where(compute_wins, 0.0, data.memory).sum(axis=0),
                    np.ones_like(data.measured),
                ],
                axis=1,
            ) / data.measured[:, None]
            new = _bounded_lstsq(design[mask], np.ones(int(mask.sum())), lower)
            if np.allclose(new, params, rtol=1e-9, atol=1e-15):
                break
            params = new
        loss = _loss(data, params, mask)
        if loss < best_loss:
            best, best_loss = params, loss
    return best, best_loss


Trial = tuple[float, tuple[float, float], np.ndarray]  # (loss, (half, reads), (a, b, overhead))


def _refine(evaluate: Callable[[float], Trial], grid: tuple[float, ...], value: float, best: Trial) -> Trial:
    """Golden-section search in log space between the grid neighbours of `value` (> 0)."""
    positive = sorted(v for v in grid if v > 0)
    if value <= 0 or len(positive) < 2:
        return best
    index = min(range(len(positive)), key=lambda i: abs(np.log(positive[i] / value)))
    lo, hi = np.log(positive[max(index - 1, 0)]), np.log(positive[min(index + 1, len(positive) - 1)])
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(12):  # the bracket shrinks to 0.618^12 ~ 3e-3 of its log width
        left, right = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        at_left, at_right = evaluate(float(np.exp(left))), evaluate(float(np.exp(right)))
        best = min((best, at_left, at_right), key=lambda trial: trial[0])
        if at_left[0] <= at_right[0]:
            hi = right
        else:
            lo = left
    return best


def _search(evaluate: Callable[[float, float], Trial], half_grid: tuple[float, ...],
            reads_grid: tuple[float, ...]) -> Trial:
    """Best (half-saturation, weight reads): the joint grid, then two passes of per-coordinate refinement."""
    best = min((evaluate(half, reads) for half in half_grid for reads in reads_grid), key=lambda trial: trial[0])
    for _ in range(2):
        best = _refine(partial(_with_reads, evaluate, best[1][1]), half_grid, best[1][0], best)
        best = _refine(partial(_with_half, evaluate, best[1][0]), reads_grid, best[1][1], best)
    return best


def _with_reads(evaluate: Callable[[float, float], Trial], reads: float, half: float) -> Trial:
    return evaluate(half, reads)


def _with_half(evaluate: Callable[[float, float], Trial], half: float, reads: float) -> Trial:
    return evaluate(half, reads)


def holdout_mask(count: int) -> np.ndarray:
    """True for held-out points: every HOLDOUT_EVERY-th, starting at index HOLDOUT_EVERY - 1."""
    return (np.arange(count) % HOLDOUT_EVERY) == HOLDOUT_EVERY - 1


def _check_phases(result: ProbeResult) -> None:
    """Refuse an incomplete probe: the fit needs measured points of both phases."""
    for phase in ("prefill", "decode"):
        count = sum(p.phase == phase for p in result.ok_points)
        if count < MIN_POINTS_PER_PHASE:
            interrupted = " (the probe was interrupted: complete is false)" if not result.complete else ""
            raise CostmodelError(
                f"the probe result has {count} measured {phase} point(s){interrupted}; the fit needs at least "
                f"{MIN_POINTS_PER_PHASE} prefill and {MIN_POINTS_PER_PHASE} decode points (field 'points'); "
                "rerun `costmodel probe` to the end"
            )


def fit_calibration(
    result: ProbeResult,
    *,
    half_saturation_grid: tuple[float, ...] = HALF_SATURATION_GRID,
    weight_reads_grid: tuple[float, ...] = WEIGHT_READS_GRID,
) -> CalibrationFit:
    """Least-squares fit of the efficiencies to the measured points of a probe (held-out error reported).

    `half_saturation_grid=(0.0,)` or `weight_reads_grid=(1.0,)` turns a small-GEMM term off (to see what
    it buys).
    """
    points = result.ok_points
    if len(points) < MIN_POINTS:
        raise CostmodelError(
            f"the probe result has {len(points)} measured points; the fit needs at least {MIN_POINTS} "
            "(rerun `costmodel probe`, with more memory or a smaller --model if points did not fit)"
        )
    _check_phases(result)
    shape = sliced_shape(result.settings.model_id, layers=result.settings.layers_probed)
    arrays = {
        "batch": np.array([p.batch for p in points], dtype=np.float64),
        "new_tokens": np.array([p.new_tokens for p in points], dtype=np.float64),
        "context_tokens": np.array([p.context_tokens for p in points], dtype=np.float64),
    }
    held = holdout_mask(len(points))
    fit_mask = ~held

    def evaluate(half: float, reads: float) -> Trial:
        params, loss = _fit_linear(_data(result, shape, arrays, half, reads), fit_mask)
        return loss, (half, reads), params

    _, (half, reads), (a, b, overhead) = _search(evaluate, half_saturation_grid, weight_reads_grid)
    efficiency = Efficiency(
        eff_compute=float(1.0 / a),
        eff_memory=float(1.0 / b),
        overhead_seconds_per_step=float(overhead),
        compute_half_saturation_tokens=float(half),
        weight_reads_max_rows=float(reads),
        source=f"fit to {len(points) - int(held.sum())} probe points",
    )
    calibrated = predict_arrays(
        shape, dtype=result.environment.dtype, peak_flops_per_s=result.peak_flops_per_s,
        hbm_bytes_per_s=result.copy_bytes_per_s, efficiency=efficiency, **arrays,
    ).step_seconds
    fits = tuple(
        PointFit(
            phase=p.phase, batch=p.batch, new_tokens=p.new_tokens, context_tokens=p.context_tokens,
            measured_seconds=float(p.seconds_median or 0.0), roofline_seconds=p.predicted_seconds,
            calibrated_seconds=float(pred), holdout=bool(h),
        )
        for p, pred, h in zip(points, np.broadcast_to(calibrated, held.shape), held, strict=True)
    )
    held_errors = np.array([f.abs_error for f in fits if f.holdout])
    fit_errors = np.array([f.abs_error for f in fits if not f.holdout])
    return CalibrationFit(
        efficiency=efficiency,
        points=fits,
        holdout_median_abs_error=float(np.median(held_errors)),
        holdout_max_abs_error=float(np.max(held_errors)),
        fit_median_abs_error=float(np.median(fit_errors)),
        fit_max_abs_error=float(np.max(fit_errors)),
    )


def calibration_from_fit(result: ProbeResult, fit: CalibrationFit, *, source: str,
                         hardware_id: str | None = None, force: bool = False) -> Calibration:
    """The calibration file's content: fitted factors plus the measured peaks they are relative to.

    Refuses an unknown hardware id and a fit whose held-out median error is above
    MAX_HOLDOUT_MEDIAN_ABS_ERROR, unless `force` (the calibration is then marked `forced`).
    """
    hardware = hardware_id or result.environment.hardware_id
    if hardware is None:
        raise CostmodelError(
            f"the probe ran on '{result.environment.device_name}', which has no catalog accelerator id; "
            "pass --hardware ID (see `costmodel hardware list`)"
        )
    where = "--hardware" if hardware_id else "the probe's environment.hardware_id"
    try:
        load_accelerator(hardware)
    except CostmodelError as exc:
        raise CostmodelError(f"{where}: {exc}; pass --hardware ID (see `costmodel hardware list`)") from None
    forced = fit.holdout_median_abs_error > MAX_HOLDOUT_MEDIAN_ABS_ERROR
    if forced and not force:
        raise CostmodelError(holdout_error_message(fit.holdout_median_abs_error))
    eff = fit.efficiency
    return Calibration(
        hardware_id=hardware,
        device_name=result.environment.device_name,
        eff_compute=min(eff.eff_compute, MAX_EFFICIENCY),
        eff_memory=min(eff.eff_memory, MAX_EFFICIENCY),
        overhead_seconds_per_step=eff.overhead_seconds_per_step,
        compute_half_saturation_tokens=eff.compute_half_saturation_tokens,
        weight_reads_max_rows=eff.weight_reads_max_rows,
        peak_flops_per_s=result.peak_flops_per_s,
        hbm_bytes_per_s=result.copy_bytes_per_s,
        peak_flops_dtype=result.environment.dtype,
        peak_flops_per_s_by_dtype=dict(result.peak_flops_per_s_by_dtype),
        holdout_median_abs_error=fit.holdout_median_abs_error,
        holdout_max_abs_error=fit.holdout_max_abs_error,
        points_fit=fit.points_fit,
        points_holdout=fit.points_holdout,
        source=source,
        created=dt.datetime.now(dt.UTC).replace(microsecond=0),
        forced=forced,
    )
