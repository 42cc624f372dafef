"""costmodel.charts.roofline: the curves the Roofline page draws agree with estimate / plan_memory."""

from __future__ import annotations

import math

import numpy as np
import pytest

from costmodel.catalog import load_accelerator
from costmodel.charts.roofline import batch_sweep, memory_grid, op_points, roofline_curve, roofline_view
from costmodel.estimate import estimate
from costmodel.roofline import Efficiency


def test_ridge_point_is_peak_over_bandwidth() -> None:
    # H100 SXM datasheet: 989.4 TFLOP/s dense bf16, 3.35 TB/s HBM3 -> ridge 989.4e12 / 3.35e12 = 295.3 FLOP/B.
    hw = load_accelerator("h100-sxm")
    eff = Efficiency(eff_compute=0.7, eff_memory=0.8, overhead_seconds_per_step=0.0)
    curve = roofline_curve(hw, eff, weight_dtype="bf16")
    assert curve.ridge_flops_per_byte == pytest.approx(989.4e12 / 3.35e12)
    # Effective ridge: (989.4e12 * 0.7) / (3.35e12 * 0.8) = 258.4 FLOP/B.
    assert curve.effective_ridge_flops_per_byte == pytest.approx(989.4e12 * 0.7 / (3.35e12 * 0.8))
    # Far left the roofline is the bandwidth slope; far right it is flat at the peak.
    assert curve.datasheet_flops_per_s[0] == pytest.approx(0.1 * 3.35e12)
    assert curve.datasheet_flops_per_s[-1] == pytest.approx(989.4e12)
    assert curve.attainable_flops_per_s[-1] == pytest.approx(989.4e12 * 0.7)


def test_fp8_weights_use_the_fp8_peak() -> None:
    # H100 SXM fp8 dense: 1978.9 TFLOP/s (datasheet 3,958 with sparsity / 2).
    hw = load_accelerator("h100-sxm")
    curve = roofline_curve(hw, Efficiency.from_accelerator(hw), weight_dtype="fp8")
    assert curve.peak_flops_per_s == pytest.approx(1978.9e12)


def test_op_points_lie_on_the_effective_roofline() -> None:
    est = estimate("llama-3.1-8b", "h100-sxm", batch=8, prompt_tokens=1024, output_tokens=256)
    hw = load_accelerator("h100-sxm")
    eff = est.efficiency
    points = op_points(est)
    assert {p.phase for p in points} == {"prefill", "decode"}
    assert len(points) == len(est.prefill.ops) + len(est.decode.ops)
    for p in points:
        # Each op takes max(F / (peak * e_c), B / (bw * e_m)), so F / seconds = min(peak * e_c, AI * bw * e_m).
        expected = min(hw.peak_for("bf16") * eff.eff_compute, p.arithmetic_intensity * hw.hbm_bytes_per_s * eff.eff_memory)
        assert p.achieved_flops_per_s == pytest.approx(expected, rel=1e-9)
    # Decode GEMVs at batch 8 with bf16 weights: ~2 FLOP per 2-byte weight x 8 rows -> AI ~ 8, memory-bound.
    decode_mlp = next(p for p in points if p.phase == "decode" and p.op == "mlp")
    assert decode_mlp.bound == "memory"
    assert 6.0 < decode_mlp.arithmetic_intensity < 8.5
    prefill_mlp = next(p for p in points if p.phase == "prefill" and p.op == "mlp")
    assert prefill_mlp.bound == "compute"


def test_batch_sweep_matches_estimate_at_each_batch() -> None:
    sweep = batch_sweep("llama-3.1-8b", "h100-sxm", batches=[4, 1, 64, 4], prompt_tokens=512, output_tokens=128)
    assert [p.batch for p in sweep] == [1, 4, 64]
    for point in sweep:
        est = estimate("llama-3.1-8b", "h100-sxm", batch=point.batch, prompt_tokens=512, output_tokens=128)
        assert point.decode_step_seconds == est.decode_step_seconds
        assert point.prefill_seconds == est.prefill_seconds
        assert point.decode_tokens_per_second == pytest.approx(point.batch / est.decode_step_seconds)
        assert point.fits == est.fits
    # Memory-bound decode: going from 1 to 4 sequences adds far less than 4x step time.
    assert sweep[1].decode_step_seconds < 1.5 * sweep[0].decode_step_seconds


def test_memory_grid_kv_bytes_by_hand() -> None:
    # Llama 3.1 8B: 32 layers, 8 KV heads, head dim 128, bf16 KV -> 2 * 32 * 8 * 128 * 2 B = 131,072 B per token.
    grid = memory_grid("llama-3.1-8b", "h100-sxm", batches=[1, 4], contexts_tokens=[1024, 8192])
    assert grid.kv_bytes_per_gpu.shape == (2, 2)
    assert grid.kv_bytes_per_gpu[0, 1] == pytest.approx(4 * 1024 * 131_072)
    assert grid.kv_bytes_per_gpu[1, 0] == pytest.approx(8192 * 131_072)
    # Two tensor-parallel GPUs split the 8 KV heads: half the KV per GPU, half the weights per GPU.
    tp2 = memory_grid("llama-3.1-8b", "h100-sxm", gpus=2, batches=[1, 4], contexts_tokens=[1024, 8192])
    assert tp2.kv_bytes_per_gpu[0, 1] == pytest.approx(4 * 1024 * 131_072 / 2)
    assert tp2.weights_bytes_per_gpu == pytest.approx(grid.weights_bytes_per_gpu / 2)


@pytest.mark.parametrize(("model", "hardware", "gpus"), [("llama-3.1-8b", "l4", 1), ("llama-3.1-70b", "h100-sxm", 4)])
def test_memory_grid_max_batch_is_where_the_hbm_line_is_crossed(model: str, hardware: str, gpus: int) -> None:
    contexts = [2048, 32768]
    grid = memory_grid(model, hardware, gpus=gpus, batches=[1], contexts_tokens=contexts)
    for index, context in enumerate(contexts):
        plan = estimate(model, hardware, gpus=gpus, batch=1, prompt_tokens=context - 1, output_tokens=1).memory
        assert grid.max_batch[index] == plan.max_batch
        if plan.max_batch == 0:
            continue
        at_max = memory_grid(model, hardware, gpus=gpus, batches=[plan.max_batch, plan.max_batch + 1], contexts_tokens=[context])
        assert at_max.total_bytes_per_gpu[0, 0] <= grid.hbm_bytes_per_gpu
        assert at_max.total_bytes_per_gpu[0, 1] > grid.hbm_bytes_per_gpu


def test_roofline_view_adds_the_chosen_batch_and_context() -> None:
    view = roofline_view("llama-3.1-8b", "h100-sxm", batch=24, prompt_tokens=3000, output_tokens=200)
    assert 24 in [p.batch for p in view.batch_sweep]
    assert 3200 in view.memory.contexts_tokens
    assert view.estimate.batch == 24
    assert all(math.isfinite(p.achieved_flops_per_s) for p in view.points)
    assert np.all(np.diff(view.memory.total_bytes_per_gpu, axis=1) > 0)
