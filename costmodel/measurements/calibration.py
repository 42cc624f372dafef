"""Calibration files: efficiencies fitted to probe measurements, applied to an accelerator.

The fitting itself lives in `costmodel.measurements.fit` (pure numpy); this module holds the schema that
`estimate`, `simulate` and `compare` accept through `--calibration FILE`.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from costmodel.catalog.loader import accelerators
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.errors import CostmodelError, unknown_id_error
from costmodel.roofline import Efficiency
from costmodel.strict import StrictModel

# Sane ranges a calibration must fall in (the file is user input: `--calibration FILE`).
# Efficiencies are fractions of the peaks they are relative to, so they lie in (0, 1].
MAX_OVERHEAD_SECONDS_PER_STEP = 1.0  # engine steps cost us to ms of fixed time; 1 s means the fit went wrong
# Measured peaks: 10x the fastest catalog part (accelerators.yaml, b200: 8.0e12 B/s HBM, 9.0e15 FLOP/s
# dense fp4) leaves room for new hardware while refusing 1e300 or inf.
MAX_HBM_BYTES_PER_S = 1e14
MAX_PEAK_FLOPS_PER_S = 1e17
# A fit whose median relative error on held-out points is above this predicts no better than a guess;
# `costmodel calibrate --force` writes it anyway, marked `forced`.
MAX_HOLDOUT_MEDIAN_ABS_ERROR = 0.5
PeakFlops = Annotated[float, Field(gt=0, le=MAX_PEAK_FLOPS_PER_S)]


class Calibration(StrictModel):
    """Fitted efficiencies for one device, with the provenance and held-out error of the fit.

    Every number must be finite; out-of-range values (see the MAX_ constants) are refused with the field named.
    """

    schema_version: int = Field(default=1, ge=1, le=1)
    hardware_id: str = Field(description="catalog accelerator id these factors apply to")
    device_name: str = Field(description="device the probe ran on, as reported by the driver/OS")
    eff_compute: float = Field(gt=0, le=1, description="fraction of peak FLOP/s")
    eff_memory: float = Field(gt=0, le=1, description="fraction of peak bytes/s")
    overhead_seconds_per_step: float = Field(
        ge=0, le=MAX_OVERHEAD_SECONDS_PER_STEP, description="fixed seconds per engine step"
    )
    compute_half_saturation_tokens: float = Field(
        default=0.0, ge=0, le=1e6, description="GEMM rows at half eff_compute (the fit searches 0..8192)"
    )
    weight_reads_max_rows: float = Field(
        default=1.0, ge=1.0, le=1e3,
        description="small GEMMs read their weights once per row up to this many rows (the fit searches 1..16)",
    )
    peak_flops_per_s: float | None = Field(
        default=None, gt=0, le=MAX_PEAK_FLOPS_PER_S, description="measured peak replacing the datasheet's"
    )
    hbm_bytes_per_s: float | None = Field(
        default=None, gt=0, le=MAX_HBM_BYTES_PER_S, description="measured bandwidth replacing the datasheet's"
    )
    peak_flops_dtype: str | None = Field(
        default=None, description="dtype the probe ran in; peak_flops_per_s and the efficiencies refer to it"
    )
    peak_flops_per_s_by_dtype: dict[str, PeakFlops] | None = Field(
        default=None,
        description="matmul FLOP/s measured per dtype; replaces those datasheet entries, and dtypes not measured "
        "are scaled by measured/datasheet of peak_flops_dtype",
    )
    holdout_median_abs_error: float = Field(ge=0, description="median |pred-meas|/meas on held-out points")
    holdout_max_abs_error: float = Field(ge=0, description="max |pred-meas|/meas on held-out points")
    points_fit: int = Field(ge=0)
    points_holdout: int = Field(ge=0)
    source: str = Field(description="probe result the fit came from")
    created: dt.datetime
    forced: bool = Field(
        default=False,
        description=f"written by `calibrate --force` past the held-out error bound ({MAX_HOLDOUT_MEDIAN_ABS_ERROR:.0%})",
    )
    probe_incomplete: bool = Field(
        default=False,
        description="fitted by `calibrate --force` to a probe marked complete: false (interrupted; fewer points)",
    )

    @field_validator("hardware_id")
    @classmethod
    def _known_hardware(cls, value: str) -> str:
        known = accelerators()
        if value not in known:
            raise ValueError(str(unknown_id_error("hardware", value, known)) + " (see `costmodel hardware list`)")
        return value

    @model_validator(mode="after")
    def _fit_good_enough(self) -> Calibration:
        if self.holdout_median_abs_error > MAX_HOLDOUT_MEDIAN_ABS_ERROR and not self.forced:
            raise ValueError(holdout_error_message(self.holdout_median_abs_error))
        return self


def holdout_error_message(median_abs_error: float) -> str:
    """Why a fit is refused: its held-out error is above MAX_HOLDOUT_MEDIAN_ABS_ERROR."""
    return (
        f"holdout_median_abs_error {median_abs_error:.1%} is above the {MAX_HOLDOUT_MEDIAN_ABS_ERROR:.0%} bound: "
        "the fit does not predict the probe's own held-out points; rerun the probe on a quiet machine, or "
        "pass `costmodel calibrate --force` to write it anyway (marked forced)"
    )


def load_calibration(path: str | Path) -> Calibration:
    """Read and validate a roofline calibration JSON file (`costmodel calibrate`); another measurement file
    (an endpoint calibration, a probe result) is refused with what it is and where it is used."""
    from costmodel.measurements.calibration_files import load_calibration_file  # it imports this module

    file = load_calibration_file(path)
    if not isinstance(file, Calibration):
        raise CostmodelError(
            f"calibration {path} is a {type(file).__name__} file, not a roofline calibration from `costmodel "
            "calibrate`; attach it to a scenario option (`calibration:`) or pass it to compare/simulate/capacity")
    return file


def calibrated_peaks(datasheet: dict[str, float], calibration: Calibration) -> dict[str, float]:
    """Measured FLOP/s where the probe measured a dtype; the others scaled by the probe dtype's ratio.

    A GPU that reaches 75% of its datasheet bf16 peak in the microbenchmark is assumed to reach 75% of its
    fp8/int8 peaks too (same tensor cores, clocks and power limit).
    """
    measured = calibration.peak_flops_per_s_by_dtype or {}
    probe = calibration.peak_flops_dtype
    ratio = measured[probe] / datasheet[probe] if probe in measured and probe in datasheet else 1.0
    return {key: measured.get(key, value * ratio) for key, value in datasheet.items()}


def apply_calibration(hardware: AcceleratorSpec, calibration: Calibration) -> tuple[AcceleratorSpec, Efficiency]:
    """The accelerator with measured peaks (where given) and the fitted efficiencies."""
    if calibration.hardware_id != hardware.id:
        raise CostmodelError(
            f"calibration was measured on '{calibration.hardware_id}' ({calibration.device_name}) but the "
            f"hardware is '{hardware.id}'; pass --hardware {calibration.hardware_id} or a matching calibration"
        )
    update: dict[str, object] = {}
    if calibration.peak_flops_per_s_by_dtype:
        update["peak_flops_per_s"] = calibrated_peaks(hardware.peak_flops_per_s, calibration)
    elif calibration.peak_flops_per_s is not None:
        update["peak_flops_per_s"] = {key: calibration.peak_flops_per_s for key in hardware.peak_flops_per_s}
    if calibration.hbm_bytes_per_s is not None:
        update["hbm_bytes_per_s"] = calibration.hbm_bytes_per_s
    calibrated = hardware.model_copy(update=update) if update else hardware
    efficiency = Efficiency(
        eff_compute=calibration.eff_compute,
        eff_memory=calibration.eff_memory,
        overhead_seconds_per_step=calibration.overhead_seconds_per_step,
        compute_half_saturation_tokens=calibration.compute_half_saturation_tokens,
        weight_reads_max_rows=calibration.weight_reads_max_rows,
        source=(
            f"calibrated from {calibration.source} on {calibration.device_name}: held-out median error "
            f"{calibration.holdout_median_abs_error:.1%}, max {calibration.holdout_max_abs_error:.1%}"
            + (" (forced past the held-out error bound)" if calibration.forced else "")
            + (" (from an interrupted probe)" if calibration.probe_incomplete else "")
        ),
    )
    return calibrated, efficiency
