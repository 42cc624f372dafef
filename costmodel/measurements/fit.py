"""Fit eff_compute, eff_memory, overhead and the small-GEMM half-saturation to probe points.

Model (costmodel.roofline.step_arrays, one formula): for each op i of a step,
    seconds_i = max(FLOPs_i / (peak * eff_compute * s(m)), bytes_i / (bandwidth * eff_memory))
    step = sum_i seconds_i + overhead,
with peak and bandwidth the probe's measured microbenchmark rates and s(m) the GEMM saturation at m
rows (see efficiency.gemm_saturation). Writing a = 1/eff_compute, b = 1/eff_memory, each op is
max(a * c_i, b * m_i) with c_i, m_i its compute-only and memory-only seconds at full efficiency, so for
a fixed half-saturation h the step time is piecewise linear in (a, b, overhead). We minimise the squared
*relative* error by alternating: fix which side of each max wins, solve the 3-variable bounded linear
least squares, repeat until the sides stop changing (several starts, best kept). h is searched on a
log grid and refined by golden-section search (the solvers: costmodel/measurements/fit_solvers.py).
Every 4th measured point is held out of the fit and only used to report the error.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np

from costmodel.catalog.loader import load_accelerator
from costmodel.catalog.params import ModelShape
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import (
    MAX_HOLDOUT_MEDIAN_ABS_ERROR,
    Calibration,
    holdout_error_message,
)
from costmodel.measurements.fit_solvers import Trial, bounded_lstsq, grid_search
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
            new = bounded_lstsq(design[mask], np.ones(int(mask.sum())), lower)
            if np.allclose(new, params, rtol=1e-9, atol=1e-15):
                break
            params = new
        loss = _loss(data, params, mask)
        if loss < best_loss:
            best, best_loss = params, loss
    return best, best_loss


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

    _, (half, reads), (a, b, overhead) = grid_search(evaluate, half_saturation_grid, weight_reads_grid)
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


def check_probe_complete(result: ProbeResult, *, source: str, force: bool) -> None:
    """CostmodelError for a probe marked complete: false (interrupted: fewer, and fewer kinds of, points than
    its sweep planned), unless `force`; the calibration then records `probe_incomplete`."""
    if not result.complete and not force:
        raise CostmodelError(
            f"probe result {source} is marked complete: false (interrupted after {len(result.points)} point(s)); "
            "rerun the probe to the end, or pass --force to fit the points it has (marked probe_incomplete)"
        )


def calibration_from_fit(result: ProbeResult, fit: CalibrationFit, *, source: str,
                         hardware_id: str | None = None, force: bool = False) -> Calibration:
    """The calibration file's content: fitted factors plus the measured peaks they are relative to.

    Refuses an unknown hardware id, and unless `force` a fit whose held-out median error is above
    MAX_HOLDOUT_MEDIAN_ABS_ERROR (then marked `forced`) or a probe marked incomplete (`probe_incomplete`).
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
    check_probe_complete(result, source=source, force=force)
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
        probe_incomplete=not result.complete,
    )
