"""Inter-token latency (ITL): the gaps between a sequence's streamed tokens, pooled over every token.

With one token per streamed chunk (what vLLM, SGLang and TensorRT-LLM stream by default) a decoding
sequence's gap is the length of each engine step it takes part in, a mixed step with prefill chunks
included: that is where a stall behind other prompts shows. Percentiles pool every gap of every request,
as vLLM's benchmark_serving reports ITL (its `itls` list over all requests). The engine records step
groups (`EngineTrace.itl_groups`): `steps` steps, step j lasting a + b * j, each one gap for each of
`sequences` decoding sequences. Not counted: the gap across a preemption (the sequence's recompute).

Streaming in chunks of c tokens (the engine's stream interval, or multi-step scheduling's window: "tokens
are streamed only after a batch of generation steps is complete, ITL will be inflated by the
num-scheduler-steps", LambdaLabsML/vllm-benchmark benchmark_v0.md at commit 0e8fc5d0, on vLLM v0.6.0):
after the first token, which engines send at once (vLLM's output
processor sends "the first token" without waiting for the interval: vllm/v1/engine/output_processor.py),
each chunk's gap is the sum of c consecutive step gaps. The pooled chunk gaps are taken as the rolling sums
of c consecutive steps of the run, each weighted by that step's decoding sequences: every step ends a
chunk for about 1/c of them, a constant factor the percentiles do not see. The mean chunk gap is c times
the mean token gap. TTFT and TPOT do not change (first token at once; TPOT spans the whole output).
"""

from __future__ import annotations

import numpy as np

from costmodel.serving.confidence import BATCHES, Interval, batch_means_interval, sorted_weighted_percentiles


def step_gaps(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, decoding sequences) per engine step with decoding sequences, in time order."""
    if groups.size == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    a, b = groups[:, 0], groups[:, 1]
    steps = groups[:, 2].astype(np.int64)
    sequences = groups[:, 3].astype(np.int64)
    starts = np.cumsum(steps) - steps
    index = np.arange(int(steps.sum())) - np.repeat(starts, steps)  # j within its group
    return np.repeat(a, steps) + np.repeat(b, steps) * index, np.repeat(sequences, steps)


def stream_chunk_tokens(*, scheduler_steps: int, streaming_tokens_per_chunk: int) -> int:
    """Tokens per streamed chunk: outputs leave once per multi-step window (K steps), and a stream interval
    k waits for k tokens, so a chunk holds the first multiple of K that reaches k."""
    windows = -(-streaming_tokens_per_chunk // scheduler_steps)  # ceil(k / K)
    return scheduler_steps * windows


def chunk_gaps(seconds: np.ndarray, weights: np.ndarray, *, chunk_tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-step gaps as chunk gaps: rolling sums of `chunk_tokens` consecutive steps (module docstring)."""
    if chunk_tokens <= 1 or seconds.size == 0:
        return seconds, weights
    if seconds.size < chunk_tokens:  # the run is shorter than one chunk: one gap over all of it
        return np.array([float(seconds.sum())]), weights[-1:]
    cumulative = np.concatenate(([0.0], np.cumsum(seconds)))
    return cumulative[chunk_tokens:] - cumulative[:-chunk_tokens], weights[chunk_tokens - 1:]


def itl_percentiles(groups: np.ndarray, percentiles: tuple[float, ...], *,
                    chunk_tokens: int = 1) -> tuple[tuple[float, Interval], ...]:
    """Each percentile of the pooled gaps with its batch-means interval (batches of contiguous steps).

    One sort serves the whole run and every batch: a batch's gaps, picked out of the sorted order, stay sorted.
    """
    seconds, weights = chunk_gaps(*step_gaps(groups), chunk_tokens=chunk_tokens)
    if seconds.size == 0:
        return tuple((float("nan"), Interval.unknown()) for _ in percentiles)
    order = np.argsort(seconds)
    sorted_seconds, sorted_weights = seconds[order], weights[order]
    estimates = sorted_weighted_percentiles(sorted_seconds, sorted_weights, percentiles)
    if seconds.size < BATCHES:
        return tuple((float(e), Interval.unknown()) for e in estimates)
    batch_of = (np.arange(seconds.size) * BATCHES // seconds.size)[order]  # contiguous batches in time
    batches = np.array([
        sorted_weighted_percentiles(sorted_seconds[batch_of == k], sorted_weights[batch_of == k], percentiles)
        for k in range(BATCHES)
    ])
    return tuple(
        (float(e), batch_means_interval(float(e), batches[:, k], lower_bound=0.0)) for k, e in enumerate(estimates)
    )


def itl_mean_seconds(groups: np.ndarray, *, chunk_tokens: int = 1) -> float:
    """Mean gap over every chunk: `chunk_tokens` x total sequence-steps time / token gaps (the arithmetic
    series per group)."""
    if groups.size == 0:
        return float("nan")
    a, b, steps, sequences = groups[:, 0], groups[:, 1], groups[:, 2], groups[:, 3]
    seconds = steps * (a + 0.5 * b * (steps - 1))
    per_token = float(np.dot(seconds, sequences) / np.dot(steps, sequences))
    return per_token if chunk_tokens == 1 else chunk_tokens * per_token
