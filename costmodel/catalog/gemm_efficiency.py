"""Compute efficiency of a weight GEMM by its shape, fitted on OpenXLA's measured matmul table.

Data: `costmodel/data/xla_gemm_throughput.csv` (scripts/extract_xla_perf_tables.py, from OpenXLA's
default_matmul_perf_table.txtpb at openxla/xla commit ad6eaee1, Apache-2.0): achieved FLOP/s of one
(b, m, n, k) dot, m, n, k in 256..4096, b in 1, 2, 4, per XLA device key and operand type, measured by XLA's
matmul_perf_table_gen (median kernel time, cuBLAS/cuBLASLt or Triton as XLA picks).

Form (one per device key and dtype): a GEMM of F = 2 b m n k FLOPs and operand bytes
B = b (e (m k + k n) + 2 m n) (e bytes per input element, bf16 output) takes
    t = t0 + F / (P * e_max) + B / beta          (P: the catalog's dense peak for that dtype)
a fixed in-kernel time t0, the compute at a share e_max of the peak and the operand traffic at beta (an
on-chip rate: every operand in the table fits the L2, so beta is not HBM bandwidth). Efficiency = F / (P t).
`scripts/fit_gemm_efficiency.py` fits (t0, 1/e_max, 1/beta) by non-negative least squares on relative time
error over the TUNING half of the table's shapes (a SHA-256 of "arch|dtype|b|m|n|k", the shape not the
value, odd last byte = held out, as `validation.categories.is_holdout`) and writes their held-out error
next to them in `costmodel/data/gemm_efficiency_fit.csv`, which this module reads.

Use (`roofline.step_arrays`): one factor per step, a function of the step's tokens: the FLOP-weighted
harmonic mean of the efficiency of the block's weight GEMMs at their per-GPU shapes (rows m = tokens, or
tokens x k / E for a routed expert; n, k the weight's dims over N GPUs), capped by the row's eff_compute
(the whole-model figure stays the ceiling), applied to every op as eff_compute is. Below m = 256 (the
table's smallest) the m = 256 value holds: small-row GEMMs run other kernels (GEMV, split-K) the table did not
measure, and those steps are bound by reading the weights anyway. Outside 4096 in n or k the form
extrapolates (efficiency rises towards e_max).
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIT_CSV = Path(__file__).resolve().parents[1] / "data" / "gemm_efficiency_fit.csv"
MIN_ROWS = 256.0  # the table's smallest m
OPERAND_BYTES = {"bf16": 2.0, "fp8": 1.0}


@dataclass(frozen=True, kw_only=True)
class GemmFit:
    """t = t0 + F / (P e_max) + B / beta for one device key and dtype (see the module docstring)."""

    arch: str
    dtype: str
    t0_seconds: float
    e_max: float  # share of the catalog's dense peak the compute term runs at
    operand_bytes_per_s: float  # beta; inf when the fit dropped the term
    tuning_median_abs_error: float
    holdout_median_abs_error: float


def gemm_seconds(*, m: Any, n: Any, k: Any, b: Any = 1.0, peak_flops_per_s: float, fit: GemmFit) -> Any:
    """Seconds of a (b, m, n, k) GEMM under `fit` (arrays broadcast)."""
    flops = 2.0 * b * m * n * k
    operand_bytes = b * (OPERAND_BYTES[fit.dtype] * (m * k + k * n) + 2.0 * m * n)
    return fit.t0_seconds + flops / (peak_flops_per_s * fit.e_max) + operand_bytes / fit.operand_bytes_per_s


@functools.cache
def _fits() -> dict[tuple[str, str], GemmFit]:
    if not FIT_CSV.exists():
        return {}
    with FIT_CSV.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    return {(r["arch"], r["dtype"]): GemmFit(
        arch=r["arch"], dtype=r["dtype"], t0_seconds=float(r["t0_seconds"]), e_max=float(r["e_max"]),
        operand_bytes_per_s=float(r["operand_bytes_per_s"]),
        tuning_median_abs_error=float(r["tuning_median_abs_error"]),
        holdout_median_abs_error=float(r["holdout_median_abs_error"])) for r in rows}


def gemm_fit(table: str | None, *, dtype: str) -> GemmFit | None:
    """The fit for device key `table` and the linear layers' compute dtype; None = no data (eff_compute)."""
    return None if table is None else _fits().get((table, dtype))
