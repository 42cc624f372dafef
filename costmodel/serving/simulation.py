"""`simulate`: draw a request stream, run the engine on one replica, summarize latencies and throughput.

Arrivals: Poisson at `rate_per_second`, or gamma inter-arrival gaps with shape `burstiness` (vLLM's
benchmark_serving convention: 1 = Poisson, < 1 burstier, > 1 smoother; mean gap 1 / rate either way),
or a replayed list of arrival times. Arrival gaps and token lengths come from separate seeded streams,
and gaps are drawn for a unit rate then scaled, so the same seed at a higher rate is the same requests
arriving proportionally sooner (common random numbers: latencies compare across rates).
Prefix caching: `prefix_cached_fraction` of each prompt is already in the KV cache (a shared system
prompt): it skips prefill compute and its pages are shared (one pool of the longest cached prefix).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from costmodel.errors import CostmodelError, NoRequestFitsError
from costmodel.scenario.distributions import TokenDistribution
from costmodel.scenario.slo import Slo, SloLimit
from costmodel.serving.closed_loop import check_concurrency, closed_loop_send_seconds
from costmodel.serving.early_stop import MissCheck, RateBound
from costmodel.serving.engine import run_engine
from costmodel.serving.engine_io import EngineLimits, KvPolicy, paused_gc
from costmodel.serving.itl import stream_chunk_tokens
from costmodel.serving.replica import MAX_NUM_SEQS, Replica
from costmodel.serving.results import RequestTrace, SimulationResult
from costmodel.serving.summary import FinishedRun

MAX_REQUESTS = 2_000_000
EVENTS_PER_REQUEST_LIMIT = 100  # loop iterations allowed per request before the run is declared runaway


# 1e-6 requests/s is one request in 11.6 days: slower rates make arrival times overflow to inf for any
# useful request count, and no SLO question is asked at them.
MIN_RATE_PER_SECOND = 1e-6


def slo_limits(slo: Slo | Sequence[SloLimit] | None) -> tuple[SloLimit, ...]:
    """A scenario Slo or a list of limits, as a tuple of limits."""
    if slo is None:
        return ()
    return slo.limits() if isinstance(slo, Slo) else tuple(slo)


def unit_gaps(*, requests: int, burstiness: float, seed: int) -> np.ndarray:
    """Inter-arrival gaps for a rate of 1 request/s: gamma(shape=b, scale=1/b), mean 1."""
    if not burstiness > 0:
        raise CostmodelError(f"--burstiness must be > 0 (1 = Poisson, < 1 burstier); got {burstiness}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    return rng.gamma(shape=burstiness, scale=1.0 / burstiness, size=requests)


def draw_lengths(
    *, prompt_tokens: TokenDistribution, output_tokens: TokenDistribution, requests: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(prompt tokens, output tokens) per request from their own seeded stream."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2]))
    prompts = np.asarray(prompt_tokens.sample(rng, requests), dtype=np.int64)
    outputs = np.asarray(output_tokens.sample(rng, requests), dtype=np.int64)
    return prompts, outputs


def arrival_times(
    *, requests: int, rate_per_second: float | None, burstiness: float, seed: int,
    replay_seconds: Sequence[float] | None = None,
) -> np.ndarray:
    """Sorted arrival times (s): the first request at 0, or the replayed list."""
    if replay_seconds is not None:
        times = np.sort(np.asarray(replay_seconds, dtype=np.float64))
        if times.size == 0 or not np.all(np.isfinite(times)) or times[0] < 0:
            raise CostmodelError("replayed arrival times must be a non-empty list of finite seconds >= 0")
        return times
    if rate_per_second is None or not (math.isfinite(rate_per_second) and rate_per_second >= MIN_RATE_PER_SECOND):
        raise CostmodelError(f"--rate must be a positive number of requests per second, at least "
                             f"{MIN_RATE_PER_SECOND:g} (got {rate_per_second})")
    gaps = unit_gaps(requests=requests, burstiness=burstiness, seed=seed)
    return np.concatenate(([0.0], np.cumsum(gaps[:-1]))) / rate_per_second


def simulate(
    replica: Replica,
    *,
    prompt_tokens: TokenDistribution,
    output_tokens: TokenDistribution,
    rate_per_second: float | None,
    requests: int = 1000,
    seed: int = 0,
    burstiness: float = 1.0,
    replay_seconds: Sequence[float] | None = None,
    prefix_cached_fraction: float = 0.0,
    slo: Slo | Sequence[SloLimit] | None = None,
    kv_policy: KvPolicy = "preempt",
    max_num_seqs: int = MAX_NUM_SEQS,
    mixed_prefill_decode: bool | None = None,
    scheduler_steps: int | None = None,
    concurrency: int | None = None,
) -> SimulationResult:
    """Serve `requests` requests arriving at `rate_per_second` (or at `replay_seconds`) on one replica
    (`mixed_prefill_decode`, `scheduler_steps`: see `simulate_requests`; default the replica's engine profile).

    `concurrency` N instead of a rate: a closed loop of N clients, each sending its next request when its last
    one finishes (vLLM bench `--max-concurrency N` with every request ready); see `simulate_requests`.
    """
    if replay_seconds is not None:
        requests = len(replay_seconds)
    if not 1 <= requests <= MAX_REQUESTS:
        raise CostmodelError(f"--requests must be between 1 and {MAX_REQUESTS:,} (got {requests})")
    if concurrency is not None:
        arrivals = np.zeros(requests)
    else:
        arrivals = arrival_times(
            requests=requests, rate_per_second=rate_per_second, burstiness=burstiness, seed=seed,
            replay_seconds=replay_seconds,
        )
    prompts, outputs = draw_lengths(prompt_tokens=prompt_tokens, output_tokens=output_tokens, requests=requests, seed=seed)
    return simulate_requests(
        replica, arrival_seconds=arrivals, prompt_tokens=prompts, output_tokens=outputs,
        prefix_cached_fraction=prefix_cached_fraction, slo=slo, kv_policy=kv_policy, max_num_seqs=max_num_seqs,
        rate_per_second=None if replay_seconds is not None or concurrency is not None else rate_per_second,
        mixed_prefill_decode=mixed_prefill_decode, scheduler_steps=scheduler_steps, concurrency=concurrency,
    )


def simulate_requests(
    replica: Replica,
    *,
    arrival_seconds: np.ndarray,
    prompt_tokens: np.ndarray,
    output_tokens: np.ndarray,
    prefix_cached_fraction: float = 0.0,
    slo: Slo | Sequence[SloLimit] | None = None,
    kv_policy: KvPolicy = "preempt",
    max_num_seqs: int = MAX_NUM_SEQS,
    rate_per_second: float | None = None,
    scheduler_steps: int | None = None,
    mixed_prefill_decode: bool | None = None,
    concurrency: int | None = None,
) -> SimulationResult:
    """Run given requests (arrival-sorted arrays) through the engine and summarize (see `run_requests`)."""
    return run_requests(
        replica, arrival_seconds=arrival_seconds, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
        prefix_cached_fraction=prefix_cached_fraction, slo=slo, kv_policy=kv_policy, max_num_seqs=max_num_seqs,
        rate_per_second=rate_per_second, scheduler_steps=scheduler_steps, mixed_prefill_decode=mixed_prefill_decode,
        concurrency=concurrency,
    ).summary()


def run_requests(
    replica: Replica,
    *,
    arrival_seconds: np.ndarray,
    prompt_tokens: np.ndarray,
    output_tokens: np.ndarray,
    prefix_cached_fraction: float = 0.0,
    slo: Slo | Sequence[SloLimit] | None = None,
    kv_policy: KvPolicy = "preempt",
    max_num_seqs: int = MAX_NUM_SEQS,
    rate_per_second: float | None = None,
    scheduler_steps: int | None = None,
    mixed_prefill_decode: bool | None = None,
    concurrency: int | None = None,
    stop_on_miss: bool = False,
    on_rate_bound: Callable[[float], None] | None = None,
) -> FinishedRun:
    """Run given requests (arrival-sorted arrays) through the engine, unsummarized (`FinishedRun.summary`).

    `scheduler_steps` > 1 models multi-step scheduling (vLLM v0.6 `--num-scheduler-steps`): the scheduler
    runs once per that many decode steps (`serving.engine_io.EngineLimits`; default: the replica's).
    `mixed_prefill_decode` (default: the replica's engine profile) False runs prefill in steps of its own
    while decoders wait. `concurrency` N: a closed loop (`closed_loop.py`): the requests (all arriving at 0)
    run at most N at once (the engine's own cap `max_num_seqs` still holds), and each request's send time,
    from which TTFT and E2E count, is the finish of the request N places before it in finish order.
    `stop_on_miss` (a caller that reads only the verdict of a run that misses the SLO; open loop only): raise
    `serving.early_stop.SloMissed` as soon as the verdict is certain to be a miss. `on_rate_bound` (a caller
    that reads only the completed requests/s): called with upper bounds on it as the run goes, and may raise.
    """
    if scheduler_steps is None:
        scheduler_steps = replica.scheduler_steps
    if concurrency is not None:
        if stop_on_miss or on_rate_bound is not None:
            raise ValueError("stop_on_miss and on_rate_bound bound the run from arrival times: open loop only")
        check_concurrency(concurrency)
        max_num_seqs = min(max_num_seqs, concurrency)
    if not replica.fits:
        raise CostmodelError(replica.memory.message)
    if np.any(prompt_tokens < 1) or np.any(output_tokens < 1):
        raise CostmodelError("every request needs >= 1 prompt token and >= 1 output token (--prompt-tokens, --output-tokens)")
    if not 0.0 <= prefix_cached_fraction <= 1.0:
        raise CostmodelError(f"--prefix-cached-fraction must be in [0, 1] (got {prefix_cached_fraction})")
    if not 1 <= max_num_seqs <= replica.max_batched_tokens:
        raise CostmodelError(
            f"--max-num-seqs must be between 1 and the token budget {replica.max_batched_tokens} (got {max_num_seqs})"
        )
    if kv_policy not in ("preempt", "reserve"):
        raise CostmodelError(f"kv_policy must be 'preempt' or 'reserve' (got {kv_policy!r})")
    if isinstance(scheduler_steps, bool) or not isinstance(scheduler_steps, int) or not 1 <= scheduler_steps <= 1024:
        raise CostmodelError(f"scheduler_steps must be an integer in 1..1024 (got {scheduler_steps!r})")
    # At least the last prompt token is computed, as engines do to get the first token's logits.
    cached = np.minimum(np.floor(prefix_cached_fraction * prompt_tokens).astype(np.int64), prompt_tokens - 1)
    pool_bytes = replica.kv_bytes_per_token_per_gpu * float(cached.max(initial=0))
    capacity = replica.kv_budget_bytes_per_gpu - pool_bytes
    own_tokens = prompt_tokens - cached + output_tokens
    need = replica.kv_bytes_per_sequence_per_gpu + replica.kv_bytes_per_token_per_gpu * own_tokens
    rejected = need > capacity
    if replica.context_limit_tokens:
        rejected |= prompt_tokens + output_tokens > replica.context_limit_tokens
    if rejected.all():
        worst = int(np.argmax(need))
        raise NoRequestFitsError(
            f"no request fits: a {int(prompt_tokens[worst])} + {int(output_tokens[worst])}-token request needs "
            f"{need[worst] / 1e9:.2f} GB of KV per GPU but {max(capacity, 0.0) / 1e9:.2f} GB is left after weights"
            f" (context limit {replica.context_limit_tokens}); shorten the requests, use fewer/smaller weights or add GPUs"
        )
    keep = ~rejected
    limits = EngineLimits(
        max_batched_tokens=replica.max_batched_tokens,
        max_num_seqs=max_num_seqs,
        kv_capacity_bytes=capacity,
        kv_bytes_per_token=replica.kv_bytes_per_token_per_gpu,
        kv_bytes_per_sequence=replica.kv_bytes_per_sequence_per_gpu,
        kv_policy=kv_policy,
        max_events=max(1_000_000, EVENTS_PER_REQUEST_LIMIT * int(keep.sum())),
        scheduler_steps=scheduler_steps,
        mixed_prefill_decode=replica.mixed_prefill_decode if mixed_prefill_decode is None else mixed_prefill_decode,
        miss_check=MissCheck(slo_limits(slo), arrival_seconds=arrival_seconds[keep], output_tokens=output_tokens[keep],
                             rejected_output_tokens=output_tokens[rejected]) if stop_on_miss else (
            None if on_rate_bound is None else RateBound(on_rate_bound, completed=int(keep.sum()),
                                                         start_seconds=float(np.min(arrival_seconds)))),
    )
    # Speculative decoding: a verify step emits E tokens on average, so the engine runs each request's emissions
    # (serving/speculative.py); the trace keeps the real output tokens for TPOT, throughput and goodput.
    engine_outputs = output_tokens if replica.speculation is None else replica.speculation.emissions(output_tokens)
    # The engine profile's per-request CPU cost (tokenize, HTTP, schedule) runs before the scheduler sees it.
    with paused_gc():
        engine = run_engine(
            replica.timer, arrival_seconds=arrival_seconds[keep] + replica.request_overhead_seconds,
            prompt_tokens=prompt_tokens[keep], cached_tokens=cached[keep], output_tokens=engine_outputs[keep], limits=limits,
        )
    n = len(arrival_seconds)
    full = {name: np.full(n, np.nan) for name in ("admitted", "first", "finish")}
    full["admitted"][keep] = engine.admitted_seconds
    full["first"][keep] = engine.first_token_seconds
    full["finish"][keep] = engine.finish_seconds
    sent = (np.asarray(arrival_seconds, dtype=np.float64) if concurrency is None
            else closed_loop_send_seconds(full["finish"], concurrency=concurrency))
    trace = RequestTrace(
        arrival_seconds=sent, admitted_seconds=full["admitted"],
        first_token_seconds=full["first"], finish_seconds=full["finish"], prompt_tokens=prompt_tokens,
        cached_tokens=cached, output_tokens=output_tokens, rejected=rejected,
    )
    return FinishedRun(replica=replica, trace=trace, engine=engine, slo=slo_limits(slo), kv_policy=kv_policy,
                       rate_per_second=rate_per_second, concurrency=concurrency,
                       stream_chunk_tokens=stream_chunk_tokens(scheduler_steps=scheduler_steps,
                                                               streaming_tokens_per_chunk=replica.streaming_tokens_per_chunk))

