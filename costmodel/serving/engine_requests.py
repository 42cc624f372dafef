"""Per-request state of the engine loop (`costmodel.serving.engine.run_engine`): lists indexed by request id.

Python lists, not arrays: the loop reads and writes them one scalar at a time (`tolist` converts in C). The
request id `rid` is the request's place in arrival order; the lists of heap keys hold one more entry, the
sentinel `never` at index n (see `run_engine`).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from costmodel.serving.steptime import StepTimer

IDLE, PREFILL, DECODE = 0, 1, 2  # request states: waiting or finished, prefilling, decoding


@dataclass(frozen=True, slots=True)
class RequestState:
    """The lists the loop mutates in place (the attributes are never rebound). Units in `run_engine`."""

    arrival: list[float]  # arrival seconds, + an inf sentinel at index n ("no more arrivals")
    cached: list[int]  # prompt tokens served by the prefix cache
    to_prefill: list[int]  # tokens the next prefill computes (after a preemption: prompt + emitted, recomputed)
    to_emit: list[int]  # output tokens still to emit
    # Costs of the whole prompt as one chunk (`StepTimer.chunk_cache` rows, the usual chunk), so the loop
    # skips building a cache key; None once a preemption changes what the request must prefill.
    whole_prompt_work: list[tuple[float, ...] | None]
    prefilled: list[int]
    join_step: list[int]
    join_context: list[int]
    state: list[int]  # IDLE, PREFILL or DECODE
    kv_charge: list[float]  # KV bytes charged at admission
    below_window: list[bool]
    admitted_seconds: list[float]
    first_token_seconds: list[float]
    finish_seconds: list[float]
    finish_key: list[int]  # the live finish-heap entry per request (-1: none); index n holds `never`
    cross_key: list[int]  # the live window-crossing entry per request (-1: none); index n holds `never`


def request_state(
    timer: StepTimer, *, arrival_seconds: np.ndarray, prompt_tokens: np.ndarray, cached_tokens: np.ndarray,
    output_tokens: np.ndarray, never: int,
) -> RequestState:
    """Fresh state for requests sorted by arrival, with the costs of every whole-prompt chunk cached.

    The chunk costs come from one vectorized call over the distinct (prefill, cached) pairs, deduplicated
    through one int64 code per pair: a 1-D unique is far cheaper than the unique over pairs in
    `warm_chunk_cache`, and 100,000 requests have only a few thousand distinct pairs.
    """
    n = len(arrival_seconds)
    cached = np.asarray(cached_tokens).astype(np.int64)
    prefill = np.asarray(prompt_tokens).astype(np.int64) - cached
    whole_prompt_work: list[tuple[float, ...] | None] = []
    if n:
        base = int(cached.max()) + 1  # code = prefill * base + cached: exact in int64 for token counts
        codes, inverse = np.unique(prefill * base + cached, return_inverse=True)
        new_tokens, context_tokens = np.divmod(codes, base)
        timer.warm_chunk_cache(new_tokens=new_tokens, context_tokens=context_tokens, emits=True)
        rows = [timer.chunk_cache[(size, context, True)]
                for size, context in zip(new_tokens.tolist(), context_tokens.tolist(), strict=True)]
        whole_prompt_work = list(map(rows.__getitem__, inverse.reshape(-1).tolist()))
    return RequestState(
        arrival=np.asarray(arrival_seconds, dtype=np.float64).tolist() + [math.inf],
        cached=cached.tolist(), to_prefill=prefill.tolist(),
        to_emit=np.asarray(output_tokens).astype(np.int64).tolist(), whole_prompt_work=whole_prompt_work,
        prefilled=[0] * n, join_step=[0] * n, join_context=[0] * n, state=[IDLE] * n, kv_charge=[0.0] * n,
        below_window=[False] * n, admitted_seconds=[math.nan] * n, first_token_seconds=[math.nan] * n,
        finish_seconds=[math.nan] * n, finish_key=[-1] * n + [never], cross_key=[-1] * n + [never],
    )


def cross_window(requests: RequestState, *, cross_heap: list[int], step: int, shift: int, mask: int) -> tuple[int, int]:
    """Pop the contexts that reach the sliding window by `step`: (how many, their summed offsets).

    Heap entries are `step << shift | rid` (see `run_engine`); one is live while `cross_key[rid]` holds it.
    Each live one leaves the below-window group: the loop takes the count and the offsets (join_context -
    join_step, tokens) off its below-window totals.
    """
    crossed = offsets = 0
    cross_key = requests.cross_key
    while cross_heap[0] >> shift <= step:
        entry = heapq.heappop(cross_heap)
        rid = entry & mask
        if cross_key[rid] == entry:
            cross_key[rid] = -1
            requests.below_window[rid] = False
            crossed += 1
            offsets += requests.join_context[rid] - requests.join_step[rid]
    return crossed, offsets


def continue_prefills(
    requests: RequestState, *, prefilling: list[int], chunks: list[tuple[int, int]], budget: int,
) -> int:
    """Give the running prefills, first admitted first, their next chunks from `budget`; the budget left."""
    to_prefill, prefilled = requests.to_prefill, requests.prefilled
    for rid in prefilling:
        if budget <= 0:
            break
        size = to_prefill[rid] - prefilled[rid]
        size = size if size < budget else budget
        chunks.append((rid, size))
        budget -= size
    return budget


def chunks_work(requests: RequestState, *, chunks: list[tuple[int, int]], timer: StepTimer) -> tuple[float, ...]:
    """FLOPs and bytes per dynamic op that a step's prefill chunks add, summed in chunk order.

    A chunk's costs by (tokens, context before it, ends the prompt: its logits give a token), from the
    timer's cache; a whole fresh prompt's come with the request.
    """
    to_prefill, prefilled, cached = requests.to_prefill, requests.prefilled, requests.cached
    work: tuple[float, ...] = ()
    for rid, size in chunks:
        one = requests.whole_prompt_work[rid] if size == to_prefill[rid] else None
        if one is None:
            key = (size, cached[rid] + prefilled[rid], prefilled[rid] + size == to_prefill[rid])
            one = timer.chunk_cache.get(key) or timer.chunk_cost(key)
        work = tuple(x + y for x, y in zip(work, one, strict=True)) if work else one
    return work


def end_prefills(
    requests: RequestState, *, chunks: list[tuple[int, int]], now_seconds: float, step: int, shift: int,
    window_tokens: int, sliding: bool, reserve: bool, kv_base_bytes: float, kv_bytes_per_sequence: float,
    kv_bytes_per_token: float, finish_heap: list[int], cross_heap: list[int], n_decoding: int, offset_sum: int,
    n_below: int, offset_sum_below: int,
) -> tuple[int, int, float, int, int, int, int]:
    """Credit this step's prefill chunks; the prompts they complete emit a token and start decoding (or finish).

    Returns (prefills ended, requests finished, then the loop's KV in use, decoders, their offset sum,
    below-window decoders and their offset sum, updated in the loop's order)."""
    to_prefill, prefilled, to_emit, cached = requests.to_prefill, requests.prefilled, requests.to_emit, requests.cached
    first_token_seconds, kv_charge, state = requests.first_token_seconds, requests.kv_charge, requests.state
    join_step, join_context, below_window = requests.join_step, requests.join_context, requests.below_window
    n_ended = n_finished = 0
    for rid, size in chunks:
        prefill = to_prefill[rid]
        prefilled[rid] += size
        if prefilled[rid] < prefill:
            continue
        n_ended += 1
        to_emit[rid] -= 1  # the prefill's logits give a token
        if first_token_seconds[rid] != first_token_seconds[rid]:  # NaN test: not set by an earlier run
            first_token_seconds[rid] = now_seconds
        if to_emit[rid] == 0:  # done at its first token: it leaves the batch with its admission charge
            kv_base_bytes -= kv_charge[rid]
            state[rid] = IDLE
            n_finished += 1
            requests.finish_seconds[rid] = now_seconds
            continue
        state[rid] = DECODE  # start decoding at this step count
        join_step[rid] = step
        context = join_context[rid] = cached[rid] + prefill
        if not reserve:  # from a fixed prefill charge to KV that grows with the step count
            kv_base_bytes += kv_bytes_per_sequence + kv_bytes_per_token * (prefill - step) - kv_charge[rid]
        n_decoding += 1
        offset_sum += context - step
        if context < window_tokens:
            below_window[rid] = True
            n_below += 1
            offset_sum_below += context - step
            if sliding:
                requests.cross_key[rid] = entry = (step + window_tokens - context) << shift | rid
                heapq.heappush(cross_heap, entry)
        else:
            below_window[rid] = False
        requests.finish_key[rid] = entry = (step + to_emit[rid]) << shift | rid
        heapq.heappush(finish_heap, entry)
    return n_ended, n_finished, kv_base_bytes, n_decoding, offset_sum, n_below, offset_sum_below
