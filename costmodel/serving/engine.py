"""The discrete-event loop of one replica under continuous batching (vLLM / SGLang style scheduling).

Every engine step: each running decode sequence adds one token; sequences still in prefill, then waiting
requests (FCFS, preempted ones first), get prefill chunks from what is left of the token budget while KV
memory and the sequence cap allow. The step lasts the roofline time of that mix (`StepTimer`) plus the
engine profile's CPU cost per sequence scheduled in it (`StepTimer.per_sequence_seconds`). Between
events (an admissible arrival, a finish, a sliding-window crossing, KV full) a decode-only batch keeps its
composition and its contexts grow a token per step, so the step time is linear in the step index (cut
where an op changes regime): the loop advances the segment at once, at a cost per event, not per token.

KV (bytes per GPU): a request is charged `kv_bytes_per_sequence` + its uncached tokens x
`kv_bytes_per_token`. "preempt" (vLLM): admission needs room for the prompt; when the next step's decode
tokens do not fit, the newest request is preempted and recomputed later (`engine_preempt.py`). "reserve"
(TensorRT-LLM's GUARANTEED_NO_EVICT): admission reserves prompt + output.

Read `reference` in tests/test_serving_reference.py first: a plain step-by-step simulator with the same
rules; that test checks this loop against it request by request (1e-9 relative). Around the loop:
`engine_requests.py` (per-request lists, prefill ends), `engine_steps.py` (op rows; a step's or a decode
segment's seconds, regime and arrival cuts), `engine_itl.py` (ITL groups), `engine_io.py` (limits, trace).
"""

from __future__ import annotations

import heapq
from collections import deque

import numpy as np

from costmodel.serving.early_stop import CHECK_EVERY_EVENTS
from costmodel.serving.engine_io import EngineLimits, EngineTrace, engine_trace, runaway_error
from costmodel.serving.engine_itl import append_stalled_segment
from costmodel.serving.engine_preempt import preempt_newest
from costmodel.serving.engine_requests import (
    IDLE,
    PREFILL,
    chunks_work,
    continue_prefills,
    cross_window,
    end_prefills,
    request_state,
)
from costmodel.serving.engine_steps import decode_segment, mix_op_table, mixed_step_seconds
from costmodel.serving.steptime import NO_WINDOW, StepTimer


# One event loop over local variables on purpose (a few hundred thousand iterations per simulation): the
# scheduling rules read top to bottom in one place. Step time (`engine_steps.py`), prefill ends and what runs
# per preemption, or rarer, are calls (moving the first two out: callgrind, 20,000 requests, -0.1% instructions).
def run_engine(  # noqa: C901 -- the event loop; see the comment above
    timer: StepTimer,
    *,
    arrival_seconds: np.ndarray,
    prompt_tokens: np.ndarray,
    cached_tokens: np.ndarray,
    output_tokens: np.ndarray,
    limits: EngineLimits,
) -> EngineTrace:
    """Simulate the requests (sorted by arrival) to completion; each must fit in KV alone.

    Every float expression keeps the operand order of the plain formulas (a product's two factors may
    swap: IEEE multiplication commutes), so results are bit-for-bit stable. Per-request lists: see
    `engine_requests.RequestState`. Other symbols (`step` counts engine steps; KV in bytes per GPU):

    now                     simulated time                                                     s
    n_arrived, n_taken      requests arrived by `now`; fresh arrivals admitted (the fresh waiting queue
                            is n_taken .. n_arrived - 1); `requeued`: preempted requests, served first
    running, prefilling     running requests in admission order (finished ones stay until a preemption
                            drops them: the newest live one is the victim); of them those in prefill
    n_running, n_decoding   running requests; of them decoding (n_below + n_above)
    n_below, n_above        decoding sequences below / at or above the sliding window
    offset_sum(_below)      sum of join_context - join_step over decoding (below-window)       tokens
                            sequences: their contexts sum to offset_sum + n_decoding * step
    context_below_f, _above  summed contexts of the below / above-window decoders (below: a float) tokens
    kv_base_bytes           KV in use = kv_base_bytes + kv_step_bytes * step (preempt: each    bytes
                            decoder's KV grows a token per step, kv_step_bytes in all); = it (reserve)
    kv_growth_bytes         preempt: what the next step's decode tokens add on top of it       bytes
    chunks, budget          (rid, prefill tokens) computed this step; token budget left        tokens
    step_tokens             tokens computed this step (chunks + one per decoding sequence)     tokens
    chunk_work              FLOPs and bytes per dynamic op the chunks add (timer.chunk_cost)   FLOP, bytes
    a, b, steps             decode-only segment: step j lasts a + b * j, `steps` of them       s, s, steps
    seconds                 duration of this event's step or segment                           s
    finish_heap, cross_heap int entries (step << shift | rid): finishes, and contexts reaching the window;
                            an entry is live while finish_key / cross_key[rid] holds it (else stale)
    busy_seconds, sequence_seconds  time with work; integral of running sequences over time     s, s
    series_*, itl_groups    per event: now, waiting, running; ITL groups as four lists (`engine_itl.py`)
    """
    n = len(arrival_seconds)
    # Heap entries are ints (step count << shift | request): cheaper than tuples to build and compare, and
    # ordered like (step, request). `never` (request n, a step count no run reaches) keeps each heap
    # non-empty, so `heap[0]` needs no emptiness test.
    shift, mask = n.bit_length(), (1 << n.bit_length()) - 1
    never = (1 << 62) << shift | n
    requests = request_state(timer, arrival_seconds=arrival_seconds, prompt_tokens=prompt_tokens,
                             cached_tokens=cached_tokens, output_tokens=output_tokens, never=never)
    arrival, cached, to_prefill, to_emit = requests.arrival, requests.cached, requests.to_prefill, requests.to_emit
    whole_prompt_work, prefilled, state = requests.whole_prompt_work, requests.prefilled, requests.state
    join_step, join_context, below_window = requests.join_step, requests.join_context, requests.below_window
    kv_charge, admitted_seconds, finish_seconds = requests.kv_charge, requests.admitted_seconds, requests.finish_seconds
    finish_key, cross_key = requests.finish_key, requests.cross_key
    max_batched_tokens, max_num_seqs = limits.max_batched_tokens, limits.max_num_seqs
    kv_capacity_bytes, reserve = limits.kv_capacity_bytes, limits.kv_policy == "reserve"
    kv_bytes_per_token, kv_bytes_per_sequence = limits.kv_bytes_per_token, limits.kv_bytes_per_sequence
    max_events, scheduler_steps, mixed = limits.max_events, limits.scheduler_steps, limits.mixed_prefill_decode
    multi_step, window_tokens = scheduler_steps > 1, timer.window_tokens
    sliding = window_tokens < NO_WINDOW  # without a window no context ever crosses it: no crossing events
    static_seconds, seconds_per_flop, seconds_per_byte = timer.static_seconds, timer.seconds_per_flop, timer.seconds_per_byte
    mix_ops = mix_op_table(timer)
    static_by_batch, lines_by_batch = timer.decode_tables()  # per-sequence CPU cost included
    per_sequence_seconds, miss_check = timer.per_sequence_seconds, limits.miss_check
    next_check = CHECK_EVERY_EVENTS if miss_check is not None else 0  # the event of the next check (0: none)

    now, step, events, preemptions, busy_seconds, sequence_seconds = 0.0, 0, 0, 0, 0.0, 0.0
    window_left = 0  # multi-step: decode steps left before the scheduler runs again (0: it runs now)
    n_arrived = n_taken = n_done = 0
    requeued: deque[int] = deque()
    prefilling: list[int] = []
    running: list[int] = []
    n_decoding = n_below = n_running = offset_sum = offset_sum_below = 0
    kv_base_bytes = kv_growth_bytes = kv_step_bytes = 0.0
    finish_heap, cross_heap = [never], [never]
    series_seconds: list[float] = []
    series_waiting: list[int] = []
    series_running: list[int] = []
    itl_groups: tuple[list[float], list[float], list[int], list[int]] = ([], [], [], [])
    itl_a, itl_b, itl_steps, itl_sequences = itl_groups
    # Prefill-only steps (mixed_prefill_decode false) stall the decoders: each stall joins the gap before
    # their next token. Per prefill-only step since the last decode step: (seconds, decoders it stalled).
    stalls: list[tuple[float, int]] = []
    no_chunks: list[tuple[int, int]] = []  # never appended to: `chunks` is rebound before any append

    pop = heapq.heappop  # a local name: hot loop
    add_now, add_waiting, add_running = series_seconds.append, series_waiting.append, series_running.append
    add_a, add_b, add_steps, add_sequences = itl_a.append, itl_b.append, itl_steps.append, itl_sequences.append
    # `for` over the event numbers: the runaway bound costs no test per event (the `else` runs only when
    # max_events events have run); an event starts only while requests are left.
    for events in range(1, max_events + 1):
        if n_done == n:
            events -= 1
            break
        if events == next_check and miss_check is not None:  # raises early_stop.SloMissed once a miss is certain
            next_check += miss_check(now, requests)
        while arrival[n_arrived] <= now:  # stops at the inf sentinel
            n_arrived += 1
        n_waiting = n_arrived - n_taken + (len(requeued) if requeued else 0)
        add_now(now)
        add_waiting(n_waiting)
        add_running(n_running)
        if n_running == 0 and n_waiting == 0:
            now = arrival[n_arrived]  # idle until the next arrival
            continue

        if not reserve:  # preempt from the newest while the next step's decode tokens do not fit
            kv_step_bytes = kv_bytes_per_token * n_decoding
            kv_growth_bytes = kv_step_bytes * (step + 1)
            while kv_base_bytes + kv_growth_bytes > kv_capacity_bytes and n_running:
                out = preempt_newest(requests, step=step, running=running, prefilling=prefilling, requeued=requeued,
                                     reserve=reserve, kv_bytes_per_sequence=kv_bytes_per_sequence,
                                     kv_bytes_per_token=kv_bytes_per_token)
                preemptions, n_running, kv_base_bytes = preemptions + 1, n_running - 1, kv_base_bytes - out.kv_bytes
                n_decoding, offset_sum = n_decoding - out.decoding, offset_sum - out.offset
                n_below, offset_sum_below = n_below - out.below_window, offset_sum_below - out.below_offset
                kv_step_bytes = kv_bytes_per_token * n_decoding
                kv_growth_bytes = kv_step_bytes * (step + 1)

        # Prefill chunks from the budget left after one token per decoding sequence: running prefills
        # first, then admissions FCFS (preempted requests first) while KV and the sequence cap allow.
        chunks = no_chunks  # a list of its own only when prefill work is scheduled (most events have none)
        if window_left and n_decoding == 0:
            window_left = 0
        if (prefilling or n_waiting) and not window_left:
            chunks = []
            budget = max_batched_tokens - n_decoding if mixed else max_batched_tokens
            if prefilling:  # running prefills first (chunked prompts)
                budget = continue_prefills(requests, prefilling=prefilling, chunks=chunks, budget=budget)
            while (n_taken < n_arrived or requeued) and budget > 0 and n_running < max_num_seqs:
                rid = requeued[0] if requeued else n_taken
                prefill = to_prefill[rid]
                need = kv_bytes_per_sequence + kv_bytes_per_token * (prefill + (to_emit[rid] if reserve else 0))
                if kv_base_bytes + kv_growth_bytes + need > kv_capacity_bytes:
                    break  # FCFS: the head waits for memory
                if requeued:  # admitted before: its admission time stands
                    requeued.popleft()
                else:
                    n_taken += 1
                    admitted_seconds[rid] = now
                kv_base_bytes += need
                kv_charge[rid] = need
                state[rid] = PREFILL
                running.append(rid)
                prefilling.append(rid)
                n_running += 1
                size = prefill if prefill < budget else budget  # min() without the call
                chunks.append((rid, size))
                budget -= size

        n_above = n_decoding - n_below
        # As floats once (exact: integers far below 2**53), not converted again in each int-float product.
        below_f, context_below_f = float(n_below), float(offset_sum_below + n_below * step)
        context_above = offset_sum - offset_sum_below + n_above * step if n_above else 0
        if chunks:  # one mixed step: prefill chunks + one token per decoding sequence (or prefill only)
            if not mixed:  # a prefill-only step: the decoding sequences wait (SGLang)
                below_f = context_below_f = 0.0
                n_above = context_above = 0
            # The usual chunk, a whole fresh prompt alone, comes with its costs (`RequestState.whole_prompt_work`).
            rid, size = chunks[0]
            chunk_work = whole_prompt_work[rid] if size == to_prefill[rid] and len(chunks) == 1 else None
            if chunk_work is None:  # several chunks, a partial prompt or a recompute
                chunk_work = chunks_work(requests, chunks=chunks, timer=timer)
            seconds = mixed_step_seconds(mix_ops, chunk_work, step_tokens=max_batched_tokens - budget,
                static_seconds=static_seconds, seconds_per_flop=seconds_per_flop, chunks=len(chunks),
                seconds_per_byte=seconds_per_byte, per_sequence_seconds=per_sequence_seconds, below_f=below_f,
                context_below_f=context_below_f, n_above=n_above, context_above=context_above)
            sequence_seconds += seconds * n_running
            now += seconds
            busy_seconds += seconds
            if mixed:
                if n_decoding:
                    add_a(seconds)
                    add_b(0.0)
                    add_steps(1)
                    add_sequences(n_decoding)
                step += 1  # decoders advance one token; a prefill-only step leaves their step count alone
            elif n_decoding:
                stalls.append((seconds, n_decoding))
            n_ended, n_finished, kv_base_bytes, n_decoding, offset_sum, n_below, offset_sum_below = end_prefills(
                requests, chunks=chunks, now_seconds=now, step=step, shift=shift, window_tokens=window_tokens,
                sliding=sliding, reserve=reserve, kv_base_bytes=kv_base_bytes, kv_bytes_per_sequence=kv_bytes_per_sequence,
                kv_bytes_per_token=kv_bytes_per_token, finish_heap=finish_heap, cross_heap=cross_heap,
                n_decoding=n_decoding, offset_sum=offset_sum, n_below=n_below, offset_sum_below=offset_sum_below)
            n_running, n_done = n_running - n_finished, n_done + n_finished
            if n_ended:  # usually every prefill ended (one prompt per step): skip the filter
                prefilling = ([] if n_ended == len(prefilling)
                              else [r for r in prefilling if prefilled[r] < to_prefill[r]])
        else:  # decode-only segment until the next event: the next finish, window crossing or KV full
            top = finish_heap[0]
            while finish_key[top & mask] != top:  # drop stale entries
                pop(finish_heap)
                top = finish_heap[0]
            steps = (top >> shift) - step
            if sliding:
                top = cross_heap[0]
                while cross_key[top & mask] != top:
                    pop(cross_heap)
                    top = cross_heap[0]
                if (top >> shift) - step < steps:
                    steps = (top >> shift) - step
            if not reserve and kv_base_bytes + kv_step_bytes * (step + steps) > kv_capacity_bytes:
                steps = int((kv_capacity_bytes - kv_base_bytes) / kv_step_bytes) - step
                steps = steps if steps > 1 else 1
            if multi_step:  # the segment ends by the window's end, where the scheduler runs
                if window_left == 0:
                    window_left = scheduler_steps
                if steps > window_left:
                    steps = window_left
            a, b, steps, seconds = decode_segment(
                lines_by_batch[n_decoding], static_seconds=static_by_batch[n_decoding], steps=steps, below_f=below_f,
                context_below_f=context_below_f, n_above=n_above, context_above=context_above,
                gap_seconds=arrival[n_arrived] - now,
                cut_at_arrival=n_waiting == 0 and n_decoding < max_num_seqs and not multi_step)
            sequence_seconds += seconds * n_decoding
            if stalls:  # the first token after prefill-only steps: each decoder's gap holds the stalls it sat through
                append_stalled_segment(itl_groups, stalls, a_seconds=a, b_seconds=b, steps=steps, decoding=n_decoding)
                stalls = []
            else:
                add_a(a)
                add_b(b)
                add_steps(steps)
                add_sequences(n_decoding)
            now += seconds
            busy_seconds += seconds
            step += steps
            if multi_step:
                window_left -= steps

        while finish_heap[0] >> shift <= step:  # finishes due at this step count
            entry = pop(finish_heap)
            rid = entry & mask
            if finish_key[rid] == entry:  # it leaves the batch (decoding: its KV grew to offset - cached tokens)
                finish_key[rid] = cross_key[rid] = -1
                offset = join_context[rid] - join_step[rid]
                n_decoding -= 1
                offset_sum -= offset
                if below_window[rid]:
                    n_below -= 1
                    offset_sum_below -= offset
                kv_base_bytes -= (kv_charge[rid] if reserve
                                  else kv_bytes_per_sequence + kv_bytes_per_token * (offset - cached[rid]))
                state[rid] = IDLE
                n_running -= 1
                finish_seconds[rid] = now
                n_done += 1
        if sliding and cross_heap[0] >> shift <= step:  # contexts reaching the sliding window
            crossed, crossed_offsets = cross_window(requests, cross_heap=cross_heap, step=step, shift=shift, mask=mask)
            n_below -= crossed
            offset_sum_below -= crossed_offsets

    else:
        if n_done < n:
            raise runaway_error(max_events=max_events, now_seconds=now, done=n_done, requests=n)
    return engine_trace(requests, series=(series_seconds, series_waiting, series_running), itl_groups=itl_groups,
                        preemptions=preemptions, steps=step,
                        events=events, busy_seconds=busy_seconds, sequence_seconds=sequence_seconds)
