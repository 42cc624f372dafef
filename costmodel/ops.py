"""The work of one engine step and each op's FLOPs and bytes (the arithmetic the roofline prices).

`StepWork` is what a step computes (tokens, attention pairs, cached tokens), `uniform_work` builds it for
B sequences x T new tokens at context C, and `op_flops_and_bytes` / `weight_bytes_touched` /
`op_gemm_rows` give each op's FLOPs, bytes and GEMM rows per GPU in OP_NAMES order. `costmodel.roofline`
turns them into seconds (per-op roofline, overhead, all-reduces). Symbols as in DESIGN.md: B sequences,
T new tokens, C cached tokens, N GPUs, b_w bytes per weight, b_kv bytes per KV element, b_act = 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import numpy as np

from costmodel.catalog.params import ModelShape
from costmodel.dtypes import ACTIVATION_BYTES_PER_ELEMENT

# A float or a numpy array of any broadcastable shape: every formula here runs on both (grids pass arrays).
FloatOrArray: TypeAlias = float | np.ndarray
OP_NAMES: tuple[str, ...] = ("qkv_proj", "attention", "o_proj", "mlp", "experts", "lm_head")
LOGIT_BYTES = 4.0  # fp32 logits written per vocab entry


def expected_distinct_experts(*, experts: float, experts_per_token: float, routed_tokens: FloatOrArray) -> FloatOrArray:
    """Experts touched by `routed_tokens` tokens if routing is uniform: E * (1 - (1 - k/E)^n)."""
    if experts <= 0:
        return 0.0 * routed_tokens
    return experts * (1.0 - (1.0 - experts_per_token / experts) ** routed_tokens)


@dataclass(frozen=True)
class StepWork:
    """What one step computes, summed over the sequences in it (floats or broadcastable arrays).

    A uniform batch (B sequences x T new tokens at context C) comes from `uniform_work`; the serving
    simulator sums mixed steps (prefill chunks + decode tokens) into the same shape.
    """

    tokens: FloatOrArray  # new tokens in the step: rows of every projection GEMM
    logit_rows: FloatOrArray  # sequences that emit a token this step (lm_head rows)
    full_pairs: FloatOrArray  # (query, key) pairs in one full-attention layer
    sliding_pairs: FloatOrArray  # (query, key) pairs in one sliding-window layer
    full_cached_tokens: FloatOrArray  # cached tokens read by one full-attention layer
    sliding_cached_tokens: FloatOrArray  # cached tokens read by one sliding-window layer


def uniform_work(shape: ModelShape, *, batch: FloatOrArray, new_tokens: FloatOrArray, context_tokens: FloatOrArray) -> StepWork:
    """B sequences each adding T tokens after C cached ones (prefill: T = prompt; decode: T = 1)."""
    # Causal attention: new token i (0..T-1) sees C + i + 1 keys -> T*C + T(T+1)/2 pairs per sequence.
    full_pairs = batch * (new_tokens * context_tokens + new_tokens * (new_tokens + 1) / 2.0)
    window = shape.sliding_window_tokens
    if window:
        # Query i sees min(C + i + 1, W) keys: the first k = clip(W - C, 0, T) queries see C + i + 1,
        # the rest see W -> k*C + k(k+1)/2 + (T - k)*W per sequence (exact, vectorized).
        k = np.clip(window - context_tokens, 0.0, new_tokens)
        sliding_pairs = batch * (k * context_tokens + k * (k + 1) / 2.0 + (new_tokens - k) * window)
        sliding_cached = batch * np.minimum(context_tokens, window)
    else:
        sliding_pairs = 0.0 * full_pairs
        sliding_cached = 0.0 * full_pairs
    return StepWork(
        tokens=batch * new_tokens,
        logit_rows=batch + 0.0 * new_tokens,
        full_pairs=full_pairs,
        sliding_pairs=sliding_pairs,
        full_cached_tokens=batch * context_tokens,
        sliding_cached_tokens=sliding_cached,
    )


def op_flops_and_bytes(
    shape: ModelShape,
    work: StepWork,
    *,
    weight_bytes_per_param: FloatOrArray,
    kv_bytes_per_element: FloatOrArray,
    gpus: FloatOrArray,
    lm_head_weight_bytes_per_param: FloatOrArray | None = None,
) -> tuple[tuple[FloatOrArray, ...], tuple[FloatOrArray, ...]]:
    """FLOPs and bytes per GPU of each op in OP_NAMES for one step (arrays broadcast); the lm_head may store
    other weights than the blocks (None = the same; fp8/fp4 checkpoints keep it 16-bit, dtypes.OpPrecision)."""
    head_b_w = weight_bytes_per_param if lm_head_weight_bytes_per_param is None else lm_head_weight_bytes_per_param
    tokens = work.tokens
    b_act = ACTIVATION_BYTES_PER_ELEMENT
    d = shape.hidden
    layers = shape.layers
    act_linear = layers * tokens * 2.0 * d * b_act  # read input + write output of each projection

    qkv_flops = 2.0 * tokens * layers * shape.qkv_params_per_layer
    qkv_bytes = layers * shape.qkv_params_per_layer * weight_bytes_per_param + act_linear
    o_flops = 2.0 * tokens * layers * shape.o_params_per_layer
    o_bytes = layers * shape.o_params_per_layer * weight_bytes_per_param + act_linear

    attn_flops = shape.attn_flops_per_pair_per_layer * (
        shape.full_attention_layers * work.full_pairs + shape.sliding_attention_layers * work.sliding_pairs
    )
    kv_per_token = shape.kv_elements_per_token_per_layer * kv_bytes_per_element  # bytes, one layer
    cached_read = (
        shape.full_attention_layers * work.full_cached_tokens
        + shape.sliding_attention_layers * work.sliding_cached_tokens
    )
    # GQA KV heads split across TP ranks (replicated once N > g); an MLA latent is replicated on all.
    kv_split = np.minimum(gpus, shape.kv_heads) if shape.kv_shardable else 1.0
    kv_bytes = kv_per_token * (cached_read + layers * tokens) * gpus / kv_split
    q_o_act = layers * tokens * 2.0 * shape.heads * shape.head_dim * b_act
    attn_bytes = kv_bytes + q_o_act

    mlp_params = shape.dense_mlp_layers * shape.dense_mlp_params_per_layer
    mlp_flops = 2.0 * tokens * mlp_params
    mlp_bytes = mlp_params * weight_bytes_per_param + shape.dense_mlp_layers * tokens * 2.0 * d * b_act

    touched = expected_distinct_experts(
        experts=shape.experts, experts_per_token=shape.experts_per_token, routed_tokens=tokens
    )
    moe_static = shape.shared_expert_params_per_layer + shape.router_params_per_layer
    exp_flops = 2.0 * tokens * shape.moe_layers * (shape.experts_per_token * shape.expert_params + moe_static)
    exp_bytes = shape.moe_layers * (
        (touched * shape.expert_params + moe_static) * weight_bytes_per_param + tokens * 2.0 * d * b_act
    )

    # Logits only for the last position of each sequence (engines skip the rest in prefill).
    head_flops = 2.0 * work.logit_rows * shape.lm_head_params
    head_bytes = shape.lm_head_params * head_b_w + work.logit_rows * shape.vocab * LOGIT_BYTES

    flops = (qkv_flops, attn_flops, o_flops, mlp_flops, exp_flops, head_flops)
    bytes_ = (qkv_bytes, attn_bytes, o_bytes, mlp_bytes, exp_bytes, head_bytes)
    return tuple(f / gpus for f in flops), tuple(b / gpus for b in bytes_)


def weight_bytes_touched(
    shape: ModelShape, *, tokens: FloatOrArray, weight_bytes_per_param: FloatOrArray, gpus: FloatOrArray,
    lm_head_weight_bytes_per_param: FloatOrArray | None = None,
) -> tuple[FloatOrArray, ...]:
    """Weight bytes per GPU each op in OP_NAMES reads whatever the tokens are, in OP_NAMES order.

    The weight terms of `op_flops_and_bytes` with no tokens in the step: projections, dense MLP and lm_head
    read all their weights; the experts op reads its shared experts and router (the routed experts a token
    picks are counted per token in `op_flops_and_bytes`, `expected_distinct_experts`); attention multiplies
    no weights. `tokens` only sets the broadcast shape. `step_arrays` multiplies these by `weight_rereads`.
    """
    zero = 0.0 * tokens
    head_b_w = weight_bytes_per_param if lm_head_weight_bytes_per_param is None else lm_head_weight_bytes_per_param
    moe_static = shape.shared_expert_params_per_layer + shape.router_params_per_layer
    weights = (
        zero + shape.layers * shape.qkv_params_per_layer * weight_bytes_per_param,
        zero,
        zero + shape.layers * shape.o_params_per_layer * weight_bytes_per_param,
        zero + shape.dense_mlp_layers * shape.dense_mlp_params_per_layer * weight_bytes_per_param,
        zero + shape.moe_layers * (moe_static * weight_bytes_per_param),
        zero + shape.lm_head_params * head_b_w,
    )
    return tuple(w / gpus for w in weights)


def op_gemm_rows(work: StepWork) -> tuple[FloatOrArray, ...]:
    """Rows of each op's weight GEMM, in OP_NAMES order: every new token goes through the projections,
    MLP and experts; one row per sequence through the lm_head; attention multiplies no weights."""
    tokens = work.tokens
    return (tokens, 0.0 * tokens, tokens, tokens, tokens, work.logit_rows)
