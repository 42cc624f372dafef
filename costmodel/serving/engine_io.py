"""Inputs and outputs of the serving engine loop (`costmodel.serving.engine.run_engine`)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

import numpy as np

from costmodel.errors import CostmodelError
from costmodel.serving.engine_itl import StepGroupLists
from costmodel.serving.engine_requests import RequestState
from costmodel.serving.results import QueueSeries

KvPolicy = Literal["preempt", "reserve"]


@dataclass(frozen=True)
class EngineLimits:
    """Scheduler settings of the simulated engine."""

    max_batched_tokens: int  # token budget per step (decode tokens + prefill chunks)
    max_num_seqs: int  # running sequences at most
    kv_capacity_bytes: float  # per GPU, for the requests' own KV (shared prefix pool already taken out)
    kv_bytes_per_token: float  # per GPU
    kv_bytes_per_sequence: float  # per GPU, charged once per running sequence (sliding-window layers)
    kv_policy: KvPolicy
    max_events: int  # loop iterations before giving up
    # Multi-step scheduling (vLLM v0.6 `--num-scheduler-steps K`): once decoding starts, the scheduler runs
    # again only after K decode steps, so a request arriving mid-window waits for the window's end. 1 =
    # a scheduling decision every step (every engine profile today).
    scheduler_steps: int = 1
    # False (SGLang's default): a step with prefill work runs only prefill; decoding sequences wait for it
    # and emit no token that step. True: prefill chunks and one token per decoding sequence share a step.
    mixed_prefill_decode: bool = True
    # Called with (now, the request lists) `early_stop.CHECK_EVERY_EVENTS` events in, then as many events on as
    # it returns: raises `early_stop.SloMissed` to stop a run whose SLO miss is already certain (None: never).
    miss_check: Callable[[float, RequestState], int] | None = None


@dataclass(frozen=True)
class EngineTrace:
    """Per-request times (s, NaN when it never happened) and engine totals."""

    admitted_seconds: np.ndarray  # first time the request was scheduled
    first_token_seconds: np.ndarray
    finish_seconds: np.ndarray
    preemptions: int
    steps: int
    events: int
    busy_seconds: float
    sequence_seconds: float  # integral of running sequences over time (mean batch = this / busy)
    series: QueueSeries  # waiting and running at every event (arrays on first use)
    max_running: int  # most sequences running at any event
    # The step groups as four lists (a seconds, b seconds, steps, decoding sequences): `steps` engine steps,
    # step j lasting a + b * j, each emitting one token per decoding sequence: the inter-token gaps (`itl.py`)
    step_groups: StepGroupLists = ((), (), (), ())


def runaway_error(*, max_events: int, now_seconds: float, done: int, requests: int) -> CostmodelError:
    """The message of a run stopped at its event bound."""
    return CostmodelError(
        f"simulation stopped after {max_events:,} engine events at {now_seconds:,.1f} simulated seconds with "
        f"{done:,} of {requests:,} requests finished: the replica is far past saturation or the requests are "
        "extreme; lower --requests or --rate, or shorten the token lengths"
    )


def float_array(values: list[float]) -> np.ndarray:
    """A list of Python floats (or ints) as float64 (`fromiter`: about a quarter cheaper than `asarray`)."""
    return np.fromiter(values, dtype=np.float64, count=len(values))


def engine_trace(
    requests: RequestState, *, series: tuple[list[float], list[int], list[int]],
    itl_groups: tuple[list[float], list[float], list[int], list[int]], preemptions: int, steps: int, events: int,
    busy_seconds: float, sequence_seconds: float,
) -> EngineTrace:
    """The trace of a finished loop; `series` holds (seconds, waiting, running) per event, as three lists.

    The per-event lists stay lists (`QueueSeries`, `SimulationResult.itl_groups` build arrays on first use).
    """
    seconds, waiting, running = series
    return EngineTrace(
        admitted_seconds=float_array(requests.admitted_seconds),
        first_token_seconds=float_array(requests.first_token_seconds),
        finish_seconds=float_array(requests.finish_seconds), preemptions=preemptions, steps=steps, events=events,
        busy_seconds=busy_seconds, sequence_seconds=sequence_seconds,
        series=QueueSeries(seconds_by_event=seconds, waiting_by_event=waiting, running_by_event=running),
        max_running=max(running, default=0), step_groups=itl_groups,
    )


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off for the engine loop, restored after (as it was).

    The loop builds no reference cycles, so collections during it free nothing; they would only walk its
    per-request and per-event lists as they grow (callgrind: ~2% of a 10,000-request run).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
