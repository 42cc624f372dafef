"""GEMM efficiency by shape (catalog/gemm_efficiency.py, efficiency.shape_efficiency): the fit, its split, by hand.

The fit is on OpenXLA's measured matmul table only (costmodel/data/xla_gemm_throughput.csv), its tuning half
of the shapes; nothing here or in scripts/fit_gemm_efficiency.py reads a validation row.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from costmodel.catalog.gemm_efficiency import FIT_CSV, gemm_fit, gemm_seconds
from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.efficiency import shape_efficiency
from costmodel.grid import evaluate_grid
from costmodel.roofline import step
from scripts.fit_gemm_efficiency import TABLE, fit_rows, is_holdout, render

H100 = load_accelerator("h100-sxm")


def _fields_close(a: str, b: str) -> bool:
    """Two CSV lines with the same text fields and numbers within 2% of each other."""
    if a.startswith("#") or b.startswith("#"):
        return a == b
    for x, y in zip(a.split(","), b.split(","), strict=True):
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            if x != y:
                return False
            continue
        if not np.isclose(fx, fy, rtol=0.02, atol=1e-12):
            return False
    return True


def test_the_committed_fit_is_the_scripts_and_its_held_out_error_is_small() -> None:
    # The same rows and fields as the script writes; numbers equal to 2% (the NNLS solution's last printed digit
    # moves with the BLAS build: 5.754e-06 on one machine, 5.755e-06 on another, and the held-out median 0.0482 vs 0.0487).
    committed, fresh = FIT_CSV.read_text(encoding="utf-8").splitlines(), render(fit_rows()).splitlines()
    assert len(committed) == len(fresh)
    for old_line, new_line in zip(committed, fresh, strict=True):
        assert _fields_close(old_line, new_line), (old_line, new_line)
    with FIT_CSV.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    assert {(r["arch"], r["dtype"]) for r in rows} == {("sm_90", "bf16"), ("sm_100_B200", "bf16"), ("sm_100_B200", "fp8")}
    for r in rows:  # median |predicted / measured efficiency - 1| over the held-out shapes
        assert float(r["holdout_median_abs_error"]) < 0.06, r
        assert 0.0 < float(r["e_max"]) <= 1.0 and int(r["tuning_rows"]) + int(r["holdout_rows"]) == 375


def test_held_out_values_do_not_move_the_fit(tmp_path: Path) -> None:
    text = TABLE.read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(text) if not line.startswith("#"))
    rows = list(csv.DictReader(text[header:]))
    for r in rows:
        if is_holdout(r):
            r["flops_per_s"] = str(int(r["flops_per_s"]) // 3)  # a third of each held-out value
    changed = tmp_path / "table.csv"
    with changed.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    refit = fit_rows(changed)
    for new, old in zip(refit, fit_rows(), strict=True):
        assert {k: new[k] for k in ("t0_seconds", "e_max", "operand_bytes_per_s")} == \
               {k: old[k] for k in ("t0_seconds", "e_max", "operand_bytes_per_s")}
        assert new["holdout_median_abs_error"] != old["holdout_median_abs_error"]


def test_one_gemm_by_hand() -> None:
    fit = gemm_fit("sm_90", dtype="bf16")
    assert fit is not None
    # 1024 x 4096 x 4096 bf16 on the H100 row's 989.4e12 peak: F = 2 * 1024 * 4096^2 = 34,359,738,368 FLOPs,
    # operand bytes 2 * (1024 * 4096 + 4096 * 4096) + 2 * 1024 * 4096 = 50,331,648.
    by_hand = fit.t0_seconds + 34_359_738_368 / (989.4e12 * fit.e_max) + 50_331_648 / fit.operand_bytes_per_s
    assert gemm_seconds(m=1024, n=4096, k=4096, peak_flops_per_s=989.4e12, fit=fit) == pytest.approx(by_hand, rel=1e-12)
    assert gemm_fit("sm_90", dtype="fp8") is None  # measured above H100's dense fp8 peak: left out
    assert gemm_fit(None, dtype="bf16") is None


def test_step_caps_eff_compute_at_the_shape_efficiency_by_hand() -> None:
    # llama-3.1-70b (d 8192, 64 query / 8 KV heads of 128, I 28672) on 8 GPUs: per-GPU (n, k) of QKV
    # (10240 / 8, 8192), o (8192, 8192 / 8), gate+up (2 * 28672 / 8, 8192), down (8192, 28672 / 8), each weighted
    # by its FLOPs per token; rows 64 -> 256 (the table's smallest m).
    fit = gemm_fit("sm_90", dtype="bf16")
    assert fit is not None
    gemms = [(8192 * 10240, 1280, 8192), (8192 * 8192, 8192, 1024), (2 * 8192 * 28672, 7168, 8192),
             (8192 * 28672, 8192, 3584)]
    total = sum(w for w, _, _ in gemms)
    at_peak = sum(w * gemm_seconds(m=256, n=n, k=k, peak_flops_per_s=989.4e12, fit=fit) * 989.4e12 / (2 * 256 * n * k)
                  for w, n, k in gemms)
    by_hand = total / at_peak
    assert by_hand < H100.eff_compute  # so the cap binds: the step's linear layers run at by_hand, not 0.55
    shape = derive_shape(load_model("llama-3.1-70b"))
    eff = shape_efficiency(shape, tokens=64.0, gpus=8.0, peak_flops_per_s=989.4e12, t0_seconds=fit.t0_seconds,
                           e_max=fit.e_max, operand_bytes_per_s=fit.operand_bytes_per_s, operand_bytes_per_element=2.0)
    assert eff == pytest.approx(by_hand, rel=1e-12)
    result = step(shape, H100, batch=64, new_tokens=1, context_tokens=1024, gpus=8)
    mlp = next(op for op in result.ops if op.name == "mlp")
    assert mlp.flops / (989.4e12 * by_hand) <= mlp.seconds  # its compute time at the capped rate bounds its time
    plain = step(shape, H100.model_copy(update={"gemm_table": None}), batch=64, new_tokens=1, context_tokens=1024,
                 gpus=8)
    assert result.compute_seconds == pytest.approx(plain.compute_seconds * H100.eff_compute / by_hand, rel=1e-9)


def test_rows_without_a_fit_and_the_cpu_calibration_path_keep_eff_compute() -> None:
    cpu = load_accelerator("cpu")
    assert cpu.gemm_table is None and np.isnan(cpu.op_precision(weight_dtype="fp32", kv_dtype="fp32").gemm_t0_seconds)
    assert load_accelerator("a100-80gb").gemm_table is None
    # fp8 on H100: no usable data, eff_compute unchanged
    assert np.isnan(H100.op_precision(weight_dtype="fp8", kv_dtype="fp8").gemm_e_max)


def test_grid_matches_the_scalar_step_with_the_fit() -> None:
    grid = evaluate_grid(model_ids=["llama-3.1-8b"], hardware_ids=["b200", "h100-sxm"], gpus=[1],
                         weight_dtypes=["fp8", "bf16"], batch=[8, 512], context_tokens=[1024])
    shape = derive_shape(load_model("llama-3.1-8b"))
    for i, hw in enumerate(("b200", "h100-sxm")):
        for j, dtype in enumerate(("fp8", "bf16")):
            for b_index, batch in enumerate((8, 512)):
                scalar = step(shape, load_accelerator(hw), batch=batch, new_tokens=1, context_tokens=1024,
                              weight_dtype=dtype)
                assert grid.decode_step_seconds[0, i, 0, j, b_index, 0] == pytest.approx(scalar.step_seconds, rel=1e-12)
