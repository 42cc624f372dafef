"""Capacity of one replica at the SLO from the roofline alone (no queueing): the fast, closed-form answer.

The serving simulator (`costmodel.serving`) gives percentiles under real arrivals; this module gives the
steady-state answer the economics can use without simulating, and the reason when no load meets the SLO.

With P prompt tokens (a share f served from the prefix cache), O output tokens, decode batch B:
  t_p    = prefill step of one request: (1-f)P new tokens after fP cached ones
  t_d(B) = decode step of B sequences at the mean context P + O/2
  X(B)   = 1 / (t_p + O t_d(B) / B)             requests/s (prefill and decode share the GPU)
  TPOT   = t_d(B) / (1 - X(B) t_p)              decode pauses while prefills run
The capacity is X(B) for the largest B that fits in memory with TPOT <= the limit and t_p <= the TTFT limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from costmodel.config import ReplicaConfig
from costmodel.memory import plan_replica_memory


@dataclass(frozen=True, kw_only=True)
class Capacity:
    """Requests/s one replica sustains inside the SLO, and the operating point.

    Decisions read the typed flags (`feasible`, `fits`, `throughput_bound`), never `reason`'s text."""

    feasible: bool
    reason: str
    requests_per_second: float  # 0 when infeasible
    batch: int  # decode batch at the operating point
    ttft_seconds: float  # prefill of one request (no queueing)
    tpot_seconds: float  # at the operating point
    prefill_time_fraction: float  # share of GPU time spent in prefill (splits $ into input vs output)
    max_batch: int  # memory ceiling at prompt + output tokens
    method: str  # "roofline" or "simulator"
    fits: bool = True  # weights + KV for one sequence fit in the replica's memory
    throughput_bound: bool = False  # the latency limits still hold near saturation: no headroom at this rate
    latency_owner: str | None = None  # which part owns p90 TTFT/TPOT and its lever (simulator only)
    # simulator: the search's last upper bound on this capacity (serving.capacity `upper_bound_requests_per_second`)
    upper_bound_requests_per_second: float = math.inf


def _batch_ladder(*, max_batch: int) -> list[int]:
    """Decode batches tried, in order: 1..8, then x1.25 (rounded down) up to the memory ceiling."""
    batches: list[int] = []
    batch = 1
    while batch <= max_batch:
        batches.append(batch)
        batch = batch + 1 if batch < 8 else int(batch * 1.25)
    return batches


def roofline_capacity(
    config: ReplicaConfig,
    *,
    prompt_tokens: float,
    output_tokens: float,
    cached_prompt_fraction: float,
    ttft_limit_seconds: float,
    tpot_limit_seconds: float,
) -> Capacity:
    """Largest steady-state request rate meeting mean TTFT/TPOT limits (see module docstring)."""

    def step_seconds(*, batch: int, new_tokens: int, context_tokens: int) -> float:
        return config.step_seconds(batch=batch, new_tokens=new_tokens, context_tokens=context_tokens)

    cached = int(round(prompt_tokens * cached_prompt_fraction))
    new = max(1, int(round(prompt_tokens)) - cached)
    t_p = step_seconds(batch=1, new_tokens=new, context_tokens=cached)
    memory = plan_replica_memory(config, context_tokens=int(prompt_tokens + output_tokens))
    if not memory.fits:
        return Capacity(feasible=False, reason=memory.message, requests_per_second=0.0, batch=0, ttft_seconds=t_p,
                        tpot_seconds=0.0, prefill_time_fraction=0.0, max_batch=memory.max_batch, method="roofline",
                        fits=False)
    if t_p > ttft_limit_seconds:
        reason = (f"prefill of {new} tokens alone takes {t_p:.3f} s > TTFT limit {ttft_limit_seconds:.3f} s; "
                  "use more GPUs per replica, faster hardware or shorter prompts")
        return Capacity(feasible=False, reason=reason, requests_per_second=0.0, batch=0, ttft_seconds=t_p,
                        tpot_seconds=0.0, prefill_time_fraction=1.0, max_batch=memory.max_batch, method="roofline")
    context = int(prompt_tokens + output_tokens / 2)
    best: Capacity | None = None
    batches = _batch_ladder(max_batch=memory.max_batch)
    step_by_batch = config.decode_step_seconds(batches=np.asarray(batches), context_tokens=context).tolist()
    for batch, t_d in zip(batches, step_by_batch, strict=True):
        rate = 1.0 / (t_p + output_tokens * t_d / batch)
        busy_prefill = rate * t_p
        tpot = t_d / (1.0 - busy_prefill) if busy_prefill < 1 else float("inf")
        if tpot > tpot_limit_seconds:
            break
        best = Capacity(feasible=True, reason="meets the SLO (roofline, mean latency, no queueing)",
                        requests_per_second=rate, batch=batch, ttft_seconds=t_p, tpot_seconds=tpot,
                        prefill_time_fraction=busy_prefill, max_batch=memory.max_batch, method="roofline")
    if best is None:
        t_d1 = step_seconds(batch=1, new_tokens=1, context_tokens=context)
        reason = (f"a decode step takes {t_d1 * 1e3:.1f} ms even at batch 1 > TPOT limit "
                  f"{tpot_limit_seconds * 1e3:.1f} ms; use more GPUs per replica or faster hardware")
        return Capacity(feasible=False, reason=reason, requests_per_second=0.0, batch=0, ttft_seconds=t_p,
                        tpot_seconds=t_d1, prefill_time_fraction=0.0, max_batch=memory.max_batch, method="roofline")
    return best
