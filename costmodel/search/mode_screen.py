"""The screen's bounds for a configuration that runs a serving mode (search/mode_choice.py), from the plain
tensor-parallel screen of its replica (search/screen.py), so they stay true bounds and the pruning stays safe.

With c the compute seconds per token of the plain replica at its floor batch, t_min its batch-1 decode step, S the
engine's running-sequence cap, P the uncached prompt tokens and O the output tokens per request (means), margin m:
- speculation with k draft tokens: a verify step emits at most k + 1 tokens per sequence and costs at least a plain
  step, so TPOT >= t_min / (k + 1) and the sequence-cap bound grows k + 1 times; every emitted token still costs at
  least c (rejected drafts only add compute), so the compute bound (m / ((P + O) c)) holds as it is;
- DEP over N GPUs: the FLOPs per token are tensor parallelism's, spread over the same N GPUs, so c holds; its
  smallest step is `expert_parallel.dep_step` of one token over the N ranks (per-rank attention of 1/N token, the
  MoE ops, the all-to-alls), which every step of the simulator's DEP timer costs at least; S holds per rank (N S);
  memory: DP attention stores every attention weight whole, so a replica tensor parallelism cannot fit cannot be
  fitted this way either;
- xPyD pools of g GPUs: a prefill instance does at least P c_g compute-seconds per request and a decode instance
  O c_g (or is held by its sequence cap), so capacity <= min(x m / (P c_g), y min(m / (O c_g), m S (k + 1) /
  (O t_min))); TPOT >= the decode pool's t_min / (k + 1); the KV transfer only adds to TTFT.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from costmodel.catalog import load_model
from costmodel.catalog.params import ModelShape, derive_shape
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.expert_parallel import dep_step
from costmodel.roofline import Efficiency
from costmodel.scenario import Scenario
from costmodel.search.mode_choice import ModeChoice
from costmodel.search.space import Candidate


@dataclass(frozen=True, kw_only=True)
class ModeBounds:
    """A mode's capacity upper bound (requests/s per deployment) and TPOT lower bound (s)."""

    capacity_upper_requests_per_second: float
    tpot_lower_seconds: float


def _dep_step_lower_seconds(shape: ModelShape, hardware: AcceleratorSpec, *, gpus: int, weight_dtype: str,
                            kv_dtype: str, efficiency: Efficiency) -> float:
    return dep_step(shape, hardware, ep_gpus=gpus, batch_per_gpu=1.0 / gpus, new_tokens=1, context_tokens=0,
                    logit_rows_per_sequence=1.0, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                    efficiency=efficiency).step_seconds


def mode_bounds(mode: ModeChoice, *, compute_seconds_per_token: float, decode_step_lower_seconds: float,
                shape: ModelShape, hardware: AcceleratorSpec, gpus: int, weight_dtype: str, kv_dtype: str,
                efficiency: Efficiency, max_num_seqs: int, prompt_tokens: float, output_tokens: float,
                margin: float) -> ModeBounds:
    """The bounds of `mode` on the plain replica whose screen gave c and t_min (module docstring)."""
    tokens_per_step = 1 + mode.draft_tokens  # most tokens a sequence can emit per decode step
    t_min = decode_step_lower_seconds
    seqs = max_num_seqs
    if mode.parallelism == "dep":
        t_min = _dep_step_lower_seconds(shape, hardware, gpus=gpus, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                                        efficiency=efficiency)
        seqs = max_num_seqs * gpus
    per_token = compute_seconds_per_token

    def bound(numerator: float, denominator: float) -> float:
        return margin * numerator / denominator if denominator > 0 else math.inf

    decode_cap = bound(seqs * tokens_per_step, output_tokens * t_min)
    if mode.disaggregated:
        prefill = mode.prefill_instances * bound(1.0, prompt_tokens * per_token)
        decode = mode.decode_instances * min(bound(1.0, output_tokens * per_token), decode_cap)
        upper = min(prefill, decode)
    else:
        upper = min(bound(1.0, (prompt_tokens + output_tokens) * per_token), decode_cap)
    return ModeBounds(capacity_upper_requests_per_second=upper, tpot_lower_seconds=t_min / tokens_per_step)


def candidate_mode_bounds(scenario: Scenario, candidate: Candidate, *, compute_seconds_per_token: float,
                          decode_step_lower_seconds: float, hardware: AcceleratorSpec, efficiency: Efficiency,
                          max_num_seqs: int, margin: float) -> ModeBounds:
    """`mode_bounds` of a searched candidate at the scenario's mean lengths (the plain screen's c and t_min)."""
    assert candidate.mode is not None
    workload = scenario.workload
    return mode_bounds(
        candidate.mode, compute_seconds_per_token=compute_seconds_per_token,
        decode_step_lower_seconds=decode_step_lower_seconds, shape=derive_shape(load_model(candidate.model)),
        hardware=hardware, gpus=candidate.gpus_per_replica, weight_dtype=candidate.weight_dtype,
        kv_dtype=candidate.kv_dtype, efficiency=efficiency, max_num_seqs=max_num_seqs,
        prompt_tokens=workload.mean_prompt_tokens() * (1.0 - workload.cached_prompt_fraction),
        output_tokens=workload.mean_output_tokens(), margin=margin)
