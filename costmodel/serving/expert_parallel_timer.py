"""An expert-parallel replica for the simulator: DP attention + EP MoE over the replica's GPUs (a "DEP" layout).

SGLang (`--enable-dp-attention --ep-size N`), TensorRT-LLM (attention DP + MoE EP) and vLLM (`--data-parallel-size
N --enable-expert-parallel`) all run a large MoE this way: each of the N GPUs runs attention for its own share of the
requests with the whole attention weights, the experts are spread over the N GPUs, and every MoE layer sends each
token to its experts' GPUs and back (two all-to-alls). `costmodel.expert_parallel.dep_step` prices one uniform step;
`DepStepTimer` is the simulator's `StepTimer` of the same layout, so continuous batching, chunked prefill and the
capacity search run on it unchanged. Per step of t tokens over the N GPUs (numbers per GPU, ranks balanced):
    qkv_proj, o_proj     the roofline's op at 1 GPU and t / N tokens (weights replicated: read whole on every GPU)
    attention            at 1 GPU over 1/N of the step's pairs and cached tokens (its own requests' KV only)
    mlp, experts, head   the roofline's op at N GPUs and t tokens (as tensor parallel: 1/N of the expert bytes)
    all-to-all           `expert_parallel.exchange_seconds(t / N tokens per GPU)`, in place of the TP all-reduces
    + the fixed step overhead once.
`tests/test_expert_parallel_timer.py` checks `DepStepTimer.seconds` against `dep_step` on uniform decode batches.

`dep_replica` turns a tensor-parallel replica of an MoE model into this layout: its KV per token per GPU is the
whole per-token KV over N (each sequence lives on one GPU; an MLA latent, which tensor parallelism replicates on
every GPU, is stored once), the replicated attention weights come out of the KV budget, and the step token budget
is N times the engine's (each rank runs its own chunked prefill); a speculative replica keeps its verify + draft
steps (`DepSpeculativeStepTimer`). One scheduler stands for the N ranks, so the ranks are balanced; left out: rank
imbalance (a lone request's prefill is spread over the ranks' attention, so TTFT at low load is optimistic by the
attention share), expert load imbalance, two-batch overlap, and the draft's own layout (the MTP head runs as
tensor parallel over N). Attention's compute rate is the linear layers' at the step's tokens: exact with the GPU
datasheet default `compute_half_saturation_tokens` = 0.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from costmodel.catalog.schema import AcceleratorSpec
from costmodel.config import ReplicaConfig
from costmodel.dtypes import BYTES_PER_ELEMENT
from costmodel.errors import CostmodelError
from costmodel.expert_parallel import ATTENTION_OPS, exchange_seconds, nodes_spanned
from costmodel.ops import OP_NAMES, StepWork, op_flops_and_bytes
from costmodel.roofline import StepArrays, step_arrays
from costmodel.serving.replica import Replica
from costmodel.serving.speculative import Speculation
from costmodel.serving.speculative_timer import SpeculativeStepTimer
from costmodel.serving.steptime import FIELDS, PROBE_TOKENS, StepTimer


def _work(*, tokens: object, values: tuple[object, ...] = (0.0,) * 5) -> StepWork:
    return StepWork(tokens, *values)  # type: ignore[arg-type]


class _DepTables(StepTimer):
    """A `StepTimer` whose tables are rebuilt for DP attention + EP (module docstring); mixed in first."""

    _hardware: AcceleratorSpec

    def _build_tables(self) -> StepArrays:
        tensor = super()._build_tables()  # the tensor-parallel frame at N GPUs: MoE ops, lm_head, rates
        gpus = float(self._kwargs["gpus"])
        dynamic = {op.name: op for op in self.dynamic}
        one_gpu = {**self._kwargs, "gpus": 1.0}
        base_flops, base_bytes = op_flops_and_bytes(self.shape, _work(tokens=0.0), **one_gpu)
        # Attention ops as tables of their own (by position among the dynamic ops) or into the static seconds.
        self._rank_ops: list[tuple[int, int | None, float]] = []
        for op, name in enumerate(OP_NAMES):
            if name not in ATTENTION_OPS:
                continue
            if name not in dynamic:
                self._rank_ops.append((op, None, 1.0))
                continue
            # 1/N of the step's pairs and cached tokens on one GPU: the per-field slopes at 1 GPU over N.
            rates = [np.broadcast_to(np.asarray(tensor.op_flops_per_s[i], dtype=np.float64), PROBE_TOKENS.shape)
                     for i in (0, op)]
            scale = float(rates[0][1] / rates[1][1])  # FLOPs in the linear layers' time units (steptime.DynamicOp)
            slopes = []
            for index in range(len(FIELDS)):
                unit = tuple(1.0 / gpus if i == index else 0.0 for i in range(len(FIELDS)))
                flops, bytes_ = op_flops_and_bytes(self.shape, _work(tokens=0.0, values=unit), **one_gpu)
                slopes.append((scale * float(flops[op] - base_flops[op]), float(bytes_[op] - base_bytes[op])))
            position = self.dynamic.index(dynamic[name])
            self._rank_ops.append((op, position, scale))
            self.dynamic[position] = replace(dynamic[name], flops_per_field=tuple(s[0] for s in slopes),
                                             bytes_per_field=tuple(s[1] for s in slopes))
        return tensor

    def _token_arrays(self, tokens: np.ndarray) -> list[np.ndarray]:
        tensor, columns = self._tensor_token_arrays(tokens)
        gpus = float(self._kwargs["gpus"])
        per_rank = step_arrays(self.shape, _work(tokens=tokens / gpus, values=(np.zeros_like(tokens),) * 5),
                               **{**self._step_kwargs, "gpus": 1.0})
        static = columns[0] - np.asarray(tensor.comm_seconds)
        static = static + np.asarray(exchange_seconds(self.shape, self._hardware, tokens_per_gpu=tokens / gpus,
                                                      ep_gpus=int(gpus)))
        for op, position, scale in self._rank_ops:
            if position is None:
                static = static + np.asarray(per_rank.op_seconds[op]) - np.asarray(tensor.op_seconds[op])
                continue
            columns[2 + 2 * position] = scale * np.broadcast_to(per_rank.op_flops[op], tokens.shape)
            columns[3 + 2 * position] = np.broadcast_to(per_rank.op_bytes[op], tokens.shape)
        columns[0] = static
        return columns


class DepStepTimer(_DepTables):
    """Step times of a DP-attention + EP replica of `gpus` GPUs (one or more nodes)."""

    def __init__(self, config: ReplicaConfig, *, max_tokens: int, per_sequence_seconds: float = 0.0) -> None:
        self._hardware = config.hardware
        super().__init__(config.shape, config.hardware, weight_dtype=config.weight_dtype, kv_dtype=config.kv_dtype,
                         gpus=config.gpus, efficiency=config.efficiency, max_tokens=max_tokens,
                         per_sequence_seconds=per_sequence_seconds)


class DepSpeculativeStepTimer(_DepTables, SpeculativeStepTimer):
    """A DP-attention + EP replica that verifies k + 1 tokens per decoding sequence after k draft passes."""

    def __init__(self, config: ReplicaConfig, speculation: Speculation, *, max_tokens: int,
                 per_sequence_seconds: float = 0.0) -> None:
        self._hardware = config.hardware
        SpeculativeStepTimer.__init__(self, config, speculation, max_tokens=max_tokens,
                                      per_sequence_seconds=per_sequence_seconds)


def replicated_attention_bytes_per_gpu(replica: Replica) -> float:
    """Attention weights each GPU stores beyond its tensor-parallel share: (1 - 1/N) of them (DP attention)."""
    shape = replica.shape
    params = shape.layers * (shape.qkv_params_per_layer + shape.o_params_per_layer)
    return params * BYTES_PER_ELEMENT[replica.weight_dtype] * (1.0 - 1.0 / replica.gpus)


def check_dep(replica: Replica) -> None:
    """A DEP layout needs an MoE model on 2+ GPUs."""
    if replica.shape.moe_layers == 0:
        raise CostmodelError(f"parallelism 'dep' (expert parallel): {replica.model_id} has no MoE layers; "
                             "use parallelism 'tp'")
    if replica.gpus < 2:
        raise CostmodelError("parallelism 'dep' spreads the experts over the replica's GPUs: give 2 or more GPUs")


def dep_replica(replica: Replica) -> Replica:
    """`replica` (tensor parallel, maybe speculative) as a DP-attention + EP layout over the same GPUs."""
    check_dep(replica)
    gpus = replica.gpus
    shape = replica.shape
    config = ReplicaConfig(shape=shape, hardware=replica.hardware, gpus=gpus, weight_dtype=replica.weight_dtype,
                           kv_dtype=replica.kv_dtype, efficiency=replica.efficiency, engine=replica.engine_id)
    max_tokens = replica.max_batched_tokens * gpus  # every rank schedules its own token budget
    per_sequence = replica.timer.per_sequence_seconds
    timer: StepTimer
    if replica.speculation is None:
        timer = DepStepTimer(config, max_tokens=max_tokens, per_sequence_seconds=per_sequence)
    else:
        timer = DepSpeculativeStepTimer(config, replica.speculation, max_tokens=max_tokens,
                                        per_sequence_seconds=per_sequence)
    # Tensor parallelism splits KV by head up to the KV heads (an MLA latent not at all); DP attention keeps each
    # sequence on one GPU, so the pooled budget holds N / split times as many tokens.
    split = min(gpus, shape.kv_heads) if shape.kv_shardable else 1
    kv_scale = split / gpus
    return replace(
        replica, timer=timer, max_batched_tokens=max_tokens, parallelism="dep",
        kv_budget_bytes_per_gpu=replica.kv_budget_bytes_per_gpu - replicated_attention_bytes_per_gpu(replica),
        kv_bytes_per_token_per_gpu=replica.kv_bytes_per_token_per_gpu * kv_scale,
        kv_bytes_per_sequence_per_gpu=replica.kv_bytes_per_sequence_per_gpu * kv_scale,
    )


def nodes_of(replica: Replica) -> int:
    """Nodes the replica spans (`expert_parallel.nodes_spanned`; 1 without a node size in the catalog row)."""
    return nodes_spanned(replica.hardware, ep_gpus=replica.gpus)
