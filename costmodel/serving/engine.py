"""The discrete-event loop of one replica under continuous batching (vLLM / SGLang style scheduling).

Every engine step: each running decode sequence adds one token; sequences still in prefill, then waiting
requests (FCFS, preempted ones first), get prefill chunks from what is left of the token budget while KV
memory and the sequence cap allow. The step lasts the roofline time of that mix (`StepTimer`).

Speed: between events (an admissible arrival, a finish, a sliding-window crossing, KV full) a batch of
decode-only steps keeps its composition and only its contexts grow, by one token per sequence per step,
so the step time is linear in the step index (the roofline is a sum of per-op maxima of lines in the
context, and the segment is cut where an op changes regime). The loop advances the whole segment at once
with the arithmetic series, so its cost is per event, not per token.

KV memory (bytes per GPU): a request is charged `kv_bytes_per_sequence` + its uncached tokens x
`kv_bytes_per_token`. "preempt" (vLLM's default): admission needs room for the prompt; when the next
step's decode tokens do not fit, the most recently admitted request is preempted and recomputed later.
"reserve" (TensorRT-LLM's GUARANTEED_NO_EVICT): admission reserves prompt + output, never preempts.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from typing import Any

import numpy as np

from costmodel.serving.engine_io import EngineLimits, EngineTrace, KvPolicy, request_lists, runaway_error
from costmodel.serving.steptime import NO_WINDOW, StepTimer

__all__ = ["EngineLimits", "EngineTrace", "KvPolicy", "run_engine"]

_PREFILL, _DECODE = 1, 2


def run_engine(  # noqa: C901 -- one flat event loop on purpose: it runs ~1e5 times per simulation; helpers would cost calls
    timer: StepTimer,
    *,
    arrival_seconds: np.ndarray,
    prompt_tokens: np.ndarray,
    cached_tokens: np.ndarray,
    output_tokens: np.ndarray,
    limits: EngineLimits,
) -> EngineTrace:
    """Simulate the requests (sorted by arrival) to completion; each must fit in KV alone.

    One flat loop over locals on purpose: it runs a few hundred thousand times per simulation. Every
    float expression keeps the operand order of the plain formulas, so results are bit-for-bit stable.
    """
    n = len(arrival_seconds)
    # pre: tokens the next prefill computes; left: tokens still to emit.
    arr, cached, pre, left = request_lists(timer, arrival_seconds=arrival_seconds, prompt_tokens=prompt_tokens,
                                           cached_tokens=cached_tokens, output_tokens=output_tokens)
    pdone, gjoin, cjoin, state = [0] * n, [0] * n, [0] * n, [0] * n
    charge, below = [0.0] * n, [False] * n
    admitted, first, finish = [math.nan] * n, [math.nan] * n, [math.nan] * n

    budget_max, seq_cap, cap = limits.max_batched_tokens, limits.max_num_seqs, limits.kv_capacity_bytes
    kvt, kvs, reserve = limits.kv_bytes_per_token, limits.kv_bytes_per_sequence, limits.kv_policy == "reserve"
    max_events = limits.max_events
    window = timer.window_tokens
    sliding = window < NO_WINDOW  # without a window no context ever crosses it: no crossing events
    static, per_flop, per_byte = timer.static_seconds, timer.seconds_per_flop, timer.seconds_per_byte
    # Per dynamic op: its FLOPs and bytes slots in a chunk cost row, token tables, then FLOPs/bytes per
    # (below seq, below ctx token, above seq, above ctx token).
    mix_ops: list[tuple[Any, ...]] = [
        (2 * k, 2 * k + 1, op.flops_by_tokens, op.bytes_by_tokens, *fc, *bc)
        for k, (op, (fc, bc)) in enumerate(zip(timer.dynamic, timer.decode_coefficients, strict=True))
    ]
    dec_static, dec_lines = timer.decode_tables()
    chunk_cache, chunk_cost = timer.chunk_cache, timer.chunk_cost

    now, g, events, preemptions, busy, seq_area = 0.0, 0, 0, 0, 0.0, 0.0
    ia = iw = done = 0
    requeue: deque[int] = deque()
    prefilling: list[int] = []
    order: dict[int, None] = {}  # running requests in admission order (preemption victims from the end)
    n_dec = n_below = n_run = 0  # decoding, of them below the window, running (decoding + prefilling)
    s_off = sb_off = 0  # sum over decoders of (context at join - step at join); below-window ones in sb_off
    kv_off = 0.0  # KV in use = kv_off + kvt * n_dec * g (preempt); = kv_off (reserve)
    grow = 0.0  # preempt: KV the next step's decode tokens add on top of kv_off
    # Heap entries are ints (step count << shift | request): cheaper than tuples to build and compare, and
    # ordered like (step, request). An entry is live while fin_key/cross_key of its request holds it;
    # preemption and finishing clear the key, which invalidates what is left in the heaps.
    shift, mask = n.bit_length(), (1 << n.bit_length()) - 1
    never = (1 << 62) << shift | n  # sentinel (request n): a live entry no step count reaches
    fin_key, cross_key = [-1] * n + [never], [-1] * n + [never]
    fin_heap, cross_heap = [never], [never]  # finishes; contexts reaching the sliding window
    s_time: list[float] = []  # at every event: time, waiting requests, running sequences (flat lists: cheap)
    s_wait: list[int] = []
    s_run: list[int] = []

    push, pop, sqrt, ceil = heapq.heappush, heapq.heappop, math.sqrt, math.ceil  # local names: hot loop
    while done < n:
        events += 1
        if events > max_events:
            raise runaway_error(max_events=max_events, now_seconds=now, done=done, requests=n)
        while arr[ia] <= now:
            ia += 1
        n_wait = ia - iw + (len(requeue) if requeue else 0)
        s_time.append(now)
        s_wait.append(n_wait)
        s_run.append(n_run)
        if n_run == 0 and n_wait == 0:
            now = arr[ia]  # idle until the next arrival
            continue

        if not reserve:  # preempt (recompute) from the newest while the next step's decode tokens do not fit
            grow = kvt * n_dec * (g + 1)
            while kv_off + grow > cap and order:
                rid = next(reversed(order))
                del order[rid]
                if state[rid] == _PREFILL:
                    prefilling.remove(rid)
                    kv_off -= charge[rid]
                else:
                    off = cjoin[rid] - gjoin[rid]
                    n_dec -= 1
                    s_off -= off
                    if below[rid]:
                        n_below -= 1
                        sb_off -= off
                    kv_off -= kvs + kvt * (off - cached[rid])
                    fin_key[rid] = cross_key[rid] = -1
                    left[rid] -= g - gjoin[rid]
                    pre[rid] = off + g + 1 - cached[rid]  # prompt + every emitted token, recomputed
                    grow = kvt * n_dec * (g + 1)
                pdone[rid] = 0
                state[rid] = 0
                n_run -= 1
                requeue.appendleft(rid)
                preemptions += 1

        chunks: list[tuple[int, int]] = []
        if prefilling or n_wait:
            budget = budget_max - n_dec
            for rid in prefilling:
                if budget <= 0:
                    break
                size = pre[rid] - pdone[rid]
                size = size if size < budget else budget
                chunks.append((rid, size))
                budget -= size
            while (iw < ia or requeue) and budget > 0 and n_run < seq_cap:
                rid = requeue[0] if requeue else iw
                need = kvs + kvt * (pre[rid] + (left[rid] if reserve else 0))
                if kv_off + grow + need > cap:
                    break  # FCFS: the head waits for memory
                if requeue:
                    requeue.popleft()
                else:
                    iw += 1
                kv_off += need
                charge[rid] = need
                if admitted[rid] != admitted[rid]:
                    admitted[rid] = now
                state[rid] = _PREFILL
                order[rid] = None
                prefilling.append(rid)
                n_run += 1
                size = pre[rid] if pre[rid] < budget else budget
                chunks.append((rid, size))
                budget -= size

        n_above = n_dec - n_below
        ctx_below = sb_off + n_below * g
        ctx_above = s_off - sb_off + n_above * g if n_above else 0
        if chunks:  # one mixed step: prefill chunks + one token per decoding sequence
            tokens = budget_max - budget
            pf = per_flop[tokens]
            if len(chunks) == 1:
                rid, size = chunks[0]
                key = (size, cached[rid] + pdone[rid], pdone[rid] + size == pre[rid])
                add = chunk_cache.get(key)
                if add is None:
                    add = chunk_cost(key)
            else:
                add = ()
                for rid, size in chunks:
                    key = (size, cached[rid] + pdone[rid], pdone[rid] + size == pre[rid])
                    one = chunk_cache.get(key)
                    if one is None:
                        one = chunk_cost(key)
                    add = tuple(x + y for x, y in zip(add, one, strict=True)) if add else one
            dt = static[tokens]
            for kf, kb, tf, tb, fb0, fb1, fa0, fa1, mb0, mb1, ma0, ma1 in mix_ops:
                flops = tf[tokens] + add[kf] + fb0 * n_below + fb1 * ctx_below
                bytes_ = tb[tokens] + add[kb] + mb0 * n_below + mb1 * ctx_below
                if n_above:
                    flops += fa0 * n_above + fa1 * ctx_above
                    bytes_ += ma0 * n_above + ma1 * ctx_above
                flops *= pf
                bytes_ *= per_byte
                dt += flops if flops >= bytes_ else bytes_
            seq_area += n_run * dt
            now += dt
            busy += dt
            g += 1
            ended = 0  # prefills completed in this step
            for rid, size in chunks:
                pdone[rid] += size
                if pdone[rid] < pre[rid]:
                    continue
                ended += 1
                left[rid] -= 1  # the prefill's logits give a token
                if first[rid] != first[rid]:
                    first[rid] = now
                if left[rid] == 0:
                    kv_off -= charge[rid]
                    del order[rid]
                    state[rid] = 0
                    finish[rid] = now
                    n_run -= 1
                    done += 1
                    continue
                state[rid] = _DECODE
                gjoin[rid] = g
                context = cjoin[rid] = cached[rid] + pre[rid]
                if not reserve:  # from a fixed prefill charge to KV that grows with the step count
                    kv_off += kvs + kvt * (context - cached[rid] - g) - charge[rid]
                n_dec += 1
                s_off += context - g
                if context < window:
                    below[rid] = True
                    n_below += 1
                    sb_off += context - g
                    if sliding:
                        cross_key[rid] = entry = (g + window - context) << shift | rid
                        push(cross_heap, entry)
                else:
                    below[rid] = False
                fin_key[rid] = entry = (g + left[rid]) << shift | rid
                push(fin_heap, entry)
            if ended:  # usually every prefill ended (one prompt per step): skip the filter
                prefilling = [] if ended == len(prefilling) else [r for r in prefilling if pdone[r] < pre[r]]
        else:  # decode-only segment: step j lasts a + b * j until the next event
            top = fin_heap[0]
            while fin_key[top & mask] != top:
                pop(fin_heap)
                top = fin_heap[0]
            steps = (top >> shift) - g
            if sliding:
                top = cross_heap[0]
                while cross_key[top & mask] != top:
                    pop(cross_heap)
                    top = cross_heap[0]
                if (top >> shift) - g < steps:
                    steps = (top >> shift) - g
            if not reserve and kv_off + kvt * n_dec * (g + steps) > cap:  # KV fills up first
                steps = int((cap - kv_off) / (kvt * n_dec)) - g
                steps = steps if steps > 1 else 1
            a = dec_static[n_dec]
            b = 0.0
            for f0, fa, fb, fab, m0, ma, mb, mab in dec_lines[n_dec]:
                f0 += fb * ctx_below
                m0 += mb * ctx_below
                f1, m1 = fb * n_below, mb * n_below
                if n_above:
                    f0 += fa * n_above + fab * ctx_above
                    m0 += ma * n_above + mab * ctx_above
                    f1 += fab * n_above
                    m1 += mab * n_above
                last = steps - 1
                if (f0 >= m0) != (f0 + f1 * last >= m0 + m1 * last):  # regime change: stop at the crossing
                    steps = int((m0 - f0) / (f1 - m1)) + 1
                    steps = steps if steps > 1 else 1
                if f0 >= m0:
                    a += f0
                    b += f1
                else:
                    a += m0
                    b += m1
            dt = steps * (a + 0.5 * b * (steps - 1))
            # Stop once the next arrival can be admitted: at the first k steps that end at or after it. The end
            # grows with k (a > 0, b >= 0): k < steps only if the whole segment reaches it (arr[n] is inf).
            if dt >= arr[ia] - now and n_wait == 0 and n_dec < seq_cap:
                gap = arr[ia] - now
                if b > 0:
                    half = a - 0.5 * b
                    k = ceil((sqrt(half * half + 2.0 * b * gap) - half) / b)
                else:
                    k = ceil(gap / a)
                k = k if k > 1 else 1
                while k > 1 and (k - 1) * (a + 0.5 * b * (k - 2)) >= gap:  # fix float rounding of the root
                    k -= 1
                while k * (a + 0.5 * b * (k - 1)) < gap:
                    k += 1
                if k < steps:
                    steps = k
                    dt = steps * (a + 0.5 * b * (steps - 1))
            seq_area += n_dec * dt
            now += dt
            busy += dt
            g += steps

        while fin_heap[0] >> shift <= g:  # finishes due at this step count
            entry = pop(fin_heap)
            rid = entry & mask
            if fin_key[rid] != entry:
                continue
            fin_key[rid] = cross_key[rid] = -1
            off = cjoin[rid] - gjoin[rid]
            n_dec -= 1
            s_off -= off
            if below[rid]:
                n_below -= 1
                sb_off -= off
            kv_off -= charge[rid] if reserve else kvs + kvt * (off - cached[rid])
            del order[rid]
            state[rid] = 0
            finish[rid] = now
            n_run -= 1
            done += 1
        while sliding and cross_heap[0] >> shift <= g:  # contexts reaching the sliding window
            entry = pop(cross_heap)
            rid = entry & mask
            if cross_key[rid] == entry:
                cross_key[rid] = -1
                below[rid] = False
                n_below -= 1
                sb_off -= cjoin[rid] - gjoin[rid]

    return EngineTrace(
        admitted_seconds=np.asarray(admitted), first_token_seconds=np.asarray(first), finish_seconds=np.asarray(finish),
        preemptions=preemptions, steps=g, events=events, busy_seconds=busy, sequence_seconds=seq_area,
        series_seconds=np.asarray(s_time, dtype=np.float64), series_waiting=np.asarray(s_wait, dtype=np.int64),
        series_running=np.asarray(s_run, dtype=np.int64),
    )
