"""Preemption under KV pressure (vLLM's recompute mode): the newest running request leaves the batch.

Called by the engine loop (`costmodel.serving.engine.run_engine`) only when the next step's decode tokens
do not fit in KV memory, so it is a function of its own (a call per preemption is cheap; per event it is not).
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

from costmodel.serving.engine_requests import DECODE, IDLE, PREFILL, RequestState


class Preempted(NamedTuple):
    """What the loop's running totals lose when a request leaves the batch (each 0 where it does not count)."""

    decoding: int  # 1 if it was decoding (else still in prefill)
    below_window: int  # 1 if decoding with its context below the sliding window
    offset: int  # its join_context - join_step (tokens; 0 unless decoding)
    below_offset: int  # the same, if below the window
    kv_bytes: float  # the KV it held (bytes per GPU)


def preempt_newest(
    requests: RequestState, *, step: int, running: list[int], prefilling: list[int], requeued: deque[int],
    reserve: bool, kv_bytes_per_sequence: float, kv_bytes_per_token: float,
) -> Preempted:
    """Preempt the most recently admitted running request: it waits first in line, to be recomputed.

    `running` is in admission order and may end with finished requests (the loop leaves them there): they
    are dropped on the way. A decoding victim's next prefill recomputes its prompt and every token emitted
    but the last (whose KV is unwritten), so its whole-prompt chunk costs no longer apply.
    """
    state = requests.state
    rid = running.pop()
    while state[rid] == IDLE:  # finished since its admission
        rid = running.pop()
    decoding = state[rid] == DECODE
    offset, below, kv_bytes = 0, False, requests.kv_charge[rid]
    if state[rid] == PREFILL:
        prefilling.remove(rid)
    else:
        offset = requests.join_context[rid] - requests.join_step[rid]
        below = requests.below_window[rid]
        requests.finish_key[rid] = requests.cross_key[rid] = -1  # its heap entries are stale from now on
        requests.to_emit[rid] -= step - requests.join_step[rid]
        requests.to_prefill[rid] = offset + step + 1 - requests.cached[rid]
        requests.whole_prompt_work[rid] = None
        if not reserve:
            kv_bytes = kv_bytes_per_sequence + kv_bytes_per_token * (offset - requests.cached[rid])
    state[rid] = IDLE
    requests.prefilled[rid] = 0
    requeued.appendleft(rid)
    return Preempted(decoding=int(decoding), below_window=int(below), offset=offset,
                     below_offset=offset if below else 0, kv_bytes=kv_bytes)
