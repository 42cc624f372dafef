"""Golden napkin math and invariants of the roofline step function."""

from __future__ import annotations

import math

import numpy as np
import pytest

from costmodel.catalog import derive_shape, load_accelerator, load_model
from costmodel.estimate import estimate
from costmodel.ops import (
    OP_NAMES,
    StepWork,
    expected_distinct_experts,
    op_flops_and_bytes,
    uniform_work,
    weight_bytes_touched,
)
from costmodel.roofline import Efficiency, step, step_from_work


def test_llama31_8b_weights_and_kv_golden():
    # Llama-3.1-8B: 8.03e9 params (HF model card) x 2 B (bf16) = 16.06 GB.
    est = estimate("llama-3.1-8b", "h100-sxm")
    assert est.memory.weights_bytes == pytest.approx(16.06e9, rel=0.002)
    # KV per token = 2 (K and V) * 32 layers * 8 KV heads * 128 head dim * 2 B = 131072 B.
    assert est.memory.kv_bytes_per_token == 2 * 32 * 8 * 128 * 2 == 131072


def test_decode_batch1_h100_memory_bound_and_not_faster_than_bandwidth():
    est = estimate("llama-3.1-8b", "h100-sxm", batch=1, prompt_tokens=128, output_tokens=128)
    assert est.decode.bound == "memory"
    # Lower bound: 16.06e9 B / 3.35e12 B/s = 4.79 ms (H100 SXM datasheet bandwidth).
    lower_bound = 16.06e9 / 3.35e12
    assert lower_bound == pytest.approx(4.79e-3, rel=0.01)
    assert est.decode_step_seconds >= lower_bound * 0.99  # can't beat the input embedding exclusion by much
    # Weights touched exclude the input embedding (128256 x 4096 x 2 B = 1.05 GB): at eff 0.70 and
    # 0.4 ms overhead: (16.06e9 - 1.05e9) / (3.35e12 * 0.70) + 0.4e-3 = 6.80 ms, plus a little KV.
    expected = (16.06e9 - 128256 * 4096 * 2) / (3.35e12 * 0.70) + 0.4e-3
    assert est.decode_step_seconds == pytest.approx(expected, rel=0.02)


def test_prefill_long_prompt_is_compute_bound():
    est = estimate("llama-3.1-8b", "h100-sxm", batch=1, prompt_tokens=4096, output_tokens=16)
    assert est.prefill.bound == "compute"
    # Linear layers: 2 * (P - embedding - lm_head) * T, with V*d = 128256*4096 each; the lm_head runs for
    # the last position only (2 * V * d); causal attention 4 * L * h * d_h * T * (T+1)/2.
    vd = 128256 * 4096
    linear = 2 * (8.030261248e9 - 2 * vd) * 4096
    attention = 4 * 32 * 32 * 128 * 4096 * 4097 / 2
    assert est.prefill.flops == pytest.approx(linear + 2 * vd + attention, rel=1e-3)


def test_per_op_breakdown_sums_to_step():
    shape = derive_shape(load_model("llama-3.1-8b"))
    hw = load_accelerator("h100-sxm")
    res = step(shape, hw, batch=8, new_tokens=1, context_tokens=2048)
    names = {op.name for op in res.ops}
    assert {"qkv_proj", "attention", "o_proj", "mlp", "lm_head"} <= names
    assert "experts" not in names  # dense model
    total = sum(op.seconds for op in res.ops) + res.overhead_seconds + res.comm_seconds
    assert res.step_seconds == pytest.approx(total, rel=1e-12)
    assert sum(op.flops for op in res.ops) == pytest.approx(res.flops)
    for op in res.ops:
        assert op.arithmetic_intensity == pytest.approx(op.flops / op.bytes)


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "gpt-oss-120b"])
def test_step_time_monotone_in_batch_and_context(model_id):
    shape = derive_shape(load_model(model_id))
    hw = load_accelerator("h200")
    previous = 0.0
    for batch in (1, 2, 4, 8, 16, 64, 256):
        t = step(shape, hw, batch=batch, new_tokens=1, context_tokens=1024, gpus=8).step_seconds
        assert t >= previous
        previous = t
    previous = 0.0
    for context in (0, 128, 1024, 8192, 65536):
        t = step(shape, hw, batch=4, new_tokens=1, context_tokens=context, gpus=8).step_seconds
        assert t >= previous
        previous = t


def test_tensor_parallel_never_increases_per_gpu_weights():
    for n in (1, 2, 4, 8):
        one = estimate("llama-3.1-70b", "h100-sxm", gpus=1).memory.weights_bytes_per_gpu
        many = estimate("llama-3.1-70b", "h100-sxm", gpus=n).memory.weights_bytes_per_gpu
        assert many <= one
        assert many == pytest.approx(one / n)


def test_tensor_parallel_adds_allreduce_time():
    shape = derive_shape(load_model("llama-3.1-70b"))
    hw = load_accelerator("h100-sxm")
    one = step(shape, hw, batch=1, new_tokens=1, context_tokens=100, gpus=1)
    eight = step(shape, hw, batch=1, new_tokens=1, context_tokens=100, gpus=8)
    assert one.comm_seconds == 0.0
    # 2 all-reduces per layer x 80 layers x (20 us latency + tiny payload) >= 3.2 ms.
    assert eight.comm_seconds >= 2 * 80 * hw.link_latency_seconds


def test_expected_distinct_experts():
    # Mixtral: 8 experts, top-2. One token touches exactly 2; many tokens touch all 8.
    assert expected_distinct_experts(experts=8, experts_per_token=2, routed_tokens=1) == pytest.approx(2.0)
    assert expected_distinct_experts(experts=8, experts_per_token=2, routed_tokens=64) == pytest.approx(8.0, rel=1e-6)
    # Two tokens: 8 * (1 - (6/8)^2) = 8 * 0.4375 = 3.5.
    assert expected_distinct_experts(experts=8, experts_per_token=2, routed_tokens=2) == pytest.approx(3.5)


def test_moe_decode_reads_fewer_bytes_at_batch1_than_dense_equivalent():
    est = estimate("mixtral-8x7b", "h100-sxm", batch=1, prompt_tokens=16, output_tokens=16)
    shape = derive_shape(load_model("mixtral-8x7b"))
    # Batch 1 reads ~active params (12.9e9) not total (46.7e9) x 2 B.
    assert est.decode.bytes < 0.5 * shape.total_params * 2
    assert est.decode.bytes == pytest.approx(shape.active_params * 2 - shape.embedding_params * 2, rel=0.05)


def test_mla_kv_bytes_per_token():
    # DeepSeek-V3 MLA caches kv_lora_rank + rope dim = 512 + 64 per layer: 61 * 576 * 2 B = 70272 B.
    est = estimate("deepseek-v3", "h200", gpus=8, weight_dtype="fp8")
    assert est.memory.kv_bytes_per_token == 61 * 576 * 2


def test_fp8_uses_fp8_peak_and_int4_is_weight_only():
    shape = derive_shape(load_model("llama-3.1-8b"))
    hw = load_accelerator("h100-sxm")
    bf16 = step(shape, hw, batch=1, new_tokens=4096, context_tokens=0, weight_dtype="bf16")
    fp8 = step(shape, hw, batch=1, new_tokens=4096, context_tokens=0, weight_dtype="fp8")
    int4 = step(shape, hw, batch=1, new_tokens=4096, context_tokens=0, weight_dtype="int4")
    assert fp8.step_seconds < 0.7 * bf16.step_seconds  # fp8 tensor cores are 2x
    assert int4.step_seconds == pytest.approx(bf16.step_seconds, rel=0.1)  # same bf16 matmuls


def test_sliding_window_caps_attention_work():
    shape = derive_shape(load_model("gpt-oss-120b"))
    assert shape.sliding_attention_layers == 18 and shape.full_attention_layers == 18
    hw = load_accelerator("h100-sxm")
    a = step(shape, hw, batch=1, new_tokens=1, context_tokens=100_000)
    attn = next(op for op in a.ops if op.name == "attention")
    # Only the 18 full layers read all 100k tokens; sliding layers read 128.
    kv_layer_token = 2 * 8 * 64 * 2
    expected_read = kv_layer_token * (18 * 100_000 + 18 * 128)
    assert attn.bytes == pytest.approx(expected_read, rel=0.02)


def test_step_from_work_equals_step_for_uniform_batches():
    shape = derive_shape(load_model("qwen2.5-7b"))
    hw = load_accelerator("l40s")
    direct = step(shape, hw, batch=3, new_tokens=7, context_tokens=50)
    work = uniform_work(shape, batch=3.0, new_tokens=7.0, context_tokens=50.0)
    assert step_from_work(shape, hw, work).step_seconds == pytest.approx(direct.step_seconds, rel=1e-12)


def test_efficiency_half_saturation_slows_small_gemms_only():
    shape = derive_shape(load_model("tiny-test"))
    hw = load_accelerator("h100-sxm")
    base = Efficiency(eff_compute=0.5, eff_memory=0.7, overhead_seconds_per_step=0.0)
    slow = Efficiency(eff_compute=0.5, eff_memory=0.7, overhead_seconds_per_step=0.0, compute_half_saturation_tokens=64)
    big_base = step(shape, hw, batch=1, new_tokens=65536, context_tokens=0, efficiency=base).compute_seconds
    big_slow = step(shape, hw, batch=1, new_tokens=65536, context_tokens=0, efficiency=slow).compute_seconds
    assert big_slow == pytest.approx(big_base * (65536 + 64) / 65536)
    assert math.isfinite(big_slow)


def test_sliding_window_pairs_exact():
    # gpt-oss window W = 128. Prefill of T = 200 after C = 0: queries 0..127 see 1..128 keys (sum 8256),
    # queries 128..199 see 128 each (72 x 128 = 9216) -> 17472 pairs per sliding layer.
    shape = derive_shape(load_model("gpt-oss-20b"))
    work = uniform_work(shape, batch=1.0, new_tokens=200.0, context_tokens=0.0)
    assert float(work.sliding_pairs) == sum(min(i + 1, 128) for i in range(200)) == 8256 + 9216
    # Decode at C = 50: min(51, 128) = 51; at C = 1000: 128.
    assert float(uniform_work(shape, batch=2.0, new_tokens=1.0, context_tokens=50.0).sliding_pairs) == 2 * 51
    assert float(uniform_work(shape, batch=1.0, new_tokens=1.0, context_tokens=1000.0).sliding_pairs) == 128


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3"])
def test_weight_bytes_touched_is_the_token_free_part_of_op_bytes(model_id):
    # A step with no tokens, no pairs and no cache reads only weights: op_flops_and_bytes of that step
    # is what weight_bytes_touched states directly (the shared experts and router, not routed experts).
    shape = derive_shape(load_model(model_id))
    zero = np.zeros(3)
    empty = StepWork(tokens=zero, logit_rows=zero, full_pairs=zero, sliding_pairs=zero,
                     full_cached_tokens=zero, sliding_cached_tokens=zero)
    gpus = np.array([1.0, 2.0, 8.0])
    _, via_empty_step = op_flops_and_bytes(shape, empty, weight_bytes_per_param=1.0, kv_bytes_per_element=2.0, gpus=gpus)
    direct = weight_bytes_touched(shape, tokens=zero, weight_bytes_per_param=1.0, gpus=gpus)
    assert len(direct) == len(OP_NAMES)
    for name, expected, got in zip(OP_NAMES, via_empty_step, direct, strict=True):
        assert np.array_equal(np.broadcast_to(expected, (3,)), np.broadcast_to(got, (3,))), name
    # Arithmetic written out: the lm_head reads vocab x hidden weights once, split over the GPUs.
    lm_head = dict(zip(OP_NAMES, direct, strict=True))["lm_head"]
    assert np.allclose(lm_head, shape.lm_head_params / gpus)
    assert np.all(dict(zip(OP_NAMES, direct, strict=True))["attention"] == 0.0)


def test_weight_rereads_add_weight_bytes_per_extra_row():
    # With R = 4, a 2-token step re-reads every op's token-free weights once more (min(2, 4) - 1 = 1).
    shape = derive_shape(load_model("llama-3.1-8b"))
    hw = load_accelerator("h100-sxm")
    base = Efficiency.from_accelerator(hw)
    rereading = Efficiency(eff_compute=base.eff_compute, eff_memory=base.eff_memory,
                           overhead_seconds_per_step=base.overhead_seconds_per_step, weight_reads_max_rows=4.0)
    plain = step(shape, hw, batch=2, new_tokens=1, context_tokens=100, efficiency=base)
    more = step(shape, hw, batch=2, new_tokens=1, context_tokens=100, efficiency=rereading)
    weights = weight_bytes_touched(shape, tokens=2.0, weight_bytes_per_param=2.0, gpus=1.0)
    assert more.bytes == pytest.approx(plain.bytes + sum(float(w) for w in weights))
