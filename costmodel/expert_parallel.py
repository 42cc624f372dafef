"""Expert parallelism (EP) with data-parallel attention (DP attention), as SGLang and TensorRT-LLM run DeepSeek.

An EP-N layout over N GPUs (one or more nodes): every GPU runs attention for its own B sequences with the whole
attention weights (DP attention: its own requests' KV only, no all-reduce), while each MoE layer's experts are
spread over the N GPUs and every token is sent to the GPUs of its top-k experts and back: two all-to-alls per
MoE layer (dispatch, combine). Per GPU and step (`dep_step`), with the roofline's own op costs:
    attention ops (qkv_proj, attention, o_proj) = a 1-GPU step of B sequences
    MLP, experts, lm_head                      = an N-GPU step of N B sequences (experts / N per GPU; the
                                                  dense layers and the lm_head tensor-parallel over N)
    all-to-all                                 = per MoE layer, dispatch + combine (`all_to_all_seconds`)
    + the fixed step overhead once.
All-to-all: a token's top-k destinations are uniform over the N GPUs; the share on its own GPU moves nothing,
the share on the other GPUs of its node crosses NVLink, the rest the per-GPU NIC, and the slower of the two
sets the time, plus one small-message latency (`catalog.links`). Dispatch sends fp8 activations and combine
bf16 ("FP8 dispatching, and BF16 combining", deepseek-ai/DeepEP README at commit 0297fc80, read 2026-12-01).
That README measures 90 GB/s (dispatch) and 81 GB/s (combine) logical bandwidth at EP 8 x 2 and 61 / 61 GB/s at
EP 8 x 4 on SM90 with CX7 NICs; the link model here gives 100 and 66.7 GB/s for those layouts (50 GB/s of NIC
over the remote share, 1/2 and 3/4), within 10-23% of them (tests/test_expert_parallel.py).
Left out: expert load imbalance (EPLB), two-batch overlap of communication with compute, the all-gather the
dense MLP layers need under DP attention, and DeepEP's per-node deduplication of a token's copies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from costmodel.catalog.links import CROSS_NODE_ALLREDUCE_LATENCY_SECONDS, intra_node_bytes_per_s
from costmodel.catalog.params import ModelShape
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.errors import CostmodelError
from costmodel.ops import FloatOrArray, uniform_work
from costmodel.roofline import Efficiency, OpCost, step_from_work

DISPATCH_BYTES_PER_ELEMENT = 1.0  # fp8 dispatch (DeepEP README)
COMBINE_BYTES_PER_ELEMENT = 2.0  # bf16 combine
ATTENTION_OPS = frozenset({"qkv_proj", "attention", "o_proj"})


def all_to_all_seconds(shape: ModelShape, hardware: AcceleratorSpec, *, tokens_per_gpu: FloatOrArray, ep_gpus: int,
                       bytes_per_element: float) -> FloatOrArray:
    """One all-to-all of one MoE layer: each of `tokens_per_gpu` tokens to its experts_per_token GPUs (a float
    or an array of token counts: the simulator's step tables price every count at once)."""
    if ep_gpus <= 1:
        return 0.0 * tokens_per_gpu
    per_node = hardware.gpus_per_node or ep_gpus
    local = min(ep_gpus, per_node)
    sent = tokens_per_gpu * shape.experts_per_token * shape.hidden * bytes_per_element
    seconds = sent * (local - 1) / ep_gpus / intra_node_bytes_per_s(hardware)
    latency = hardware.link_latency_seconds
    if ep_gpus > local:
        if hardware.inter_node_bytes_per_s is None:
            raise CostmodelError(f"expert parallelism over {ep_gpus} {hardware.id} spans nodes, but the catalog row "
                                 "cites no inter-node bandwidth; use at most one node")
        seconds = np.maximum(seconds, sent * (ep_gpus - local) / ep_gpus / hardware.inter_node_bytes_per_s)
        latency = hardware.inter_node_latency_seconds or max(CROSS_NODE_ALLREDUCE_LATENCY_SECONDS, latency)
    return seconds + latency


def logical_bandwidth_bytes_per_s(hardware: AcceleratorSpec, *, ep_gpus: int) -> float:
    """Bytes a GPU sends per second of all-to-all, local share included (DeepEP's 'logical bandwidth')."""
    per_node = hardware.gpus_per_node or ep_gpus
    local = min(ep_gpus, per_node)
    if ep_gpus > local and hardware.inter_node_bytes_per_s is not None:
        return hardware.inter_node_bytes_per_s * ep_gpus / (ep_gpus - local)
    return intra_node_bytes_per_s(hardware) * ep_gpus / max(local - 1, 1)


def exchange_seconds(shape: ModelShape, hardware: AcceleratorSpec, *, tokens_per_gpu: FloatOrArray,
                     ep_gpus: int) -> FloatOrArray:
    """A step's all-to-alls: per MoE layer, the dispatch (fp8) and the combine (bf16) of `tokens_per_gpu` tokens."""
    return shape.moe_layers * sum(
        all_to_all_seconds(shape, hardware, tokens_per_gpu=tokens_per_gpu, ep_gpus=ep_gpus, bytes_per_element=b)
        for b in (DISPATCH_BYTES_PER_ELEMENT, COMBINE_BYTES_PER_ELEMENT))


@dataclass(frozen=True, kw_only=True)
class DepStep:
    """One step of a DP-attention + EP layout, per GPU (s)."""

    attention_seconds: float
    moe_seconds: float  # MLP, experts and lm_head
    all_to_all_seconds: float
    overhead_seconds: float
    ops: tuple[OpCost, ...] = ()  # attention ops at 1 GPU, the rest at N GPUs (per GPU)

    @property
    def step_seconds(self) -> float:
        return self.attention_seconds + self.moe_seconds + self.all_to_all_seconds + self.overhead_seconds


def dep_step(shape: ModelShape, hardware: AcceleratorSpec, *, ep_gpus: int, batch_per_gpu: float, new_tokens: int,
             context_tokens: int, logit_rows_per_sequence: float, weight_dtype: str, kv_dtype: str,
             efficiency: Efficiency) -> DepStep:
    """A step of `batch_per_gpu` sequences on each of `ep_gpus` GPUs (module docstring)."""
    if shape.moe_layers == 0:
        raise CostmodelError(f"{shape.model_id} has no MoE layers: expert parallelism does not apply")
    bare = replace(efficiency, overhead_seconds_per_step=0.0)

    def ops(batch: float, gpus: int) -> tuple[OpCost, ...]:
        work = replace(uniform_work(shape, batch=batch, new_tokens=float(new_tokens), context_tokens=float(context_tokens)),
                       logit_rows=batch * logit_rows_per_sequence)
        return step_from_work(shape, hardware, work, weight_dtype=weight_dtype, kv_dtype=kv_dtype, gpus=gpus,
                              efficiency=bare).ops

    attention_ops = tuple(op for op in ops(float(batch_per_gpu), 1) if op.name in ATTENTION_OPS)
    moe_ops = tuple(op for op in ops(float(batch_per_gpu * ep_gpus), ep_gpus) if op.name not in ATTENTION_OPS)
    attention = sum(op.seconds for op in attention_ops)
    moe = sum(op.seconds for op in moe_ops)
    tokens = float(batch_per_gpu) * new_tokens
    exchange = float(exchange_seconds(shape, hardware, tokens_per_gpu=tokens, ep_gpus=ep_gpus))
    return DepStep(attention_seconds=attention, moe_seconds=moe, all_to_all_seconds=exchange,
                   overhead_seconds=efficiency.overhead_seconds_per_step, ops=attention_ops + moe_ops)


def nodes_spanned(hardware: AcceleratorSpec, *, ep_gpus: int) -> int:
    """Nodes an EP group of `ep_gpus` spans (1 without a node size in the row)."""
    return math.ceil(ep_gpus / hardware.gpus_per_node) if hardware.gpus_per_node else 1
