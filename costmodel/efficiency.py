"""Achieved efficiency: the fractions of peak compute and bandwidth a step reaches, and its fixed costs.

`Efficiency` holds them (datasheet defaults, or a calibration's fit); `gemm_saturation` and
`weight_rereads` are its two small-GEMM corrections (a GEMM of few rows below peak compute; one that
streams its weights once per row). `costmodel.roofline` applies them in the step function and
re-exports all three, so `from costmodel.roofline import Efficiency` keeps working.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costmodel.catalog.schema import AcceleratorSpec
from costmodel.ops import FloatOrArray


@dataclass(frozen=True)
class Efficiency:
    """Achieved fractions of peak and fixed costs; datasheet defaults or a calibration's fit."""

    eff_compute: float
    eff_memory: float
    overhead_seconds_per_step: float
    # Small GEMMs run below peak: effective eff_compute = eff_compute * m / (m + this), m = rows (tokens),
    # for m >= 2 (a 1-row GEMV is exempt; see gemm_saturation). 0 keeps eff_compute constant (the
    # datasheet default); calibration fits it (CPU MKL, see docs/probes.md).
    compute_half_saturation_tokens: float = 0.0
    # Small GEMMs that stream their weights once per row, up to this many rows (see weight_rereads);
    # 1 = weights read once per step (GPUs, the default); calibration fits it (CPU MKL, docs/probes.md).
    weight_reads_max_rows: float = 1.0
    # Share of the tensor-parallel all-reduce time the serving engine hides behind compute or fuses away
    # (the engine profile's tp_comm_overlap_fraction, catalog/engines); 0 = every all-reduce on the
    # critical path, the pre-profile behaviour.
    comm_overlap_fraction: float = 0.0
    source: str = "datasheet defaults"

    @classmethod
    def from_accelerator(cls, hardware: AcceleratorSpec) -> Efficiency:
        """The catalog's default efficiencies for this accelerator."""
        return cls(
            eff_compute=hardware.eff_compute,
            eff_memory=hardware.eff_memory,
            overhead_seconds_per_step=hardware.overhead_seconds_per_step,
            source=f"datasheet defaults for {hardware.id}",
        )



def gemm_saturation(*, gemm_rows: FloatOrArray, half_saturation_tokens: FloatOrArray) -> FloatOrArray:
    """Share of eff_compute a weight GEMM with `gemm_rows` rows (tokens in the step) reaches.

    m / (m + half) for m >= 2: a fixed per-call cost (packing the weight panel, filling tiles) that only
    many rows amortise. A single row is a GEMV: it streams the weights once with no such cost, so it keeps
    the full eff_compute (it is memory-bound anyway). half = 0 gives 1 everywhere (the datasheet default);
    `costmodel calibrate` fits it (docs/probes.md).
    """
    rows = np.maximum(gemm_rows, 1.0)
    return np.where(rows <= 1.0, 1.0, rows / (rows + half_saturation_tokens))


def weight_rereads(*, gemm_rows: FloatOrArray, weight_reads_max_rows: FloatOrArray) -> FloatOrArray:
    """Extra passes over an op's weights: min(rows, R) - 1 (0 for R = 1, the default).

    Some GEMM libraries run a GEMM of a few rows as one pass over the weights per row: on the project's
    CPU (MKL, fp32, AMD Zen 3) decode at batch 2 and 4 costs about 2x and 4x batch 1, then levels off
    (the decode rows of examples/probe-cpu.json, docs/probes.md). `costmodel calibrate` fits R.
    """
    return np.minimum(np.maximum(gemm_rows, 1.0), weight_reads_max_rows) - 1.0
