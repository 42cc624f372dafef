"""Calibration files: efficiencies fitted to probe measurements, applied to an accelerator.

The fitting itself lives in `costmodel.measurements.fit` (pure numpy); this module holds the schema that
`estimate`, `simulate` and `compare` accept through `--calibration FILE`.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pydantic import Field

from costmodel.catalog.schema import AcceleratorSpec
from costmodel.errors import CostmodelError
from costmodel.fileio import load_json_model
from costmodel.roofline import Efficiency
from costmodel.strict import StrictModel


class Calibration(StrictModel):
    """Fitted efficiencies for one device, with the provenance and held-out error of the fit."""

    schema_version: int = Field(default=1, ge=1, le=1)
    hardware_id: str = Field(description="catalog accelerator id these factors apply to")
    device_name: str = Field(description="device the probe ran on, as reported by the driver/OS")
    eff_compute: float = Field(gt=0, le=1.5, description="fraction of peak FLOP/s")
    eff_memory: float = Field(gt=0, le=1.5, description="fraction of peak bytes/s")
    overhead_seconds_per_step: float = Field(ge=0, description="fixed seconds per engine step")
    compute_half_saturation_tokens: float = Field(default=0.0, ge=0, description="GEMM rows at half eff_compute")
    weight_reads_max_rows: float = Field(
        default=1.0, ge=1.0, description="small GEMMs read their weights once per row up to this many rows"
    )
    peak_flops_per_s: float | None = Field(default=None, gt=0, description="measured peak replacing the datasheet's")
    hbm_bytes_per_s: float | None = Field(default=None, gt=0, description="measured bandwidth replacing the datasheet's")
    peak_flops_dtype: str | None = Field(
        default=None, description="dtype the probe ran in; peak_flops_per_s and the efficiencies refer to it"
    )
    peak_flops_per_s_by_dtype: dict[str, float] | None = Field(
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


def load_calibration(path: str | Path) -> Calibration:
    """Read and validate a calibration JSON file."""
    return load_json_model(path, Calibration, what="calibration")


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
        ),
    )
    return calibrated, efficiency
