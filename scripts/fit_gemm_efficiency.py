"""Fit the GEMM efficiency form (costmodel/catalog/gemm_efficiency.py) on the tuning half of OpenXLA's matmul table.

Usage: PYTHONPATH=. python scripts/fit_gemm_efficiency.py [--check]
Reads costmodel/data/xla_gemm_throughput.csv; for each (XLA device key, dtype) with a catalog peak, fits
t = t0 + F / (P e_max) + B / beta by non-negative least squares on the relative time error of the tuning
half's shapes (every subset of the three terms solved, the best one with no negative coefficient kept),
and writes costmodel/data/gemm_efficiency_fit.csv with each fit's tuning and held-out median |error| of the
efficiency. A (key, dtype) whose measured FLOP/s pass the catalog's dense peak is left out and named (the
sm_90 fp8 entries reach 1.31x H100's 1,979 TFLOP/s: not a dense GEMM as timed; H100 fp8 keeps eff_compute).
--check refits and exits 1 when the CSV holds other values. Nothing here reads a validation row.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import sys
from pathlib import Path

import numpy as np

from costmodel.catalog.gemm_efficiency import FIT_CSV, OPERAND_BYTES
from costmodel.catalog.loader import load_accelerator
from costmodel.fileio import atomic_write_text

TABLE = FIT_CSV.parent / "xla_gemm_throughput.csv"
# The catalog row whose dense peaks define efficiency for each device key (see accelerators.yaml's gemm_table).
PEAK_ROW = {"sm_90": "h100-sxm", "sm_100_B200": "b200"}
COLUMNS = ("arch", "dtype", "t0_seconds", "e_max", "operand_bytes_per_s", "tuning_rows", "holdout_rows",
           "tuning_median_abs_error", "holdout_median_abs_error")


def is_holdout(row: dict[str, str]) -> bool:
    """The shape's split: odd last byte of SHA-256("arch|dtype|b|m|n|k") (the measured value is not hashed)."""
    key = "|".join(row[c] for c in ("arch", "dtype", "b", "m", "n", "k"))
    return hashlib.sha256(key.encode("utf-8")).digest()[-1] % 2 == 1


def _nnls_relative(features: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """Non-negative c minimizing sum(((features @ c) / seconds - 1)^2), by enumerating supports."""
    scaled = features / seconds[:, None]
    best: tuple[float, np.ndarray] | None = None
    for size in range(1, features.shape[1] + 1):
        for support in itertools.combinations(range(features.shape[1]), size):
            coef, *_ = np.linalg.lstsq(scaled[:, support], np.ones(len(seconds)), rcond=None)
            if np.all(coef >= 0):
                full = np.zeros(features.shape[1])
                full[list(support)] = coef
                loss = float(np.sum((scaled @ full - 1.0) ** 2))
                if best is None or loss < best[0]:
                    best = (loss, full)
    assert best is not None
    return best[1]


def fit_rows(table_path: Path = TABLE) -> list[dict[str, str]]:
    """One fitted row per (device key, dtype) of the table at `table_path`."""
    with table_path.open(encoding="utf-8") as handle:
        table = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    out = []
    for arch, row_id in PEAK_ROW.items():
        peaks = load_accelerator(row_id).peak_flops_per_s
        for dtype in OPERAND_BYTES:
            rows = [r for r in table if r["arch"] == arch and r["dtype"] == dtype]
            peak = peaks.get(dtype)
            if not rows or peak is None:
                continue
            b, m, n, k, achieved = (np.asarray([float(r[c]) for r in rows]) for c in ("b", "m", "n", "k", "flops_per_s"))
            if achieved.max() > peak:
                print(f"{arch} {dtype}: left out, measured {achieved.max() / 1e12:,.0f} TFLOP/s > the {row_id} "
                      f"dense peak {peak / 1e12:,.0f}")
                continue
            flops = 2.0 * b * m * n * k
            operand_bytes = b * (OPERAND_BYTES[dtype] * (m * k + k * n) + 2.0 * m * n)
            features = np.stack([np.ones_like(flops), flops / peak, operand_bytes], axis=1)
            held = np.asarray([is_holdout(r) for r in rows])
            t0, inverse_e, inverse_beta = _nnls_relative(features[~held], flops[~held] / achieved[~held])
            error = (flops / (features @ [t0, inverse_e, inverse_beta])) / achieved - 1.0  # predicted / measured eff
            out.append({
                "arch": arch, "dtype": dtype, "t0_seconds": f"{t0:.4g}", "e_max": f"{1.0 / inverse_e:.4f}",
                "operand_bytes_per_s": f"{1.0 / inverse_beta:.4g}" if inverse_beta > 0 else "inf",
                "tuning_rows": str(int((~held).sum())), "holdout_rows": str(int(held.sum())),
                "tuning_median_abs_error": f"{np.median(np.abs(error[~held])):.4f}",
                "holdout_median_abs_error": f"{np.median(np.abs(error[held])):.4f}",
            })
    return out


def render(rows: list[dict[str, str]]) -> str:
    lines = ["# Written by scripts/fit_gemm_efficiency.py from costmodel/data/xla_gemm_throughput.csv (tuning half "
             "of the shapes); do not edit.", ",".join(COLUMNS)]
    lines += [",".join(r[c] for c in COLUMNS) for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render(fit_rows())
    print(text, end="")
    if "--check" in argv:
        return 0 if FIT_CSV.exists() and FIT_CSV.read_text(encoding="utf-8") == text else 1
    atomic_write_text(FIT_CSV, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
