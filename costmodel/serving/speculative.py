"""Speculative decoding and multi-token prediction (MTP) on a simulated replica.

Each decode step of a speculative replica is one *verify* step: a draft (MTP heads, an EAGLE head or a small
draft model) proposes k tokens per sequence in k sequential passes, then the target runs k + 1 tokens per
sequence in one pass (every position needs its logits) and keeps the longest accepted prefix plus one token
of its own. With conditional acceptance a_i per draft position a step emits on average
E = 1 + a1 + a1 a2 + ... + a1...ak tokens (`catalog.speculative.expected_tokens_per_step`).

Cost of one step for B sequences at context C, from the same roofline op formulas as every other step:
    verify(B, C) = step with B (k + 1) new tokens, B (k + 1) logit rows, k + 1 query tokens per sequence
    draft(B, C)  = k x (a decode step of the draft shape at batch B, context C), without the fixed per-step
                   CPU overhead (the draft passes run inside the same engine step)
    speed-up(B, C) = E x plain(B, C) / (verify(B, C) + draft(B, C)).
At batch 1 a decode step is memory-bound, so verifying k + 1 tokens costs about one plain step and the
speed-up approaches E; as B grows the step turns compute-bound (and an MoE touches more experts), verify
costs up to k + 1 plain steps, and the speed-up falls below 1. `speedup` returns that curve.

The draft: `mtp` and `eagle` run one target-shaped decoder layer (MoE where the target has MoE layers, as
DeepSeek-V3's MTP module; a dense layer for an EAGLE head) sharing the target's embedding and lm_head
(DeepSeek-V3 report, section 2.2: "shared embedding ... shared output head"; EAGLE: one decoder layer on
the target's features); `draft-model` runs a catalog model. Its weights (and a draft model's KV) come out
of the KV budget.

In the simulator (`speculative_replica`): the replica's step timer is a `SpeculativeStepTimer` whose decode
steps cost verify + draft, and a request of N output tokens takes 1 + ceil((N - 1) / E) emissions (the
first token comes from prefill): the expected acceptance, not a random draw per step. TPOT, throughput
and goodput count the real N. Simplifications, each making the simulated step a little cheaper than a
real one (docs/serving.md): a sequence's context grows by one token per verify step, not E (attention
reads of the generated part and its KV growth are understated by up to (E - 1) / E); the draft's own pass
over the prompt is not charged. Prefill runs in steps of its own (`speculative_timer.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from costmodel.catalog.loader import load_model
from costmodel.catalog.params import ModelShape, derive_shape
from costmodel.catalog.speculative import (
    MAX_DRAFT_TOKENS,
    SpeculationMethod,
    expected_tokens_per_step,
    published_speculation,
)
from costmodel.config import ReplicaConfig
from costmodel.dtypes import BYTES_PER_ELEMENT
from costmodel.errors import CostmodelError
from costmodel.expert_parallel import dep_step
from costmodel.ops import uniform_work
from costmodel.roofline import Efficiency, step_from_work


@dataclass(frozen=True, kw_only=True)
class Speculation:
    """A speculative decoding setup: method, conditional acceptance per draft position, where they come from."""

    method: SpeculationMethod
    acceptance_rates: tuple[float, ...]
    draft_model_id: str | None = None
    source: str = "user"

    def __post_init__(self) -> None:
        rates = self.acceptance_rates
        if not 1 <= len(rates) <= MAX_DRAFT_TOKENS:
            raise CostmodelError(f"--spec-acceptance: give 1 to {MAX_DRAFT_TOKENS} rates, one per draft token "
                                 f"(got {len(rates)})")
        if not all(math.isfinite(a) and 0.0 <= a <= 1.0 for a in rates):
            raise CostmodelError(f"--spec-acceptance: every rate must be a number in [0, 1] (got {list(rates)})")
        if (self.method == "draft-model") != (self.draft_model_id is not None):
            raise CostmodelError("--spec-draft-model: name a catalog draft model with --spec-method draft-model, "
                                 "and only then")

    @property
    def draft_tokens(self) -> int:
        """k: tokens the draft proposes per step."""
        return len(self.acceptance_rates)

    @property
    def tokens_per_step(self) -> float:
        """E: tokens one verify step emits on average."""
        return expected_tokens_per_step(self.acceptance_rates)

    def emissions(self, output_tokens: np.ndarray) -> np.ndarray:
        """Engine emissions per request: the prefill's first token, then ceil((N - 1) / E) verify steps."""
        rest = np.asarray(output_tokens, dtype=np.int64) - 1
        return 1 + np.ceil(rest / self.tokens_per_step - 1e-9).astype(np.int64)


def resolve_speculation(*, model_id: str, method: SpeculationMethod, draft_tokens: int | None,
                        acceptance_rates: tuple[float, ...] | None, draft_model_id: str | None = None) -> Speculation:
    """The user's rates where given, else the bundled published row for this model (`catalog/speculative.yaml`)."""
    if acceptance_rates is not None:
        if draft_tokens is not None and draft_tokens != len(acceptance_rates):
            raise CostmodelError(f"--spec-draft-tokens {draft_tokens} disagrees with the {len(acceptance_rates)} "
                                 "rates of --spec-acceptance; give one rate per draft token")
        return Speculation(method=method, acceptance_rates=tuple(acceptance_rates), draft_model_id=draft_model_id)
    row = published_speculation(model_id=model_id, method=method, draft_tokens=draft_tokens or 1)
    return Speculation(method=method, acceptance_rates=row.acceptance_rates, draft_model_id=row.draft_model or draft_model_id,
                       source=f"{row.id}: {row.source} (read {row.checked})")


def draft_shape(target: ModelShape, speculation: Speculation) -> ModelShape:
    """The shape one draft pass runs: one target-shaped layer sharing embedding and lm_head, or the draft model."""
    if speculation.draft_model_id is not None:
        return derive_shape(load_model(speculation.draft_model_id))
    moe = target.moe_layers > 0
    return replace(target, model_id=f"{target.model_id}-{speculation.method}-head", layers=1,
                   moe_layers=1 if moe else 0, dense_mlp_layers=0 if moe else 1, full_attention_layers=1,
                   sliding_attention_layers=0, sliding_window_tokens=0, embedding_params=0.0, norm_params=0.0)


def draft_weight_params(target: ModelShape, speculation: Speculation) -> float:
    """Parameters the draft adds to memory: the draft model's, or one layer (+ MTP's 2d x d projection)."""
    shape = draft_shape(target, speculation)
    if speculation.draft_model_id is not None:
        return shape.total_params
    layer = shape.qkv_params_per_layer + shape.o_params_per_layer
    if shape.moe_layers:
        layer += shape.experts * shape.expert_params + shape.shared_expert_params_per_layer + shape.router_params_per_layer
    else:
        layer += shape.dense_mlp_params_per_layer
    # DeepSeek-V3 report section 2.2: the MTP module's projection matrix M_k is d x 2d.
    return layer + (2.0 * target.hidden * target.hidden if speculation.method == "mtp" else 0.0)


def draft_config(config: ReplicaConfig, speculation: Speculation) -> ReplicaConfig:
    eff = replace(config.efficiency, overhead_seconds_per_step=0.0)
    return replace(config, shape=draft_shape(config.shape, speculation), efficiency=eff)


@dataclass(frozen=True, kw_only=True)
class SpeculativeStep:
    """One batch size and context: a plain decode step next to a speculative one (seconds, per replica)."""

    batch: int
    context_tokens: int
    plain_step_seconds: float
    verify_seconds: float
    draft_seconds: float
    tokens_per_step: float

    @property
    def speedup(self) -> float:
        """Decode tokens per second with speculation over without, at this batch and context."""
        return self.tokens_per_step * self.plain_step_seconds / (self.verify_seconds + self.draft_seconds)


def _config_step(config: ReplicaConfig, *, batch: int, new_tokens: int, context_tokens: int, logit_rows: float) -> float:
    work = replace(uniform_work(config.shape, batch=float(batch), new_tokens=float(new_tokens),
                                context_tokens=float(context_tokens)), logit_rows=float(logit_rows))
    return step_from_work(config.shape, config.hardware, work, weight_dtype=config.weight_dtype,
                          kv_dtype=config.kv_dtype, gpus=config.gpus, efficiency=config.efficiency).step_seconds


def speedup(config: ReplicaConfig, speculation: Speculation, *, batch: int, context_tokens: int) -> SpeculativeStep:
    """The roofline speed-up of speculative decoding at one batch size and context (module docstring)."""
    k = speculation.draft_tokens
    draft = draft_config(config, speculation)
    return SpeculativeStep(
        batch=batch, context_tokens=context_tokens,
        plain_step_seconds=_config_step(config, batch=batch, new_tokens=1, context_tokens=context_tokens,
                                        logit_rows=batch),
        verify_seconds=_config_step(config, batch=batch, new_tokens=k + 1, context_tokens=context_tokens,
                                    logit_rows=batch * (k + 1)),
        draft_seconds=k * _config_step(draft, batch=batch, new_tokens=1, context_tokens=context_tokens, logit_rows=batch),
        tokens_per_step=speculation.tokens_per_step,
    )


def draft_kv_bytes_per_token_per_gpu(config: ReplicaConfig, speculation: Speculation) -> float:
    """KV bytes per token per GPU the draft keeps: one layer's (MTP/EAGLE) or the draft model's."""
    shape = draft_shape(config.shape, speculation)
    split = min(config.gpus, shape.kv_heads) if shape.kv_shardable else 1
    per_layer = shape.kv_elements_per_token_per_layer * BYTES_PER_ELEMENT[config.kv_dtype] / split
    return per_layer * shape.layers



def dep_speedup(config: ReplicaConfig, speculation: Speculation, *, ep_gpus: int, batch_per_gpu: int,
                context_tokens: int) -> SpeculativeStep:
    """`speedup` on a DP-attention + expert-parallel layout of `ep_gpus` GPUs (`costmodel.expert_parallel`),
    `batch_per_gpu` sequences on each; `config.gpus` is ignored. Times per GPU."""
    k = speculation.draft_tokens
    draft = draft_config(config, speculation)

    def seconds(shape: ModelShape, *, new_tokens: int, efficiency: Efficiency) -> float:
        return dep_step(shape, config.hardware, ep_gpus=ep_gpus, batch_per_gpu=batch_per_gpu, new_tokens=new_tokens,
                        context_tokens=context_tokens, logit_rows_per_sequence=float(new_tokens),
                        weight_dtype=config.weight_dtype, kv_dtype=config.kv_dtype, efficiency=efficiency).step_seconds

    return SpeculativeStep(
        batch=batch_per_gpu * ep_gpus, context_tokens=context_tokens,
        plain_step_seconds=seconds(config.shape, new_tokens=1, efficiency=config.efficiency),
        verify_seconds=seconds(config.shape, new_tokens=k + 1, efficiency=config.efficiency),
        draft_seconds=k * seconds(draft.shape, new_tokens=1, efficiency=draft.efficiency),
        tokens_per_step=speculation.tokens_per_step,
    )
