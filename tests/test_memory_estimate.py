"""Memory plan, estimate inputs, and property tests over random valid shapes."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.catalog import derive_shape, load_accelerator, load_model
from costmodel.catalog.schema import ModelSpec
from costmodel.errors import CostmodelError
from costmodel.estimate import estimate
from costmodel.memory import RESERVE_FRACTION, activation_bytes_per_gpu, plan_memory
from costmodel.roofline import step


def test_max_batch_arithmetic_llama8b_h100():
    est = estimate("llama-3.1-8b", "h100-sxm", prompt_tokens=1024, output_tokens=256)
    hw = load_accelerator("h100-sxm")
    plan = est.memory
    # Budget = HBM - weights - workspace - 10% reserve; each 1280-token sequence holds 1280 * 131072 B.
    budget = hw.memory_bytes - 16.06e9 - plan.activation_bytes_per_gpu - RESERVE_FRACTION * hw.memory_bytes
    assert plan.kv_budget_bytes_per_gpu == pytest.approx(budget, rel=1e-3)
    assert plan.max_batch == math.floor(plan.kv_budget_bytes_per_gpu / (1280 * 131072))


def test_405b_does_not_fit_on_one_gpu_with_numbers():
    est = estimate("llama-3.1-405b", "h100-sxm", gpus=1)
    assert not est.fits and not est.memory.fits
    assert "does not fit" in est.memory.message and "GB" in est.memory.message
    assert estimate("llama-3.1-405b", "h100-sxm", gpus=8, weight_dtype="fp8").fits


def test_fits_at_batch1_ooms_at_large_batch():
    small = estimate("llama-3.1-70b", "h100-sxm", gpus=2, batch=1, prompt_tokens=8192, output_tokens=1024)
    big = estimate("llama-3.1-70b", "h100-sxm", gpus=2, batch=512, prompt_tokens=8192, output_tokens=1024)
    assert small.fits and not big.fits
    assert big.memory.max_batch < 512


def test_kv_grows_linearly_with_context():
    shape = derive_shape(load_model("llama-3.1-8b"))
    a = plan_memory(shape, hbm_bytes_per_gpu=80e9, gpus=1, weight_bytes_per_param=2, kv_bytes_per_element=2, context_tokens=1000)
    b = plan_memory(shape, hbm_bytes_per_gpu=80e9, gpus=1, weight_bytes_per_param=2, kv_bytes_per_element=2, context_tokens=2000)
    assert b.kv_bytes_per_sequence == pytest.approx(2 * a.kv_bytes_per_sequence)
    assert b.max_batch <= a.max_batch


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"gpus": 0}, "--gpus"),
        ({"batch": 0}, "--batch"),
        ({"prompt_tokens": -5}, "--prompt-tokens"),
        ({"output_tokens": 0}, "--output-tokens"),
        ({"weight_dtype": "fp6"}, "--weight-dtype"),
        ({"kv_dtype": "int3"}, "--kv-dtype"),
        ({"gpus": 3}, "do not split evenly"),
    ],
)
def test_bad_inputs_name_the_flag(kwargs, fragment):
    with pytest.raises(CostmodelError, match=fragment):
        estimate("llama-3.1-8b", "h100-sxm", **kwargs)


def test_unknown_ids_suggest():
    with pytest.raises(CostmodelError, match="unknown model 'llama-3.1-8x'; did you mean 'llama-3.1-8b'"):
        estimate("llama-3.1-8x", "h100-sxm")
    with pytest.raises(CostmodelError, match="unknown hardware 'h100'; did you mean"):
        estimate("llama-3.1-8b", "h100")


@st.composite
def model_specs(draw):
    heads_kv = draw(st.sampled_from([1, 2, 4, 8]))
    group = draw(st.sampled_from([1, 2, 4, 8]))
    head_dim = draw(st.sampled_from([32, 64, 128]))
    heads = heads_kv * group
    moe = draw(st.booleans())
    experts = draw(st.integers(2, 64)) if moe else None
    data = {
        "id": "random",
        "name": "random",
        "source": "hypothesis",
        "checked": "2026-11-29",
        "hidden_size": heads * head_dim,
        "num_hidden_layers": draw(st.integers(1, 96)),
        "num_attention_heads": heads,
        "num_key_value_heads": heads_kv,
        "head_dim": head_dim,
        "intermediate_size": draw(st.integers(64, 60000)),
        "vocab_size": draw(st.integers(100, 260000)),
        "tie_word_embeddings": draw(st.booleans()),
    }
    if moe:
        data["num_local_experts"] = experts
        data["num_experts_per_tok"] = draw(st.integers(1, experts))
    return ModelSpec.model_validate(data)


@settings(max_examples=60, deadline=None)
@given(
    spec=model_specs(),
    hw_id=st.sampled_from(["h100-sxm", "l4", "mi300x", "b200", "rtx-4090"]),
    batch=st.integers(1, 512),
    new_tokens=st.integers(1, 8192),
    context=st.integers(0, 200_000),
    gpus=st.sampled_from([1, 2, 4, 8]),
    dtype=st.sampled_from(["bf16", "fp8", "int8", "int4"]),
)
def test_property_no_nan_no_negative(spec, hw_id, batch, new_tokens, context, gpus, dtype):
    hw = load_accelerator(hw_id)
    shape = derive_shape(spec)
    res = step(shape, hw, batch=batch, new_tokens=new_tokens, context_tokens=context, gpus=gpus, weight_dtype=dtype)
    for value in (res.step_seconds, res.flops, res.bytes, res.compute_seconds, res.memory_seconds, res.comm_seconds):
        assert math.isfinite(value) and value >= 0
    assert res.step_seconds > 0
    for op in res.ops:
        assert op.flops >= 0 and op.bytes >= 0 and op.seconds >= 0
    plan = plan_memory(shape, hbm_bytes_per_gpu=hw.memory_bytes, gpus=gpus, weight_bytes_per_param=2,
                       kv_bytes_per_element=2, context_tokens=max(context, 1))
    assert plan.max_batch >= 0 and math.isfinite(plan.kv_bytes_per_sequence)
    assert activation_bytes_per_gpu(shape, gpus=gpus) > 0
