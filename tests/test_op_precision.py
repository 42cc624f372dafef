"""Which format each op runs in (dtypes.OpPrecision): fp8/fp4 checkpoints keep the lm_head 16-bit and
run attention on the KV cache's format.

Source: NVIDIA's FP8 and FP4 checkpoints quantize "Only the weights and activations of the linear operators
within transformers blocks" (model cards of nvidia/Llama-3.1-405B-Instruct-FP8 and -FP4, cited in
costmodel/dtypes.py). Arithmetic below: Llama 3.3 70B has hidden 8,192, vocab 128,256 (config.json), so its
untied lm_head holds 8,192 x 128,256 = 1,050,673,152 weights; B200 dense peaks: fp4 9e15, fp8 4.5e15, bf16
2.25e15 FLOP/s (datasheet "with sparsity" / 2, accelerators.yaml); eff_compute 0.55.
"""

from __future__ import annotations

import pytest

from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.dtypes import OpPrecision, attention_compute_dtype, lm_head_weight_dtype
from costmodel.grid import evaluate_grid
from costmodel.roofline import step

B200 = load_accelerator("b200")
SHAPE = derive_shape(load_model("llama-3.3-70b"))
HEAD_PARAMS = 8_192 * 128_256


def _op(result: object, name: str):  # type: ignore[no-untyped-def]
    return next(op for op in result.ops if op.name == name)  # type: ignore[attr-defined]


def test_fp8_and_fp4_keep_the_lm_head_16_bit_and_gpt_fast_formats_do_not() -> None:
    assert SHAPE.lm_head_params == HEAD_PARAMS
    assert [lm_head_weight_dtype(d) for d in ("fp4", "fp8", "bf16", "int8", "int4")] == [
        "bf16", "bf16", "bf16", "int8", "int4"]
    decode = step(SHAPE, B200, batch=1, new_tokens=1, context_tokens=0, weight_dtype="fp4", kv_dtype="fp8")
    # one logit row: the head's weights at 2 B each plus 128,256 fp32 logits, all per 1 GPU
    assert _op(decode, "lm_head").bytes == pytest.approx(HEAD_PARAMS * 2.0 + 128_256 * 4.0, rel=1e-12)
    # the blocks' projections stay at half a byte: q, k, v = 8,192 x (8,192 + 2 x 1,024) per layer, 80 layers
    assert _op(decode, "qkv_proj").bytes == pytest.approx(80 * 8_192 * 10_240 * 0.5 + 80 * 2 * 8_192 * 2.0, rel=1e-12)


def test_attention_runs_at_the_kv_formats_peak_and_the_head_at_bf16() -> None:
    peaks = B200.peak_flops_per_s
    assert attention_compute_dtype(kv_dtype="fp8", peak_flops_per_s=peaks) == "fp8"
    assert attention_compute_dtype(kv_dtype="fp4", peak_flops_per_s=peaks) == "fp8"  # no fp4 attention kernel
    assert attention_compute_dtype(kv_dtype="bf16", peak_flops_per_s=peaks) == "bf16"
    precision = OpPrecision.of(peak_flops_per_s=peaks, weight_dtype="fp4", kv_dtype="fp8")
    assert (precision.peak_flops_per_s, precision.attention_peak_flops_per_s, precision.lm_head_peak_flops_per_s) == (
        9e15, 4.5e15, 2.25e15)
    # A compute-bound prefill (4 x 4,096 tokens): attention's FLOPs at 4.5e15 x 0.55, the MLP's at 9e15 x 0.55
    # times the b200 row's fitted fp4_realized_peak_fraction (tests/test_fp4_fit.py), which only fp4 layers get.
    fraction = B200.fp4_realized_peak_fraction
    assert fraction is not None
    prefill = step(SHAPE, B200, batch=4, new_tokens=4096, context_tokens=0, weight_dtype="fp4", kv_dtype="fp8")
    attention, mlp = _op(prefill, "attention"), _op(prefill, "mlp")
    assert (attention.bound, mlp.bound) == ("compute", "compute")
    assert attention.seconds == pytest.approx(attention.flops / (4.5e15 * 0.55), rel=1e-12)
    assert mlp.seconds == pytest.approx(mlp.flops / (9e15 * fraction * 0.55), rel=1e-12)


def test_the_grid_prices_each_op_in_its_own_format() -> None:
    grid = evaluate_grid(model_ids=["llama-3.3-70b"], hardware_ids=["b200"], gpus=[1], weight_dtypes=["fp4", "fp8"],
                         batch=[1, 512], context_tokens=[4096], kv_dtype="fp8")
    for d, dtype in enumerate(("fp4", "fp8")):
        for b, batch in enumerate((1, 512)):
            expected = step(SHAPE, B200, batch=batch, new_tokens=1, context_tokens=4096, weight_dtype=dtype,
                            kv_dtype="fp8").step_seconds
            assert float(grid.decode_step_seconds[0, 0, 0, d, b, 0]) == pytest.approx(expected, rel=1e-9)


def test_memory_stores_the_embedding_and_lm_head_in_16_bits_under_fp8_and_fp4() -> None:
    """Memory counts the same bytes the step streams: Llama 3.3 70B's embedding table and untied lm_head
    (8,192 x 128,256 each) stay 2 B under fp8 (1 B per block weight) and fp4 (0.5 B), int8 keeps 1 B."""
    from costmodel.config import ReplicaConfig
    from costmodel.memory import plan_memory, plan_replica_memory, stored_weight_bytes
    from costmodel.roofline import Efficiency

    outside = 2 * HEAD_PARAMS  # embedding + untied lm_head
    blocks = SHAPE.total_params - outside
    assert stored_weight_bytes(SHAPE, weight_bytes_per_param=1.0, head_weight_bytes_per_param=2.0) == pytest.approx(
        blocks * 1.0 + outside * 2.0)
    hardware = load_accelerator("h200")
    for dtype, block_bytes, head_bytes in (("fp8", 1.0, 2.0), ("fp4", 0.5, 2.0), ("int8", 1.0, 1.0)):
        hw = B200 if dtype == "fp4" else hardware
        config = ReplicaConfig(shape=SHAPE, hardware=hw, gpus=4, weight_dtype=dtype, kv_dtype="fp8",
                               efficiency=Efficiency.from_accelerator(hw))
        plan = plan_replica_memory(config, context_tokens=2048)
        assert plan.weights_bytes == pytest.approx(blocks * block_bytes + outside * head_bytes)
        assert plan.weights_bytes_per_gpu == pytest.approx(plan.weights_bytes / 4)
    # Without a head format the plan is the old one: every parameter at the weight format.
    assert plan_memory(SHAPE, hbm_bytes_per_gpu=hardware.memory_bytes, gpus=4, weight_bytes_per_param=1.0,
                       kv_bytes_per_element=1.0, context_tokens=2048).weights_bytes == pytest.approx(SHAPE.total_params)
