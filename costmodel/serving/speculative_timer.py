"""A speculative replica for the simulator: verify + draft step times, fewer emissions per request.

`SpeculativeStepTimer` is the target's `StepTimer` with `decode_tokens_per_sequence` = k + 1 (each decoding
sequence adds k + 1 tokens and k + 1 logit rows to a decode step: the verify pass) plus, in every decode-only
step, k passes of the draft (`serving.speculative.draft_config`) at the same batch and contexts, each as its
own ops in the decode tables (the engine sums max(compute, memory) per op). `speculative_replica` swaps it in,
takes the draft's weights (and a draft model's KV) out of the KV budget and marks the replica, so
`simulate_requests` runs each request's emissions (`Speculation.emissions`) and reports its real tokens.
Prefill runs in steps of its own on a speculative replica (SGLang's way; vLLM V1 mixes them), so no step mixes
prefill chunks with verify steps, whose cost the mixed-step path of the engine does not model.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from costmodel.config import ReplicaConfig
from costmodel.dtypes import BYTES_PER_ELEMENT
from costmodel.serving.replica import Replica
from costmodel.serving.speculative import (
    Speculation,
    draft_config,
    draft_kv_bytes_per_token_per_gpu,
    draft_weight_params,
)
from costmodel.serving.steptime import StepTimer


class SpeculativeStepTimer(StepTimer):
    """Step times of a replica that verifies k + 1 tokens per decoding sequence after k draft passes."""

    def __init__(self, config: ReplicaConfig, speculation: Speculation, *, max_tokens: int,
                 per_sequence_seconds: float = 0.0) -> None:
        self.decode_tokens_per_sequence = speculation.draft_tokens + 1
        self.speculation = speculation
        # Draft passes: decode steps of the draft shape at the same batch, without the fixed step overhead.
        self.draft = StepTimer.for_config(draft_config(config, speculation), max_tokens=max_tokens)
        super().__init__(config.shape, config.hardware, weight_dtype=config.weight_dtype, kv_dtype=config.kv_dtype,
                         gpus=config.gpus, efficiency=config.efficiency,
                         max_tokens=max_tokens * self.decode_tokens_per_sequence,
                         per_sequence_seconds=per_sequence_seconds)

    def _decode_arrays(self, batches: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        static, rows = super()._decode_arrays(batches)
        draft_batches = self.draft.max_tokens // self.draft.decode_tokens_per_sequence + 1
        if len(batches) and batches[-1] >= draft_batches:
            raise ValueError(f"the draft's decode table has {draft_batches} batch sizes, the verify step reads "
                             f"batch {int(batches[-1])}")
        draft_static, draft_rows = self.draft._decode_arrays(batches)
        k = float(self.speculation.draft_tokens)
        # Each verify step runs k draft passes at the same batch: their static seconds and context lines, x k.
        return static + k * draft_static, np.concatenate((rows, k * draft_rows), axis=1)


def speculative_replica(replica: Replica, speculation: Speculation) -> Replica:
    """`replica` with speculative decoding: the verify + draft timer, the draft's memory, the marker."""
    config = ReplicaConfig(shape=replica.shape, hardware=replica.hardware, gpus=replica.gpus,
                           weight_dtype=replica.weight_dtype, kv_dtype=replica.kv_dtype, efficiency=replica.efficiency,
                           engine=replica.engine_id)
    timer = SpeculativeStepTimer(config, speculation, max_tokens=replica.max_batched_tokens,
                                 per_sequence_seconds=replica.timer.per_sequence_seconds)
    draft_bytes = draft_weight_params(replica.shape, speculation) * BYTES_PER_ELEMENT[replica.weight_dtype] / replica.gpus
    # Prefill runs in steps of its own (decoders wait), so every decode step is a verify + draft step priced
    # exactly; SGLang's default (enable_mixed_chunk off, the sglang profile's mixed_prefill_decode false).
    return replace(
        replica, timer=timer, speculation=speculation, mixed_prefill_decode=False,
        kv_budget_bytes_per_gpu=replica.kv_budget_bytes_per_gpu - draft_bytes,
        kv_bytes_per_token_per_gpu=replica.kv_bytes_per_token_per_gpu + draft_kv_bytes_per_token_per_gpu(config, speculation),
    )
