"""A continuous-batching simulator driven by a fitted, engine-agnostic step-time model.

One engine step serves every running sequence one token and prefills the newly admitted prompts whole:

    step_seconds = overhead + prefill_token * (prompt tokens admitted this step)
                 + decode_sequence * (sequences decoding) + context_token * (their context tokens)

Requests arrive (open loop: given send times; closed loop: N clients, each sending again when its last
token lands), wait for the next step boundary, are admitted while fewer than `max_num_seqs` run, get their
first token at the end of their prefill step and one more per step after. `request_fixed_seconds` (client
and network time) is added to each TTFT and E2E. Same scheduling idea as vLLM's continuous batching
(Kwon et al. 2023, "Efficient Memory Management for LLM Serving with PagedAttention", SOSP), simplified:
no chunked prefill, no preemption.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, kw_only=True)
class StepModel:
    """Fitted step-time coefficients (seconds, seconds per token or per sequence) and the server limit."""

    overhead_seconds: float
    prefill_token_seconds: float
    decode_sequence_seconds: float
    context_token_seconds: float
    request_fixed_seconds: float
    max_num_seqs: int | None  # None: no limit seen

    def step_seconds(self, *, prefill_tokens: float, decoding: float, context_tokens: float) -> float:
        """Duration of one engine step."""
        return (self.overhead_seconds + self.prefill_token_seconds * prefill_tokens
                + self.decode_sequence_seconds * decoding + self.context_token_seconds * context_tokens)


@dataclass(frozen=True, kw_only=True)
class SimulatedLoad:
    """Per-request latencies of one simulated load (seconds) and its output throughput."""

    ttft_seconds: list[float]
    tpot_seconds: list[float]
    sent_seconds: list[float]
    done_seconds: list[float]
    output_tokens_per_second: float
    peak_running: int

    def percentile(self, name: str, q: float) -> float:
        """Percentile `q` of ttft or tpot (numpy's linear interpolation)."""
        values = self.ttft_seconds if name == "ttft" else self.tpot_seconds
        return float(np.percentile(values, q)) if values else 0.0


_MAX_STEPS = 2_000_000  # a runaway guard: far above any sweep or capacity search here


def _decode_steps(model: StepModel, *, now: float, context: int, steps: int, running: int, until_step: int,
                  pending: list[tuple[float, int]]) -> tuple[float, int, int]:
    """Decode-only steps (nothing admitted, nothing ends) from `steps` until `until_step` or until a request
    arrives: (now, context, steps) after them. Each step's seconds is `StepModel.step_seconds` with no prefill,
    the same operations in the same order (its constant part added first, as there), so the clock has the same
    bits as stepping one by one."""
    constant = (model.overhead_seconds + model.prefill_token_seconds * 0) + model.decode_sequence_seconds * running
    per_context = model.context_token_seconds
    arrives = pending[0][0] if pending else math.inf
    while steps < until_step and arrives > now:
        now += constant + per_context * context
        context += running
        steps += 1
    return now, context, steps


def simulate(
    model: StepModel,
    *,
    prompt_tokens: list[int],
    output_tokens: list[int],
    sent_seconds: list[float] | None = None,
    clients: int | None = None,
    first_sends_seconds: list[float] | None = None,
) -> SimulatedLoad:
    """Simulate the requests (open loop when `sent_seconds`, else closed loop with `clients`, whose first
    requests go at `first_sends_seconds` (the measured ones keep clients out of lockstep), default 0)."""
    count = len(prompt_tokens)
    limit = model.max_num_seqs or count
    if sent_seconds is not None:
        sent = list(sent_seconds)
    else:
        starts = min(clients or 1, count)
        sent = sorted(first_sends_seconds or [])[:starts]
        sent += [0.0] * (starts - len(sent))
    pending = [(time, index) for index, time in enumerate(sent)]
    heapq.heapify(pending)
    next_index = len(sent)
    first = [0.0] * count
    done = [0.0] * count
    sent_all = sent + [0.0] * (count - len(sent))
    # The running batch is kept as totals, not walked per step: a request admitted at step s has emitted its
    # k-th token at step s + k - 1, so it leaves at step s + max(output, 1) - 1 (`leaving`, in admission order
    # within a step; `leave_steps`: those steps, a heap), and the context sum grows by one token per running
    # sequence per step (integers: the same sums as adding prompt + generated over the batch). Steps that
    # admit nothing and end no request run in a short loop of their own (`_decode_steps`), with the same
    # float expression per step. tests/test_endpoint_stepsim_reference.py checks it against the plain loop.
    leaving: dict[int, list[int]] = {}
    leave_steps: list[int] = []
    n_running = context = 0
    now, steps, peak, finished = 0.0, 0, 0, 0
    waiting: list[int] = []
    while finished < count and steps < _MAX_STEPS:
        while pending and pending[0][0] <= now:
            waiting.append(heapq.heappop(pending)[1])
        if not n_running and not waiting:
            now = pending[0][0]
            continue
        if n_running and (not waiting or n_running >= limit) and leave_steps[0] > steps:
            now, context, steps = _decode_steps(model, now=now, context=context, steps=steps, running=n_running,
                                                until_step=min(leave_steps[0], _MAX_STEPS), pending=pending)
            continue
        admitted = waiting[: max(0, limit - n_running)]
        del waiting[: len(admitted)]
        prefill = sum(prompt_tokens[i] for i in admitted)
        now += model.step_seconds(prefill_tokens=prefill, decoding=n_running, context_tokens=context)
        context += n_running + prefill + len(admitted)  # each running and each admitted sequence: one token more
        for index in admitted:
            first[index] = now
            at = steps + max(output_tokens[index], 1) - 1
            if at in leaving:
                leaving[at].append(index)
            else:
                leaving[at] = [index]
                heapq.heappush(leave_steps, at)
        n_running += len(admitted)
        peak = max(peak, n_running)
        if leave_steps and leave_steps[0] == steps:
            heapq.heappop(leave_steps)
            for index in leaving.pop(steps):
                done[index] = now
                finished += 1
                n_running -= 1
                context -= prompt_tokens[index] + max(output_tokens[index], 1)
                if sent_seconds is None and next_index < count:  # the client sends its next request
                    sent_all[next_index] = now + model.request_fixed_seconds
                    heapq.heappush(pending, (sent_all[next_index], next_index))
                    next_index += 1
        steps += 1
    fixed = model.request_fixed_seconds
    ttft = [first[i] - sent_all[i] + fixed for i in range(count)]
    tpot = [(done[i] - first[i]) / (output_tokens[i] - 1) for i in range(count) if output_tokens[i] >= 2]
    wall = max(done) + fixed if count else 0.0
    return SimulatedLoad(
        ttft_seconds=ttft, tpot_seconds=tpot, sent_seconds=sent_all, done_seconds=[d + fixed for d in done],
        output_tokens_per_second=sum(output_tokens) / wall if wall > 0 else 0.0, peak_running=peak,
    )
