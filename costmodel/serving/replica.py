"""One replica's fixed facts for the simulator: shapes, KV budget in bytes per GPU, and its step timer."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from costmodel.catalog.params import ModelShape, derive_shape
from costmodel.catalog.schema import AcceleratorSpec, ModelSpec
from costmodel.config import ReplicaConfig
from costmodel.dtypes import BYTES_PER_ELEMENT
from costmodel.errors import CostmodelError
from costmodel.estimate import check_config, resolve_config
from costmodel.measurements.calibration import Calibration
from costmodel.memory import (
    MAX_BATCHED_TOKENS,
    MemoryPlan,
    kv_bytes_per_sequence_per_gpu,
    plan_replica_memory,
)
from costmodel.roofline import Efficiency
from costmodel.serving.profile import EngineSettings
from costmodel.serving.speculative import Speculation
from costmodel.serving.steptime import StepTimer

# vLLM's long-standing default cap on running sequences (`max_num_seqs`, EngineArgs).
MAX_NUM_SEQS = 256


@dataclass(frozen=True)
class Replica:
    """A model on `gpus` accelerators (tensor parallel) as the simulator sees it (KV numbers per GPU)."""

    model_id: str
    hardware_id: str
    gpus: int
    weight_dtype: str
    kv_dtype: str
    shape: ModelShape
    hardware: AcceleratorSpec
    efficiency: Efficiency
    memory: MemoryPlan  # at a 1-token context: weights, workspace, reserve and the KV budget
    kv_budget_bytes_per_gpu: float
    kv_bytes_per_token_per_gpu: float  # full-attention layers: grows with every token
    kv_bytes_per_sequence_per_gpu: float  # sliding-window layers at a full window: charged once per sequence
    max_batched_tokens: int
    context_limit_tokens: int | None  # the model's max_position_embeddings
    timer: StepTimer
    engine_id: str = "generic"  # the engine profile (catalog/engines) the replica runs under
    request_overhead_seconds: float = 0.0  # the profile's per-request CPU cost, before scheduling (TTFT floor)
    mixed_prefill_decode: bool = True  # the profile's: False = prefill runs in its own steps, decoders wait
    scheduler_steps: int = 1  # multi-step scheduling: the scheduler runs once per this many decode steps
    streaming_tokens_per_chunk: int = 1  # the profile's stream interval: tokens per chunk after the first
    # Speculative decoding / MTP (`serving/speculative_timer.py:speculative_replica`); None = one token per step
    speculation: Speculation | None = None
    # "tp": tensor parallel over `gpus`; "dep": DP attention + expert parallel MoE (serving/expert_parallel_timer.py)
    parallelism: Literal["tp", "dep"] = "tp"

    def running_cap(self, max_num_seqs: int) -> int:
        """The engine's cap on running sequences for the whole replica: it holds per DP rank under 'dep' (N ranks)."""
        return max_num_seqs * self.gpus if self.parallelism == "dep" else max_num_seqs

    @property
    def fits(self) -> bool:
        """Weights, workspace and reserve leave room for KV."""
        return self.kv_budget_bytes_per_gpu > 0

    def kv_bytes_for(self, *, tokens: int) -> float:
        """KV bytes per GPU charged for one sequence holding `tokens` of its own tokens."""
        return self.kv_bytes_per_sequence_per_gpu + self.kv_bytes_per_token_per_gpu * tokens

    @property
    def kv_capacity_tokens(self) -> int:
        """Tokens of full-attention KV the budget holds (sequences' window charges aside)."""
        if self.kv_bytes_per_token_per_gpu <= 0:
            return 0
        return int(max(self.kv_budget_bytes_per_gpu, 0.0) // self.kv_bytes_per_token_per_gpu)


def _kv_per_gpu(shape: ModelShape, *, context_tokens: int, kv_dtype: str, gpus: int) -> float:
    return float(
        kv_bytes_per_sequence_per_gpu(
            shape, context_tokens=context_tokens, kv_bytes_per_element=BYTES_PER_ELEMENT[kv_dtype], gpus=gpus
        )
    )


def build_replica(
    model: ModelSpec | str,
    hardware: AcceleratorSpec | str,
    *,
    gpus: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    efficiency: Efficiency | None = None,
    calibration: Calibration | None = None,
    max_batched_tokens: int = MAX_BATCHED_TOKENS,
    engine: EngineSettings | None = None,
) -> Replica:
    """Look up the ids, check the configuration, plan memory and build the step timer.

    A model that does not fit is not an error here (`Replica.fits` is False); `simulate` raises on it and
    `capacity_at_slo` reports it as infeasible. `engine` (serving.profile) sets the token budget, the
    per-request overhead, the KV sizing rule, multi-step scheduling, the streaming granularity and, where the
    profile names one, the per-step overhead; without it the replica runs the generic profile with
    `max_batched_tokens`.
    """
    spec, hw, eff = resolve_config(model, hardware, efficiency=efficiency, calibration=calibration)
    if engine is not None:
        max_batched_tokens = engine.max_batched_tokens
        eff = replace(eff, comm_overlap_fraction=engine.comm_overlap_fraction)
        if engine.step_overhead_seconds is not None:
            eff = replace(eff, overhead_seconds_per_step=engine.step_overhead_seconds,
                          source=f"{eff.source}; step overhead from engine '{engine.engine_id}'")
    check_config(
        spec, gpus=gpus, weight_dtype=weight_dtype, kv_dtype=kv_dtype, batch=1, prompt_tokens=1, output_tokens=1,
        hardware=hw,
    )
    if max_batched_tokens < 1:
        raise CostmodelError(f"--max-batched-tokens must be >= 1 (got {max_batched_tokens})")
    if eff.weight_reads_max_rows > 1.0:
        # The simulator's fast step tables are linear in the lm_head's rows; the re-read term is not.
        raise CostmodelError(
            f"these efficiencies model small-GEMM weight re-reads (weight_reads_max_rows = "
            f"{eff.weight_reads_max_rows:.1f}, fitted on a CPU), which the serving simulator does not support; "
            "simulate with the datasheet defaults or a GPU calibration (estimate accepts this calibration)"
        )
    shape = derive_shape(spec)
    config = ReplicaConfig(shape=shape, hardware=hw, gpus=gpus, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                           efficiency=eff)
    memory = (plan_replica_memory(config, context_tokens=1) if engine is None else plan_replica_memory(
        config, context_tokens=1, kv_memory_rule=engine.kv_memory_rule, kv_memory_fraction=engine.kv_memory_fraction))
    # Per-sequence KV is affine in the context above the sliding window: slope = full-attention layers,
    # intercept = sliding-window layers holding a full window (an upper bound below it).
    above = (shape.sliding_window_tokens or 0) + 1
    per_token = _kv_per_gpu(shape, context_tokens=above + 1, kv_dtype=kv_dtype, gpus=gpus) - _kv_per_gpu(
        shape, context_tokens=above, kv_dtype=kv_dtype, gpus=gpus
    )
    per_sequence = _kv_per_gpu(shape, context_tokens=above, kv_dtype=kv_dtype, gpus=gpus) - above * per_token
    timer = StepTimer.for_config(config, max_tokens=max_batched_tokens, per_sequence_seconds=0.0 if engine is None
                                 else engine.step_overhead_seconds_per_sequence)
    return Replica(
        model_id=spec.id,
        hardware_id=hw.id,
        gpus=gpus,
        weight_dtype=weight_dtype,
        kv_dtype=kv_dtype,
        shape=shape,
        hardware=hw,
        efficiency=eff,
        memory=memory,
        kv_budget_bytes_per_gpu=memory.kv_budget_bytes_per_gpu,
        kv_bytes_per_token_per_gpu=per_token,
        kv_bytes_per_sequence_per_gpu=max(per_sequence, 0.0),
        max_batched_tokens=max_batched_tokens,
        context_limit_tokens=spec.max_position_embeddings,
        timer=timer,
        engine_id="generic" if engine is None else engine.engine_id,
        request_overhead_seconds=0.0 if engine is None else engine.request_overhead_seconds,
        mixed_prefill_decode=True if engine is None else engine.mixed_prefill_decode,
        scheduler_steps=1 if engine is None else engine.scheduler_steps,
        streaming_tokens_per_chunk=1 if engine is None else engine.streaming_tokens_per_chunk,
    )
