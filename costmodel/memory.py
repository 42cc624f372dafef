"""KV-cache memory planning: weights + KV for every token in flight + workspace + reserve must fit.

Array-friendly like the roofline (floats or broadcastable numpy arrays), so grids use the same formulas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from costmodel.catalog.params import ModelShape
from costmodel.config import ReplicaConfig
from costmodel.dtypes import ACTIVATION_BYTES_PER_ELEMENT, BYTES_PER_ELEMENT, lm_head_weight_dtype
from costmodel.units import counted

# vLLM's default gpu_memory_utilization = 0.9 leaves 10% of HBM for the CUDA context, cuBLAS/NCCL
# workspaces and fragmentation; we keep the same reserve so max_batch matches what vLLM reports.
RESERVE_FRACTION = 0.10
# vLLM's default max_num_batched_tokens for chunked prefill (token budget per step).
MAX_BATCHED_TOKENS = 8192
# How an engine sizes its KV cache (the engine profile's kv_memory_rule): "total_fraction" (vLLM's
# gpu_memory_utilization): weights + workspace + KV fit in that share of HBM; "free_fraction" (TensorRT-LLM's
# free_gpu_memory_fraction): KV gets that share of what weights and workspace leave.
KvMemoryRule = Literal["total_fraction", "free_fraction"]
DEFAULT_KV_MEMORY_FRACTION = 0.9  # both engines' default (1 - RESERVE_FRACTION)


def reserve_bytes(*, hbm_bytes_per_gpu: Any, used_bytes_per_gpu: Any, rule: KvMemoryRule = "total_fraction",
                  fraction: float = DEFAULT_KV_MEMORY_FRACTION) -> Any:
    """HBM per GPU the engine keeps back from KV: (1 - fraction) of all HBM (total_fraction) or of what the
    weights and workspace (`used_bytes_per_gpu`) leave (free_fraction). 1 - fraction is rounded to 12 places so
    the default 0.9 keeps exactly the 0.10 reserve it always had."""
    kept_back = round(1.0 - fraction, 12)
    if rule == "free_fraction":
        return kept_back * (hbm_bytes_per_gpu - used_bytes_per_gpu)
    return kept_back * hbm_bytes_per_gpu


@dataclass(frozen=True)
class MemoryPlan:
    """Per-GPU memory at one context length (bytes), and the concurrency it allows."""

    context_tokens: int
    gpus: int
    hbm_bytes_per_gpu: float
    weights_bytes: float  # whole model at the chosen weight dtype
    weights_bytes_per_gpu: float
    kv_bytes_per_token: float  # all layers, one token, whole replica
    kv_bytes_per_sequence: float  # at context_tokens (sliding-window layers capped at the window)
    activation_bytes_per_gpu: float
    reserve_bytes_per_gpu: float
    kv_budget_bytes_per_gpu: float
    max_batch: int  # concurrent sequences at context_tokens (0 = nothing fits)
    fits: bool  # weights + workspace + reserve fit and at least one sequence fits
    message: str  # human sentence with the numbers


def kv_bytes_per_token(shape: ModelShape, *, kv_bytes_per_element: Any) -> Any:
    """2 * L * g * d_h * b_kv (MLA: L * (kv_lora_rank + rope_dim) * b_kv), bytes per token."""
    return shape.layers * shape.kv_elements_per_token_per_layer * kv_bytes_per_element


def kv_bytes_per_sequence(shape: ModelShape, *, context_tokens: Any, kv_bytes_per_element: Any) -> Any:
    """KV bytes one sequence holds at a context length; sliding-window layers keep only the window."""
    per_layer_token = shape.kv_elements_per_token_per_layer * kv_bytes_per_element
    tokens = shape.full_attention_layers * context_tokens
    if shape.sliding_window_tokens:
        tokens = tokens + shape.sliding_attention_layers * np.minimum(context_tokens, shape.sliding_window_tokens)
    return per_layer_token * tokens


def kv_bytes_per_sequence_per_gpu(shape: ModelShape, *, context_tokens: Any, kv_bytes_per_element: Any, gpus: Any) -> Any:
    """KV bytes of one sequence held by each GPU: GQA heads split across TP ranks (up to g), MLA replicated."""
    kv_split = np.minimum(gpus, shape.kv_heads) if shape.kv_shardable else 1.0
    return kv_bytes_per_sequence(shape, context_tokens=context_tokens, kv_bytes_per_element=kv_bytes_per_element) / kv_split


def activation_bytes_per_gpu(shape: ModelShape, *, gpus: Any) -> Any:
    """Workspace for one step of MAX_BATCHED_TOKENS: hidden states plus the (TP-split) MLP intermediate."""
    mlp_width = max(shape.dense_mlp_params_per_layer, shape.experts_per_token * shape.expert_params) / (3 * shape.hidden)
    per_token = 4.0 * shape.hidden + 2.0 * mlp_width / gpus
    return MAX_BATCHED_TOKENS * per_token * ACTIVATION_BYTES_PER_ELEMENT


def stored_weight_bytes(shape: ModelShape, *, weight_bytes_per_param: Any, head_weight_bytes_per_param: Any = None) -> Any:
    """Bytes of the stored weights: the transformer blocks in the weight format, the embedding table and an
    untied lm_head in `head_weight_bytes_per_param` (None: the weight format too).

    NVIDIA's FP8/NVFP4 checkpoints quantize only the linear layers inside the blocks and keep the embedding
    and lm_head in 16 bits (`dtypes.HEAD_KEPT_16_BIT`, which the step time reads too), so memory counts them
    at the same bytes the roofline streams.
    """
    if head_weight_bytes_per_param is None:
        return shape.total_params * weight_bytes_per_param
    outside = shape.embedding_params + (0.0 if shape.tied_embeddings else shape.lm_head_params)
    return (shape.total_params - outside) * weight_bytes_per_param + outside * head_weight_bytes_per_param


def memory_arrays(
    shape: ModelShape,
    *,
    hbm_bytes_per_gpu: Any,
    gpus: Any,
    weight_bytes_per_param: Any,
    kv_bytes_per_element: Any,
    context_tokens: Any,
    head_weight_bytes_per_param: Any = None,
    kv_memory_rule: KvMemoryRule = "total_fraction",
    kv_memory_fraction: float = DEFAULT_KV_MEMORY_FRACTION,
) -> tuple[Any, Any, Any]:
    """(weights bytes per GPU, KV budget bytes per GPU, max concurrent sequences) as arrays."""
    weights = stored_weight_bytes(shape, weight_bytes_per_param=weight_bytes_per_param,
                                  head_weight_bytes_per_param=head_weight_bytes_per_param)
    weights_per_gpu = weights / gpus
    activation = activation_bytes_per_gpu(shape, gpus=gpus)
    reserve = reserve_bytes(hbm_bytes_per_gpu=hbm_bytes_per_gpu, used_bytes_per_gpu=weights_per_gpu + activation,
                            rule=kv_memory_rule, fraction=kv_memory_fraction)
    budget = hbm_bytes_per_gpu - weights_per_gpu - activation - reserve
    kv_seq_per_gpu = kv_bytes_per_sequence_per_gpu(
        shape, context_tokens=context_tokens, kv_bytes_per_element=kv_bytes_per_element, gpus=gpus
    )
    max_batch = np.floor(np.maximum(budget, 0.0) / np.maximum(kv_seq_per_gpu, 1e-9))
    return weights_per_gpu, budget, max_batch


def plan_memory(
    shape: ModelShape,
    *,
    hbm_bytes_per_gpu: float,
    gpus: int,
    weight_bytes_per_param: float,
    kv_bytes_per_element: float,
    context_tokens: int,
    head_weight_bytes_per_param: float | None = None,
    kv_memory_rule: KvMemoryRule = "total_fraction",
    kv_memory_fraction: float = DEFAULT_KV_MEMORY_FRACTION,
) -> MemoryPlan:
    """Memory plan of one replica of `gpus` GPUs at a context length (KV sized by the engine's rule)."""
    weights_per_gpu, budget, max_batch = memory_arrays(
        shape,
        hbm_bytes_per_gpu=hbm_bytes_per_gpu,
        gpus=gpus,
        weight_bytes_per_param=weight_bytes_per_param,
        kv_bytes_per_element=kv_bytes_per_element,
        context_tokens=context_tokens,
        head_weight_bytes_per_param=head_weight_bytes_per_param,
        kv_memory_rule=kv_memory_rule,
        kv_memory_fraction=kv_memory_fraction,
    )
    per_seq = float(kv_bytes_per_sequence(shape, context_tokens=context_tokens, kv_bytes_per_element=kv_bytes_per_element))
    activation = float(activation_bytes_per_gpu(shape, gpus=gpus))
    reserve = max(float(reserve_bytes(hbm_bytes_per_gpu=hbm_bytes_per_gpu, used_bytes_per_gpu=weights_per_gpu + activation,
                                      rule=kv_memory_rule, fraction=kv_memory_fraction)), 0.0)
    batch = int(max_batch)
    gb = 1e9
    if budget <= 0:
        message = (
            f"does not fit: weights {weights_per_gpu / gb:.1f} GB/GPU + workspace {activation / gb:.1f} GB + "
            f"reserve {reserve / gb:.1f} GB exceed {hbm_bytes_per_gpu / gb:.1f} GB of HBM on each of {counted(gpus, 'GPU')}; "
            "use more GPUs, a smaller weight dtype or a larger accelerator"
        )
    elif batch < 1:
        message = (
            f"does not fit: one sequence of {context_tokens} tokens needs {per_seq / gb:.2f} GB of KV but only "
            f"{budget / gb:.2f} GB/GPU is left after weights; shorten the context or add GPUs"
        )
    else:
        message = (
            f"fits: weights {weights_per_gpu / gb:.1f} GB/GPU, KV budget {budget / gb:.1f} GB/GPU "
            f"-> {batch} sequences of {context_tokens} tokens"
        )
    return MemoryPlan(
        context_tokens=context_tokens,
        gpus=gpus,
        hbm_bytes_per_gpu=hbm_bytes_per_gpu,
        weights_bytes=float(weights_per_gpu) * gpus,
        weights_bytes_per_gpu=float(weights_per_gpu),
        kv_bytes_per_token=float(kv_bytes_per_token(shape, kv_bytes_per_element=kv_bytes_per_element)),
        kv_bytes_per_sequence=per_seq,
        activation_bytes_per_gpu=activation,
        reserve_bytes_per_gpu=reserve,
        kv_budget_bytes_per_gpu=float(budget),
        max_batch=max(batch, 0),
        fits=batch >= 1,
        message=message,
    )


def plan_replica_memory(config: ReplicaConfig, *, context_tokens: int, kv_memory_rule: KvMemoryRule = "total_fraction",
                        kv_memory_fraction: float = DEFAULT_KV_MEMORY_FRACTION) -> MemoryPlan:
    """`plan_memory` for one replica (`config`: gpus x hardware at named dtypes), as estimate and serving use."""
    return plan_memory(
        config.shape,
        hbm_bytes_per_gpu=config.hardware.memory_bytes,
        gpus=config.gpus,
        weight_bytes_per_param=BYTES_PER_ELEMENT[config.weight_dtype],
        kv_bytes_per_element=BYTES_PER_ELEMENT[config.kv_dtype],
        context_tokens=context_tokens,
        head_weight_bytes_per_param=BYTES_PER_ELEMENT[lm_head_weight_dtype(config.weight_dtype)],
        kv_memory_rule=kv_memory_rule,
        kv_memory_fraction=kv_memory_fraction,
    )
