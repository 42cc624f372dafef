"""Achieved efficiency: the fractions of peak compute and bandwidth a step reaches, and its fixed costs.

`Efficiency` holds them (datasheet defaults, or a calibration's fit); `gemm_saturation` and
`weight_rereads` are its two small-GEMM corrections (a GEMM of few rows below peak compute; one that
streams its weights once per row). `costmodel.roofline` applies them in the step function and
re-exports all three, so `from costmodel.roofline import Efficiency` keeps working.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from costmodel.catalog.params import ModelShape
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


GEMM_TABLE_MIN_ROWS = 256.0  # the smallest m OpenXLA's matmul table measured (catalog/gemm_efficiency.py)


def _weight_gemms(shape: ModelShape, *, tokens: FloatOrArray, gpus: FloatOrArray) -> list[tuple[float, Any, Any, Any]]:
    """(FLOPs per token, rows m, n, k per GPU) of each weight GEMM of the blocks, tensor-parallel over `gpus`:
    QKV and gate/up split their outputs (n / N), o and down their inputs (k / N) (Megatron-LM, section 3)."""
    d = float(shape.hidden)
    out: list[tuple[float, Any, Any, Any]] = [
        (shape.layers * shape.qkv_params_per_layer, tokens, shape.qkv_params_per_layer / d / gpus, d),
        (shape.layers * shape.o_params_per_layer, tokens, d, shape.o_params_per_layer / d / gpus),
    ]
    routed_rows = tokens * shape.experts_per_token / max(shape.experts, 1)
    for layers, params, rows in ((shape.dense_mlp_layers, shape.dense_mlp_params_per_layer, tokens),
                                 (shape.moe_layers, shape.shared_expert_params_per_layer, tokens),
                                 (shape.moe_layers * shape.experts_per_token, shape.expert_params, routed_rows)):
        if layers and params:  # a gated MLP: gate+up (d -> 2I) then down (I -> d), I = params / 3d
            inner = params / (3.0 * d)
            out += [(layers * params * 2.0 / 3.0, rows, 2.0 * inner / gpus, d), (layers * params / 3.0, rows, d, inner / gpus)]
    return out


def shape_efficiency(shape: ModelShape, *, tokens: FloatOrArray, gpus: FloatOrArray, peak_flops_per_s: FloatOrArray,
                     t0_seconds: FloatOrArray, e_max: FloatOrArray, operand_bytes_per_s: FloatOrArray,
                     operand_bytes_per_element: FloatOrArray) -> FloatOrArray:
    """Share of the peak the step's weight GEMMs reach at their shapes (NaN where the fit's terms are NaN).

    Each GEMM of m rows (>= 256, the table's smallest m: below it the m = 256 value holds), n x k weights takes
    t = t0 + 2mnk / (P e_max) + (e (mk + kn) + 2mn) / beta (catalog/gemm_efficiency.py); the step's share is
    the FLOP-weighted harmonic mean over the GEMMs, total FLOPs / total time at the peak, a function of the
    step's tokens only, so every op shares it as it shares eff_compute.
    """
    flops_time, flops_total = 0.0, 0.0
    for weight, rows, n, k in _weight_gemms(shape, tokens=tokens, gpus=gpus):
        m = np.maximum(rows, GEMM_TABLE_MIN_ROWS)
        flops = 2.0 * m * n * k
        seconds = (t0_seconds + flops / (peak_flops_per_s * e_max)
                   + (operand_bytes_per_element * (m * k + k * n) + 2.0 * m * n) / operand_bytes_per_s)
        flops_time = flops_time + weight / (flops / (peak_flops_per_s * seconds))
        flops_total += weight
    return flops_total / flops_time
