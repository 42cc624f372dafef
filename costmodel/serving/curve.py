"""Throughput vs interactivity: tokens/s per GPU against tokens/s per user over a concurrency sweep.

Each point is a closed loop of `c` users with no think time (a benchmark's `--max-concurrency c` at an
infinite request rate): all requests wait at t = 0 and the engine runs at most `c` at once, so a finishing
request is replaced at the next step. Interactivity = 1 / mean TPOT (DESIGN.md). The chart reads: "at
this many tokens/s per user, one GPU delivers that many tokens/s".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from costmodel.scenario.distributions import TokenDistribution
from costmodel.serving.engine_io import KvPolicy
from costmodel.serving.replica import Replica
from costmodel.serving.simulation import draw_lengths, simulate_requests

DEFAULT_CONCURRENCY = (1, 2, 4, 8, 16, 32, 64, 128, 256)
WAVES_PER_POINT = 8  # requests per point = waves x concurrency (ramp-up and drain are ~1 wave each)


@dataclass(frozen=True)
class CurvePoint:
    """One concurrency level of one replica."""

    concurrency: int
    mean_batch: float  # running sequences, time-weighted (below `concurrency` when KV memory binds)
    output_tokens_per_second: float  # whole replica
    output_tokens_per_second_per_gpu: float
    output_tokens_per_second_per_user: float  # 1 / mean TPOT
    tpot_p50_seconds: float
    tpot_p90_seconds: float
    ttft_p50_seconds: float  # admission to first token (the closed loop has no arrival queue)
    preemptions: int


def throughput_interactivity_curve(
    replica: Replica,
    *,
    prompt_tokens: TokenDistribution,
    output_tokens: TokenDistribution,
    concurrency: Sequence[int] = DEFAULT_CONCURRENCY,
    prefix_cached_fraction: float = 0.0,
    seed: int = 0,
    kv_policy: KvPolicy = "preempt",
    min_requests: int = 64,
) -> tuple[CurvePoint, ...]:
    """One point per concurrency level (levels above the token budget are skipped)."""
    points = []
    for level in sorted(set(concurrency)):
        if not 1 <= level <= replica.max_batched_tokens:
            continue
        count = max(min_requests, WAVES_PER_POINT * level)
        prompts, outputs = draw_lengths(prompt_tokens=prompt_tokens, output_tokens=output_tokens, requests=count, seed=seed)
        result = simulate_requests(
            replica, arrival_seconds=np.zeros(count), prompt_tokens=prompts, output_tokens=outputs,
            prefix_cached_fraction=prefix_cached_fraction, kv_policy=kv_policy, max_num_seqs=level,
        )
        trace = result.trace
        done = trace.completed
        ttft_in_batch = trace.first_token_seconds[done] - trace.admitted_seconds[done]
        tpot_mean = result.tpot.mean_seconds
        points.append(
            CurvePoint(
                concurrency=level,
                mean_batch=result.mean_batch,
                output_tokens_per_second=result.output_tokens_per_second,
                output_tokens_per_second_per_gpu=result.output_tokens_per_second / replica.gpus,
                output_tokens_per_second_per_user=1.0 / tpot_mean if tpot_mean > 0 else float("nan"),
                tpot_p50_seconds=result.tpot.p50_seconds,
                tpot_p90_seconds=result.tpot.p90_seconds,
                ttft_p50_seconds=float(np.median(ttft_in_batch)) if ttft_in_batch.size else float("nan"),
                preemptions=result.preemptions,
            )
        )
    return tuple(points)
