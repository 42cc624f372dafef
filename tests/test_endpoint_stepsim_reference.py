"""The endpoint step simulator (`measurements/endpoint_stepsim.simulate`) against a plain reference loop.

The simulator keeps its running batch as totals (context tokens, the step each request leaves at) instead of
walking every running sequence each step; the reference below walks them, as the module docstring states the
rules. Both must agree exactly (every latency, every send time, the throughput and the peak batch) on open and
closed loops, with and without a server limit, with one-token outputs and idle gaps.
"""

from __future__ import annotations

import heapq
import random

import pytest

from costmodel.measurements.endpoint_stepsim import SimulatedLoad, StepModel, simulate


def reference(model: StepModel, *, prompt_tokens: list[int], output_tokens: list[int],
              sent_seconds: list[float] | None = None, clients: int | None = None,
              first_sends_seconds: list[float] | None = None) -> SimulatedLoad:
    """Every step: admit waiting requests while fewer than max_num_seqs run, one token per running sequence,
    the step's seconds from its prefill tokens, decoding sequences and their context tokens."""
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
    first, done = [0.0] * count, [0.0] * count
    sent_all = sent + [0.0] * (count - len(sent))
    running: dict[int, int] = {}  # index -> tokens generated
    now, peak, finished = 0.0, 0, 0
    waiting: list[int] = []
    while finished < count:
        while pending and pending[0][0] <= now:
            waiting.append(heapq.heappop(pending)[1])
        if not running and not waiting:
            now = pending[0][0]
            continue
        admitted = waiting[: max(0, limit - len(running))]
        del waiting[: len(admitted)]
        context = sum(prompt_tokens[i] + generated for i, generated in running.items())
        now += model.step_seconds(prefill_tokens=sum(prompt_tokens[i] for i in admitted),
                                  decoding=len(running), context_tokens=context)
        for index in list(running):
            running[index] += 1
        for index in admitted:
            first[index] = now
            running[index] = 1
        peak = max(peak, len(running))
        for index in [i for i, generated in running.items() if generated >= output_tokens[i]]:
            del running[index]
            done[index] = now
            finished += 1
            if sent_seconds is None and next_index < count:
                sent_all[next_index] = now + model.request_fixed_seconds
                heapq.heappush(pending, (sent_all[next_index], next_index))
                next_index += 1
    fixed = model.request_fixed_seconds
    ttft = [first[i] - sent_all[i] + fixed for i in range(count)]
    tpot = [(done[i] - first[i]) / (output_tokens[i] - 1) for i in range(count) if output_tokens[i] >= 2]
    wall = max(done) + fixed if count else 0.0
    return SimulatedLoad(ttft_seconds=ttft, tpot_seconds=tpot, sent_seconds=sent_all,
                         done_seconds=[d + fixed for d in done],
                         output_tokens_per_second=sum(output_tokens) / wall if wall > 0 else 0.0, peak_running=peak)


def _case(seed: int) -> tuple[StepModel, dict[str, object]]:
    rng = random.Random(seed)
    count = rng.choice([1, 2, 7, 60, 200])
    model = StepModel(overhead_seconds=rng.choice([0.0, 1e-4, 0.02]), prefill_token_seconds=rng.choice([0.0, 1e-5, 3e-4]),
                      decode_sequence_seconds=rng.choice([0.0, 2e-4, 5e-3]),
                      context_token_seconds=rng.choice([0.0, 1e-7, 4e-6]),
                      request_fixed_seconds=rng.choice([0.0, 0.05]),
                      max_num_seqs=rng.choice([None, 1, 3, 16]))
    if model.step_seconds(prefill_tokens=1, decoding=0, context_tokens=0) == 0.0:
        model = StepModel(**{**model.__dict__, "overhead_seconds": 1e-3})  # a step that takes no time never ends
    kwargs: dict[str, object] = {
        "prompt_tokens": [rng.choice([1, rng.randint(1, 4000)]) for _ in range(count)],
        "output_tokens": [rng.choice([1, 2, rng.randint(1, 300)]) for _ in range(count)],
    }
    if rng.random() < 0.5:  # open loop, idle gaps between bursts
        now, sends = 0.0, []
        for _ in range(count):
            now += rng.choice([0.0, rng.expovariate(rng.choice([0.5, 20.0, 500.0]))])
            sends.append(now)
        kwargs["sent_seconds"] = sends
    else:
        kwargs["clients"] = rng.choice([1, 4, 64])
        kwargs["first_sends_seconds"] = sorted(rng.uniform(0, 1) for _ in range(rng.randint(0, 5)))
    return model, kwargs


@pytest.mark.parametrize("seed", range(60))
def test_simulate_matches_the_reference_loop(seed: int) -> None:
    model, kwargs = _case(seed)
    fast = simulate(model, **kwargs)  # type: ignore[arg-type]
    plain = reference(model, **kwargs)  # type: ignore[arg-type]
    assert fast == plain
