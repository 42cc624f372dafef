"""Which layer owns the latency: TTFT and TPOT at a percentile split into named parts (issue 17 item 5).

TTFT, per request: the engine profile's per-request overhead (CPU before the scheduler), queueing (until
the scheduler first gives the request a step), its own prefill compute (its uncached prompt in chunks of
the token budget, each chunk timed alone by the step timer) and the rest of admission-to-first-token:
waiting in steps shared with other prefills and decodes (chunking). The parts of the requests nearest the
percentile in rank are averaged and scaled so they sum to the percentile's value.

TPOT: one decode step at the run's operating point (the mean running batch, each sequence at the mean
prompt + half the mean output of context), split by the roofline's op breakdown: each op's seconds go
to compute when compute-bound, else to weight reads and KV/activation reads by their byte shares; plus
the visible all-reduce time and the step overhead. Whatever the simulated percentile adds above that
step is `prefill_in_steps` (decode tokens sharing steps with prefill chunks); below it, the parts scale down.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costmodel.dtypes import BYTES_PER_ELEMENT, streamed_weight_bytes_per_param
from costmodel.expert_parallel import dep_step
from costmodel.ops import StepWork, op_flops_and_bytes, uniform_work
from costmodel.roofline import OpCost, step_from_work
from costmodel.serving.replica import Replica
from costmodel.serving.results import RequestTrace, SimulationResult

BAND_REQUESTS = 100  # requests nearest the percentile whose parts are averaged (at most)
TTFT_PARTS = ("request_overhead", "queueing", "prefill_wait", "prefill_compute")
TPOT_PARTS = ("weight_reads", "kv_reads", "compute", "communication", "step_overhead", "prefill_in_steps")


@dataclass(frozen=True, kw_only=True)
class LatencyBreakdown:
    """Named parts (seconds) of one latency percentile; they sum to `total_seconds`."""

    metric: str  # "ttft" or "tpot"
    percentile: float
    total_seconds: float
    parts_seconds: tuple[tuple[str, float], ...]

    def as_dict(self) -> dict[str, float]:
        """Part name -> seconds (the `*_breakdown_seconds` JSON objects)."""
        return dict(self.parts_seconds)

    @property
    def owner(self) -> tuple[str, float]:
        """The largest part and its share of the total."""
        name, seconds = max(self.parts_seconds, key=lambda part: part[1])
        return name, (seconds / self.total_seconds if self.total_seconds > 0 else 0.0)


def _scaled(metric: str, percentile: float, total: float, parts: dict[str, float]) -> LatencyBreakdown:
    raw = sum(parts.values())
    scale = total / raw if raw > 0 else 0.0
    return LatencyBreakdown(metric=metric, percentile=percentile, total_seconds=total,
                            parts_seconds=tuple((name, parts[name] * scale) for name in parts))


def own_prefill_seconds(replica: Replica, *, uncached_tokens: int, cached_tokens: int) -> float:
    """Seconds of one prompt's prefill alone: its uncached tokens in chunks of the token budget."""
    timer, budget = replica.timer, replica.max_batched_tokens
    seconds, done = 0.0, 0
    while done < uncached_tokens:
        size = min(budget, uncached_tokens - done)
        last = done + size == uncached_tokens
        fields = timer.chunk_fields(new_tokens=size, context_tokens=cached_tokens + done, emits=last)
        seconds += timer.seconds(size, fields)
        done += size
    return seconds


def _band(values: np.ndarray, percentile: float) -> np.ndarray:
    """Indices of the requests nearest the percentile in rank."""
    order = np.argsort(values, kind="stable")
    centre = int(round(percentile / 100.0 * (values.size - 1)))
    half = max(1, min(BAND_REQUESTS, values.size // 20)) // 2
    return order[max(0, centre - half): centre + half + 1]


def ttft_breakdown(replica: Replica, trace: RequestTrace, *, percentile: float) -> LatencyBreakdown | None:
    """TTFT at `percentile` split into TTFT_PARTS (None when no request completed)."""
    done = trace.completed
    ttft = trace.values("ttft")
    if ttft.size == 0:
        return None
    overhead = replica.request_overhead_seconds
    arrival = trace.arrival_seconds[done]
    admitted = trace.admitted_seconds[done]
    first = trace.first_token_seconds[done]
    prompts, cached = trace.prompt_tokens[done], trace.cached_tokens[done]
    parts = dict.fromkeys(TTFT_PARTS, 0.0)
    alone: dict[tuple[int, int], float] = {}
    for i in _band(ttft, percentile):
        key = (int(prompts[i] - cached[i]), int(cached[i]))
        if key not in alone:
            alone[key] = own_prefill_seconds(replica, uncached_tokens=key[0], cached_tokens=key[1])
        compute = alone[key]
        in_steps = float(first[i] - admitted[i])
        parts["request_overhead"] += overhead
        parts["queueing"] += max(float(admitted[i] - arrival[i]) - overhead, 0.0)
        parts["prefill_compute"] += min(compute, in_steps)
        parts["prefill_wait"] += max(in_steps - compute, 0.0)
    return _scaled("ttft", percentile, float(np.percentile(ttft, percentile)), parts)


def _weight_bytes(replica: Replica) -> tuple[float, ...]:
    zero = StepWork(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    _, weights = op_flops_and_bytes(
        replica.shape, zero, weight_bytes_per_param=streamed_weight_bytes_per_param(replica.weight_dtype),
        kv_bytes_per_element=BYTES_PER_ELEMENT[replica.kv_dtype], gpus=float(replica.gpus),
    )
    return tuple(float(w) for w in weights)


@dataclass(frozen=True, kw_only=True)
class _DecodeStep:
    ops: tuple[OpCost, ...]
    comm_seconds: float
    overhead_seconds: float
    step_seconds: float


def _decode_step(replica: Replica, *, batch: float, context_tokens: float) -> _DecodeStep:
    """One decode step at the operating point: the roofline's (tensor parallel) or a DEP layout's."""
    if replica.parallelism == "dep":  # DP attention + EP: per-rank attention, all-to-all as communication
        dep = dep_step(replica.shape, replica.hardware, ep_gpus=replica.gpus, batch_per_gpu=batch / replica.gpus,
                       new_tokens=1, context_tokens=int(context_tokens), logit_rows_per_sequence=1.0,
                       weight_dtype=replica.weight_dtype, kv_dtype=replica.kv_dtype, efficiency=replica.efficiency)
        return _DecodeStep(ops=dep.ops, comm_seconds=dep.all_to_all_seconds, overhead_seconds=dep.overhead_seconds,
                           step_seconds=dep.step_seconds)
    work = uniform_work(replica.shape, batch=batch, new_tokens=1.0, context_tokens=context_tokens)
    result = step_from_work(replica.shape, replica.hardware, work, weight_dtype=replica.weight_dtype,
                            kv_dtype=replica.kv_dtype, gpus=replica.gpus, efficiency=replica.efficiency)
    return _DecodeStep(ops=result.ops, comm_seconds=result.comm_seconds, overhead_seconds=result.overhead_seconds,
                       step_seconds=result.step_seconds)


def tpot_breakdown(
    replica: Replica, *, tpot_seconds: float, percentile: float, mean_batch: float, context_tokens: float
) -> LatencyBreakdown | None:
    """TPOT at `percentile` split into TPOT_PARTS at the operating point (None without a finite TPOT)."""
    if not np.isfinite(tpot_seconds) or mean_batch <= 0:
        return None
    batch = max(mean_batch, 1.0)
    result = _decode_step(replica, batch=batch, context_tokens=context_tokens)
    parts = dict.fromkeys(TPOT_PARTS, 0.0)
    weights = dict(zip(("qkv_proj", "attention", "o_proj", "mlp", "experts", "lm_head"), _weight_bytes(replica),
                       strict=True))
    for op in result.ops:
        if op.bound == "compute":
            parts["compute"] += op.seconds
            continue
        share = min(weights.get(op.name, 0.0) / op.bytes, 1.0) if op.bytes > 0 else 0.0
        parts["weight_reads"] += op.seconds * share
        parts["kv_reads"] += op.seconds * (1.0 - share)
    parts["communication"] = result.comm_seconds
    # The engine profile's per-sequence CPU cost (s per sequence per step) at this batch is step overhead too.
    per_sequence = replica.timer.per_sequence_seconds * batch
    parts["step_overhead"] = result.overhead_seconds + per_sequence
    parts["prefill_in_steps"] = max(tpot_seconds - result.step_seconds - per_sequence, 0.0)
    return _scaled("tpot", percentile, tpot_seconds, parts)



def result_breakdown(result: SimulationResult, *, metric: str, percentile: float) -> LatencyBreakdown | None:
    """`metric` ("ttft" or "tpot") at `percentile` of a finished run (None without its replica or data)."""
    replica, trace = result.replica, result.trace
    if replica is None:
        return None
    if metric == "ttft":
        return ttft_breakdown(replica, trace, percentile=percentile)
    done = trace.completed
    if not done.any():
        return None
    context = float(np.mean(trace.prompt_tokens[done]) + np.mean(trace.output_tokens[done]) / 2.0)
    return tpot_breakdown(replica, tpot_seconds=result.percentile("tpot", percentile), percentile=percentile,
                          mean_batch=result.mean_batch, context_tokens=context)

# What moves each part (and what does not): the lever named beside the owner of a latency.
LEVERS: dict[str, str] = {
    "request_overhead": "a leaner API server or tokenizer moves it; a faster GPU won't",
    "queueing": "add a replica or cap the batch; faster kernels won't help",
    "prefill_wait": "a smaller token budget per step or separate prefill replicas moves it; more replicas help little",
    "prefill_compute": "more compute (a faster GPU, more tensor parallelism, fp8) or prefix caching moves it",
    "weight_reads": "memory bandwidth: lower-precision weights or more tensor parallelism moves it",
    "kv_reads": "smaller KV (fp8 KV, shorter contexts) or a smaller batch moves it",
    "compute": "more compute (a faster GPU, fp8) moves it",
    "communication": "faster links or less tensor parallelism moves it",
    "step_overhead": "CUDA graphs or a leaner engine move it; a faster GPU won't",
    "prefill_in_steps": "a smaller token budget per step or separate prefill replicas moves it",
}


def owner_sentence(breakdown: LatencyBreakdown) -> str:
    """E.g. "p90 TTFT is 70% queueing: add a replica or cap the batch; faster kernels won't help"."""
    name, share = breakdown.owner
    return (f"p{breakdown.percentile:g} {breakdown.metric.upper()} is {share:.0%} {name.replace('_', ' ')}: "
            f"{LEVERS[name]}")


def latency_owner(ttft: LatencyBreakdown | None, tpot: LatencyBreakdown | None) -> str | None:
    """The owners of the TTFT and TPOT percentiles with their levers, one sentence each (None without any)."""
    sentences = [owner_sentence(b) for b in (ttft, tpot) if b is not None and b.total_seconds > 0]
    return ". ".join(sentences) or None
